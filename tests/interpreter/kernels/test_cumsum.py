"""CUMSUM (interpreter/kernels/cumsum.py) bit-exact with both LiteRT kernel sets: float32,
int32 and int64, every exclusive / reverse combination, constant and computed axes."""

import itertools

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ShapeError, UnsupportedOpError
from edgelite.interpreter.batch_split import unsplittable
from tests.support import KERNEL_SETS, run_edgelite, run_litert

from ..op_models import const, op_model, run_op

AXIS = np.int32
OPTIONS = [dict(exclusive=e, reverse=r) for e, r in itertools.product([False, True], repeat=2)]
NAMES = ["inclusive", "reverse", "exclusive", "exclusive+reverse"]


def cumsum(x, axis, constant=True, **options) -> np.ndarray:
    """Both kernel sets against LiteRT's, byte for byte (the sign of a float zero too);
    returns edgelite's output."""
    axis = np.array([axis], AXIS)
    model, feeds = op_model("CUMSUM", [x, const(axis) if constant else axis],
                            [(x.shape, x.dtype)], **options)
    for kernels in KERNEL_SETS:
        (ours,), (ref,) = run_edgelite(model, feeds, kernels), run_litert(model, feeds, kernels)
        assert ours.dtype == ref.dtype and ours.shape == ref.shape
        assert ours.tobytes() == ref.tobytes(), (kernels, np.flatnonzero(ours != ref)[:5])
    return ours


def spread_floats(rng, shape) -> np.ndarray:
    """Magnitudes over six decades, so float32 rounding depends on the summation order."""
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(np.float32)


@pytest.mark.parametrize("options", OPTIONS, ids=NAMES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_float32_sums_in_litert_order(rng, axis, options):
    x = spread_floats(rng, (3, 50, 4))
    out = cumsum(x, axis, **options)
    ref = np.flip(x, axis) if options["reverse"] else x
    ref = np.cumsum(ref.astype(np.float64), axis=axis)  # the exact sums, for the size of error
    if options["exclusive"]:
        ref = np.concatenate([np.zeros_like(np.take(ref, [0], axis)),
                              np.take(ref, range(ref.shape[axis] - 1), axis)], axis)
    ref = np.flip(ref, axis) if options["reverse"] else ref
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3 * np.abs(x).max())


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("options", OPTIONS, ids=NAMES)
def test_integers_wrap(rng, dtype, options):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (4, 9), dtype=dtype)  # sums overflow
    out = cumsum(x, 1, **options)
    if not options["exclusive"] and not options["reverse"]:
        np.testing.assert_array_equal(out, np.cumsum(x, axis=1, dtype=dtype))


def test_sums_start_from_positive_zero(rng):
    """Eigen's scan starts from +0.0: -0.0 inputs sum to +0.0 (np.cumsum keeps -0.0)."""
    x = np.array([[-0.0, -0.0, 2.0, -2.0, -0.0]], np.float32)
    for options in OPTIONS:
        out = cumsum(x, 1, **options)
        assert not np.signbit(out[out == 0]).any(), options
    assert np.signbit(np.cumsum(x, axis=1)[:, :2]).all()  # what the kernel must correct


@pytest.mark.parametrize("axis", [1, -2])
def test_computed_axis(rng, axis):
    x = spread_floats(rng, (2, 6, 3))
    out = cumsum(x, axis, constant=False, exclusive=True)
    np.testing.assert_array_equal(out[:, 0], 0)


def test_rank_one_and_an_empty_axis(rng):
    x = spread_floats(rng, (17,))
    np.testing.assert_array_equal(cumsum(x, 0, reverse=True)[-1], x[-1] + np.float32(0))
    assert cumsum(np.zeros((3, 0, 2), np.float32), 1, exclusive=True).shape == (3, 0, 2)


@pytest.mark.parametrize("axis, reason", [(1, None), (-2, None),
                                          (0, "may reduce over the batch"),
                                          (-3, "may reduce over the batch")])
def test_batch_split_only_along_other_axes(axis, reason):
    """A batch of 4 splits by sample unless the sums run along dim 0 (OpDef.reduction)."""
    model, _ = op_model("CUMSUM", [np.zeros((4, 3, 2), np.float32), const([axis], AXIS)],
                        [((4, 3, 2), np.float32)])
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    a = interp._alloc
    found = unsplittable(interp._subgraph, a.shapes, a.arrays, a.constants, batch=4)
    assert found is None if reason is None else reason in found


def test_refusals():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(UnsupportedOpError, match=r"CUMSUM.*input tensor 'input0' has type int8; "
                       "this kernel supports float32, int32, int64"):
        run_op("CUMSUM", [x.astype(np.int8), const([1], AXIS)], [((2, 3), np.int8)])
    with pytest.raises(UnsupportedOpError, match=r"axis tensor 'const1' has type int64"):
        run_op("CUMSUM", [x, const([1], np.int64)], [((2, 3), np.float32)])
    with pytest.raises(ShapeError, match=r"CUMSUM.*axis 2 is out of range for a rank-2 input "
                       r"\(valid: -2 to 1\)"):
        run_op("CUMSUM", [x, const([2], AXIS)], [((2, 3), np.float32)])
    with pytest.raises(ShapeError, match=r"CUMSUM.*axis -3 is out of range"):  # at invoke()
        run_op("CUMSUM", [x, np.array([-3], AXIS)], [((2, 3), np.float32)])
    with pytest.raises(ShapeError, match=r"axis 'const1' must hold one value, has shape \[2\]"):
        run_op("CUMSUM", [x, const([0, 1], AXIS)], [((2, 3), np.float32)])
