"""Structural ops on quantized int8 / uint8 / int16 tensors: values move unchanged, so
each output keeps its input's parameters (TFLite's quantization spec). Bit-exact with
both LiteRT kernel sets (XNNPACK takes several of them in the default set), over random
data and parameters; the ops TFLite refuses with unequal parameters are refused too
(same_params.checked)."""

from dataclasses import dataclass, field

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, run_edgelite

I32 = np.int32
DATA = "data"  # an operand that is a (quantized) graph input


@dataclass
class Case:
    op: str
    operands: list  # DATA, or a constant array (int32 unless given another dtype)
    outputs: list  # output shapes (quantized like the data) or (shape, dtype) unquantized
    shape: tuple  # every DATA operand's shape
    dtypes: tuple = (np.int8, np.uint8, np.int16)
    options: dict = field(default_factory=dict)
    version: int = 1

class QConst(np.ndarray):
    """A constant operand of the data's type and parameters (PADV2's value)."""


def qconst(value) -> QConst:
    return np.asarray(value).view(QConst)


CASES = {
    "SLICE": Case("SLICE", [DATA, np.array([0, 1, 1]), np.array([2, 3, -1])], [(2, 3, 3)],
                  (2, 5, 4)),
    "STRIDED_SLICE": Case("STRIDED_SLICE", [DATA, np.array([0, 1, 0]), np.array([2, 6, 4]),
                                            np.array([1, 2, -1])], [(2, 3, 3)], (2, 6, 4),
                          options=dict(end_mask=4)),
    "STRIDED_SLICE_shrink": Case("STRIDED_SLICE", [DATA, np.array([1, 0]), np.array([2, 3]),
                                                   np.array([1, 1])], [(3, 4)], (2, 3, 4),
                                 options=dict(shrink_axis_mask=1)),
    "PACK": Case("PACK", [DATA, DATA], [(2, 2, 3)], (2, 3),
                 options=dict(values_count=2, axis=1)),
    "UNPACK": Case("UNPACK", [DATA], [(2, 4)] * 3, (2, 3, 4), options=dict(num=3, axis=1)),
    "TILE": Case("TILE", [DATA, np.array([2, 1, 3])], [(4, 3, 6)], (2, 3, 2)),
    "BROADCAST_TO": Case("BROADCAST_TO", [DATA, np.array([2, 4, 3])], [(2, 4, 3)], (1, 3),
                         version=2),
    "PADV2": Case("PADV2", [DATA, np.array([[1, 0], [0, 2]]), qconst(5)], [(3, 5)], (2, 3)),
    "MIRROR_PAD": Case("MIRROR_PAD", [DATA, np.array([[0, 0], [1, 1], [2, 1]])],
                       [(2, 5, 7)], (2, 3, 4), options=dict(mode=0)),
    "MIRROR_PAD_symmetric": Case("MIRROR_PAD", [DATA, np.array([[1, 2], [0, 3]])], [(6, 7)],
                                 (3, 4), options=dict(mode=1)),
    "DEPTH_TO_SPACE": Case("DEPTH_TO_SPACE", [DATA], [(1, 4, 4, 2)], (1, 2, 2, 8),
                           dtypes=(np.int8, np.uint8), options=dict(block_size=2)),
    "SPACE_TO_DEPTH": Case("SPACE_TO_DEPTH", [DATA], [(1, 2, 2, 8)], (1, 4, 4, 2),
                           dtypes=(np.int8, np.uint8), options=dict(block_size=2)),
    "SPACE_TO_BATCH_ND": Case("SPACE_TO_BATCH_ND", [DATA, np.array([2, 2]),
                                                    np.array([[0, 0], [1, 1]])],
                              [(4, 2, 3, 2)], (1, 4, 4, 2)),
    "BATCH_TO_SPACE_ND": Case("BATCH_TO_SPACE_ND", [DATA, np.array([2, 2]),
                                                    np.array([[0, 0], [0, 1]])],
                              [(1, 4, 3, 2)], (4, 2, 2, 2)),
    "GATHER": Case("GATHER", [DATA, np.array([2, 0, 2])], [(3, 3)], (4, 3),
                   options=dict(axis=0)),
    "SPLIT": Case("SPLIT", [np.array(1), DATA], [(2, 2)] * 3, (2, 6),
                  options=dict(num_splits=3)),
    "SPLIT_V": Case("SPLIT_V", [DATA, np.array([1, -1]), np.array(1)], [(2, 1), (2, 5)],
                    (2, 6), options=dict(num_splits=2)),
    "TRANSPOSE": Case("TRANSPOSE", [DATA, np.array([2, 0, 1])], [(4, 2, 3)], (2, 3, 4)),
    "REVERSE_V2": Case("REVERSE_V2", [DATA, np.array([1])], [(2, 3, 4)], (2, 3, 4)),
    # Not value moves, but they read or write 8 / 16-bit quantized tensors as integers.
    "ARG_MAX": Case("ARG_MAX", [DATA, np.array(1)], [((2, 4), I32)], (2, 5, 4),
                    dtypes=(np.int8, np.uint8), options=dict(output_type=2)),
    "ARG_MIN": Case("ARG_MIN", [DATA, np.array(-1)], [((2, 5), I32)], (2, 5, 4),
                    dtypes=(np.int8, np.uint8), options=dict(output_type=2)),
    "CAST_to_float": Case("CAST", [DATA], [((2, 3), np.float32)], (2, 3)),
    "CAST_to_int32": Case("CAST", [DATA], [((2, 3), I32)], (2, 3)),
    "FILL": Case("FILL", [np.array([2, 3]), qconst(-7)], [(2, 3)], (0,), dtypes=(np.int8,
                                                                                np.int16)),
}


def build(case: Case, dtype, scale, zp):
    m = QuantModel()
    ins = []
    for i, operand in enumerate(case.operands):
        if isinstance(operand, str):
            ins.append(m.input(f"x{i}", case.shape, dtype, scale, zp))
        elif isinstance(operand, QConst):
            ins.append(m.const(f"c{i}", np.asarray(operand), dtype, scale, zp))
        else:
            ins.append(m.const(f"c{i}", operand, I32))
    outs = []
    for i, out in enumerate(case.outputs):
        if isinstance(out[-1], type):
            outs.append(m.output(f"y{i}", out[0], out[1]))
        else:
            outs.append(m.output(f"y{i}", out, dtype, scale, zp))
    m.op(case.op, ins, outs, version=case.version, **case.options)
    return m.build()


PARAMS = [(name, dtype) for name, case in CASES.items() for dtype in case.dtypes]


@pytest.mark.parametrize("name,dtype", PARAMS, ids=[f"{n}-{d.__name__}" for n, d in PARAMS])
@pytest.mark.parametrize("seed", range(2))
def test_value_moves_bit_exact(name, dtype, seed):
    rng = np.random.default_rng(seed)
    case = CASES[name]
    scale = float(np.float32(rng.uniform(0.01, 0.2)))
    zp = 0 if dtype == np.int16 else int(rng.integers(np.iinfo(dtype).min // 2,
                                                      np.iinfo(dtype).max // 2))
    feeds = [full_range(rng, case.shape, dtype) for op in case.operands if isinstance(op, str)]
    assert_bit_exact(build(case, dtype, scale, zp), feeds)


# TFLite refuses unequal input / output parameters here (pack.cc, unpack.cc, mirror_pad.cc,
# space_to_batch_nd.cc, batch_to_space_nd.cc, pad.cc's constant value, fill.cc's value).
@pytest.mark.parametrize("name", ["PACK", "UNPACK", "MIRROR_PAD", "SPACE_TO_BATCH_ND",
                                  "BATCH_TO_SPACE_ND", "PADV2", "FILL"])
def test_unequal_parameters_are_refused(name):
    case = CASES[name]
    m = QuantModel()
    ins = []
    for i, operand in enumerate(case.operands):
        if isinstance(operand, str):
            ins.append(m.input(f"x{i}", case.shape, np.int8, 0.1, 3))
        elif isinstance(operand, QConst):  # the value differs from the output
            ins.append(m.const(f"c{i}", np.asarray(operand), np.int8, 0.1, 4))
        else:
            ins.append(m.const(f"c{i}", operand, I32))
    value = any(isinstance(op, QConst) for op in case.operands)
    outs = [m.output(f"y{i}", out, np.int8, 0.1 if value else 0.2, 3)
            for i, out in enumerate(case.outputs)]
    m.op(case.op, ins, outs, version=case.version, **case.options)
    feeds = [np.zeros(case.shape, np.int8) for op in case.operands if isinstance(op, str)]
    with pytest.raises(ShapeError, match="quantization parameters"):
        run_edgelite(m.build(), feeds, "reference")


CASTS = [(src, dst) for src in (np.float32, np.int32, np.int16, np.uint8)
         for dst in (np.int8, np.uint8, np.int16) if src != dst]


@pytest.mark.parametrize("src,dst", CASTS, ids=[f"{s.__name__}-{d.__name__}" for s, d in CASTS])
def test_cast_to_8_and_16_bit(src, dst, rng):
    """CAST converts values (no quantization parameters are read or applied: cast.cc),
    in range of the destination so that C++'s conversion is defined."""
    lo = max(np.iinfo(dst).min, -100 if src != np.uint8 else 0)
    x = rng.integers(lo, 100, size=(3, 4)).astype(src)
    m = QuantModel()
    xi = m.input("x", x.shape, src)
    y = m.output("y", x.shape, dst)
    m.op("CAST", [xi], [y])
    assert_bit_exact(m.build(), [x])
