"""EMBEDDING_LOOKUP against LiteRT's two kernel sets: float32 and integer row copies, and
the dynamic-range (hybrid) int8 / uint8 table with a float32 output (per tensor, per
row) -- all bit-identical."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import DTypeError, ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.versions import T, TensorSig

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, run_edgelite, run_litert


# op_version.cc, EMBEDDING_LOOKUP: an int4 table or one quantized per channel (per row) 4,
# else 1 (collected by test_versions.py)
_IDS = TensorSig(T.INT32, (3,))
VERSION_CASES = (
    ("EMBEDDING_LOOKUP", [_IDS, TensorSig(T.FLOAT32, (4, 2))], 1),
    ("EMBEDDING_LOOKUP", [_IDS, TensorSig(T.INT8, (4, 2), scales=1)], 1),
    ("EMBEDDING_LOOKUP", [_IDS, TensorSig(T.INT8, (4, 2), scales=4)], 4),
    ("EMBEDDING_LOOKUP", [_IDS, TensorSig(T.INT4, (4, 2), scales=1)], 4),
)


def model(table, quant=None, out_dtype=None, n=6, out_quant=None) -> bytes:
    m = QuantModel()
    ids = m.input("ids", [n], np.int32)
    t = m.const("table", table, table.dtype, **(quant or {}))
    out_dtype = out_dtype or table.dtype
    m.output("y", [n] + list(table.shape[1:]), out_dtype, **(out_quant or {}))
    m.op("EMBEDDING_LOOKUP", [ids, t], m.outputs)
    return m.build()


def check(data: bytes, ids) -> np.ndarray:
    for k in KERNEL_SETS:
        (expected,) = run_litert(data, [ids], k)
        (ours,) = run_edgelite(data, [ids], k)
        assert ours.dtype == expected.dtype and ours.shape == expected.shape
        assert np.array_equal(ours, expected), k
    return ours


def ids_for(rng, rows, n=6):
    ids = rng.integers(0, rows, n).astype(np.int32)
    ids[0], ids[-1] = 0, rows - 1  # both ends of the table
    return ids


@pytest.mark.parametrize("shape", [(10, 3), (7, 4, 5), (3, 1), (12, 2, 2, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.int32])
def test_copies(rng, shape, dtype):
    if dtype == np.float32:
        table = rng.standard_normal(shape).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        table = rng.integers(max(info.min, -1000), min(info.max, 1000) + 1, shape).astype(dtype)
    quant = dict(scale=0.05, zp=3) if dtype in (np.int8, np.uint8) else None
    out_quant = dict(scale=0.1, zp=-2) if dtype == np.int8 else None  # copied regardless
    out = check(model(table, quant, out_quant=out_quant), ids_for(rng, shape[0]))
    assert out.dtype == dtype


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("per_row", [False, True])
@pytest.mark.parametrize("shape", [(10, 6), (5, 2, 3)])
def test_hybrid(rng, dtype, per_row, shape):
    info = np.iinfo(dtype)
    table = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    scale = rng.uniform(0.001, 0.1, shape[0]) if per_row else rng.uniform(0.001, 0.1)
    quant = dict(scale=np.float32(scale), zp=np.zeros(np.size(scale), int))
    out = check(model(table, quant, np.float32), ids_for(rng, shape[0]))
    assert out.dtype == np.float32


@pytest.mark.parametrize("bad", [10, -1])
def test_out_of_range_id(rng, bad):
    data = model(rng.standard_normal((10, 3)).astype(np.float32))
    ids = np.array([1, 2, bad, 3, 4, 5], np.int32)
    interp = Interpreter(model_content=data)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], ids)
    with pytest.raises(ShapeError, match=rf"EMBEDDING_LOOKUP.*id {bad} is out of bounds; "
                                         r"ids must lie in \[0, 10\)"):
        interp.invoke()
    with pytest.raises(RuntimeError, match="index out of bounds"):  # LiteRT errors too
        run_litert(data, [ids], "reference")


def test_refusals(rng):
    table = rng.integers(-5, 5, (4, 3)).astype(np.int8)
    with pytest.raises(UnsupportedOpError, match=r"dynamic-range \(hybrid\).*zero point 0"):
        run_edgelite(model(table, dict(scale=0.1, zp=1), np.float32), [np.zeros(6, np.int32)],
                 "reference")
    with pytest.raises(DTypeError, match="output .* is int32 but the table is float32"):
        run_edgelite(model(rng.standard_normal((4, 3)).astype(np.float32), out_dtype=np.int32),
                 [np.zeros(6, np.int32)], "reference")
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        run_edgelite(model(np.zeros(4, np.float32)), [np.zeros(6, np.int32)], "reference")
