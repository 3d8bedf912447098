"""TOPK_V2 (interpreter/kernels/topk_v2.py) bit-exact with both LiteRT kernel sets: every
value type LiteRT takes (quantized int8 / uint8 too), int32 / int16 k and indices, k from 0
to the row size, rows full of ties (LiteRT: larger first, equal values by lower index)."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, Interpreter, ShapeError, UnsupportedOpError
from edgelite.interpreter.batch_split import unsplittable
from edgelite.interpreter.kernels.versions import T, TensorSig

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams

VALUE_TYPES = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64]


def expected(x, k):
    """Per row: the indices of the k largest values, larger first, equal values by lower
    index (topk_v2.cc compare_fun), with Python numbers so nothing wraps."""
    rows = x.reshape(-1, x.shape[-1])
    idx = np.array([sorted(range(len(row)), key=lambda i: (-row[i].item(), i))[:k]
                    for row in rows], np.int32).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, axis=-1), idx


def top_k(x, k, k_type=np.int32, index_type=np.int32):
    """Both kernel sets against LiteRT's; returns edgelite's (values, indices)."""
    shape = x.shape[:-1] + (k,)
    model, feeds = op_model("TOPK_V2", [x, const(np.array([k], k_type))],
                            [(shape, x.dtype), (shape, index_type)])
    return assert_bit_exact(model, feeds)["reference"]


def ties(rng, shape, dtype):
    """Values from a handful of levels: every row has many equal values."""
    levels = np.array([0, 1, 2, 3, 100] if dtype == np.uint8 else [-128, -3, 0, 2, 127], dtype)
    return levels[rng.integers(0, len(levels), shape)]


@pytest.mark.parametrize("dtype", VALUE_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("k", [0, 1, 5, 12])
def test_ties_break_by_lower_index(rng, dtype, k):
    x = ties(rng, (3, 2, 12), dtype)
    values, indices = top_k(x, k)
    want_values, want_indices = expected(x, k)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


@pytest.mark.parametrize("k_type, index_type", [(np.int16, np.int32), (np.int32, np.int16),
                                                (np.int16, np.int16)])
def test_int16_k_and_indices(rng, k_type, index_type):
    x = rng.standard_normal((4, 30)).astype(np.float32)
    values, indices = top_k(x, 7, k_type, index_type)
    assert indices.dtype == index_type
    np.testing.assert_array_equal(indices, expected(x, 7)[1])


def test_long_rows_with_signed_zeros(rng):
    """-0.0 and +0.0 are equal values: the lower index comes first, its sign kept."""
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    x[:, ::7], x[:, ::11] = 0.0, -0.0
    x[:, 500:] = np.abs(x[:, 500:])
    values, indices = top_k(x, 800)
    np.testing.assert_array_equal(indices, expected(x, 800)[1])
    assert values.tobytes() == np.take_along_axis(x, indices, axis=1).tobytes()


def test_rank_one(rng):
    x = ties(rng, (9,), np.int32)
    np.testing.assert_array_equal(top_k(x, 4)[1], expected(x, 4)[1])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantized_values_are_selected_unchanged(rng, dtype):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("x", (5, 16), dtype, *q)
    k = m.const("k", [6], np.int32)
    m.op("TOPK_V2", [x, k], [m.output("values", (5, 6), dtype, *q),
                             m.output("indices", (5, 6), np.int32)])
    feed = full_range(rng, (5, 16), dtype)
    values, indices = assert_bit_exact(m.build(), [feed])["default"]
    want_values, want_indices = expected(feed, 6)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


def test_nan_ranks_above_every_number():
    """Where LiteRT's order is undefined (NaN compares neither way), edgelite's is fixed:
    NaN first, then the numbers as for any row."""
    x = np.array([[1.0, np.nan, 3.0, -np.inf, np.nan, np.inf]], np.float32)
    values, indices = run_op("TOPK_V2", [x, const([6], np.int32)],
                             [((1, 6), np.float32), ((1, 6), np.int32)])
    np.testing.assert_array_equal(indices, [[1, 4, 5, 2, 0, 3]])
    np.testing.assert_array_equal(values, [[np.nan, np.nan, np.inf, 3.0, 1.0, -np.inf]])


@pytest.mark.parametrize("shape, reason", [((4, 9), None),
                                           ((4,), "works along the batch axis")])
def test_batch_split_only_where_rows_are_samples(shape, reason):
    """A batch of 4 splits by sample at rank 2; a rank-1 input is one row of 4 samples
    (with k = 4 every tensor still leads with the batch)."""
    k = 4 if len(shape) == 1 else 2
    out = shape[:-1] + (k,)
    model, _ = op_model("TOPK_V2", [np.zeros(shape, np.float32), const([k], np.int32)],
                        [(out, np.float32), (out, np.int32)])
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    a = interp._alloc
    found = unsplittable(interp._subgraph, a.shapes, a.arrays, a.constants, batch=4)
    assert found is None if reason is None else reason in found


def test_refusals(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)

    def model(k=const([2], np.int32), index_type=np.int32, values=x):
        return run_op("TOPK_V2", [values, k], [((3, 2), values.dtype), ((3, 2), index_type)])

    for k in (6, -1):
        with pytest.raises(ShapeError, match=rf"TOPK_V2.*k = {k} must lie in \[0, 5\], the size "
                           r"of the last dimension of \[3, 5\]"):
            model(const([k], np.int32))
    values, indices = model(np.array([2], np.int32))  # a computed k: prepared at invoke
    np.testing.assert_array_equal(indices, np.argsort(-x, axis=1, kind="stable")[:, :2])
    with pytest.raises(UnsupportedOpError, match=r"k tensor 'const1' has type int64"):
        model(const([2], np.int64))
    with pytest.raises(DTypeError, match=r"output 1 \(the indices\) must be int32 or int16, the "
                       "file declares int64"):
        model(index_type=np.int64)
    with pytest.raises(UnsupportedOpError, match=r"input tensor 'input0' has type bool"):
        model(values=x > 0)

# Version cases (tests/interpreter/kernels/test_versions.py collects them): op_version.cc.
_I8, _U8, _I16, _I32, _F32 = (TensorSig(t) for t in (T.INT8, T.UINT8, T.INT16, T.INT32,
                                                   T.FLOAT32))
VERSION_CASES = [("TOPK_V2", [_I16, _I32], 3, [_I16, _I32]),
                 ("TOPK_V2", [_F32, _I16], 3, [_F32, _I32]),
                 ("TOPK_V2", [_F32, _I32], 3, [_F32, _I16]),
                 ("TOPK_V2", [_I8, _I32], 2, [_I8, _I32]),
                 ("TOPK_V2", [_U8, _I32], 1, [_U8, _I32]),
                 ("TOPK_V2", [_F32, _I32], 1, [_F32, _I32])]
