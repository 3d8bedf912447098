"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR against LiteRT's reference kernels (and its
default kernels where they compute differently); int8 / uint8 bit-exact with both LiteRT
kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import UnsupportedOpError

from ..op_models import check_op, check_op_default, const, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_float_native_steps, assert_folded_alike,
                           assert_native_fits_where_numpy_does_not, full_range, rand,
                           random_qparams)

I32, F32 = np.int32, np.float32

RESIZES = [((4, 4), (8, 8)), ((5, 7), (3, 4)), ((3, 3), (7, 5)), ((6, 4), (6, 4)),
           ((1, 5), (4, 1)), ((4, 6), (9, 13))]
MODES = [dict(), dict(align_corners=True), dict(half_pixel_centers=True)]


@pytest.mark.parametrize("in_hw,out_hw", RESIZES)
@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half"])
def test_resize_bilinear(rng, in_hw, out_hw, mode):
    x = rand(rng, (2,) + in_hw + (3,), low=-10, high=10)
    operands = [x, const(out_hw, I32)]
    outputs = [((2,) + out_hw + (3,), F32)]
    # Same float32 operations in the same order: bit for bit.
    check_op("RESIZE_BILINEAR", operands, outputs, rtol=0, atol_factor=0, **mode)
    check_op_default("RESIZE_BILINEAR", operands, outputs, **mode)


@pytest.mark.parametrize("in_hw,out_hw", RESIZES)
@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half"])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_resize_nearest(rng, in_hw, out_hw, mode, dtype):
    x = rand(rng, (2,) + in_hw + (3,), low=-100, high=100).astype(dtype)
    operands = [x, const(out_hw, I32)]
    outputs = [((2,) + out_hw + (3,), dtype)]
    check_op("RESIZE_NEAREST_NEIGHBOR", operands, outputs, **mode)
    if dtype == F32:
        check_op_default("RESIZE_NEAREST_NEIGHBOR", operands, outputs, **mode)


def test_resize_errors(rng):
    x = rand(rng, (1, 4, 4, 1))
    with pytest.raises(UnsupportedOpError, match="cannot both be set"):
        run_op("RESIZE_BILINEAR", [x, const([8, 8], I32)], [((1, 8, 8, 1), F32)],
               align_corners=True, half_pixel_centers=True)
    # a computed size: the output is dynamic, prepared at invoke (interpreter/dynamic.py)
    (out,) = check_op("RESIZE_NEAREST_NEIGHBOR", [x, np.array([8, 8], I32)], [((1, 8, 8, 1), F32)])
    assert out.shape == (1, 8, 8, 1)


# --------------------------------------------------------------------------- int8 / uint8

DTYPES = [np.int8, np.uint8]


def resize_model(op, dtype, x_shape, size, q, **options):
    m = QuantModel()
    x = m.input("x", x_shape, dtype, *q)
    sz = m.const("size", np.array(size, np.int32), np.int32)
    y = m.output("y", (x_shape[0], size[0], size[1], x_shape[3]), dtype, *q)
    m.op(op, [x, sz], [y], version=2 if op == "RESIZE_BILINEAR" else 1, **options)
    return m.build()


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(9, 13), (3, 2), (10, 14)])
@pytest.mark.parametrize("mode", ["legacy", "align_corners", "half_pixel_centers"])
def test_resize(rng, op, dtype, size, mode):
    options = {} if mode == "legacy" else {mode: True}
    q = random_qparams(rng, dtype)
    x = full_range(rng, (2, 5, 7, 3), dtype)
    assert_bit_exact(resize_model(op, dtype, x.shape, size, q, **options), [x])


def test_float_bilinear_is_one_native_step_with_the_numpy_bits(rng):
    # float RESIZE_BILINEAR on the native backend: one C step (native/resize_f32.c) giving
    # the numpy kernel's bits (the module's other tests hold both to LiteRT's reference)
    from tests.interpreter.tflite_builder import ModelBuilder
    for mode in MODES:
        b = ModelBuilder()
        x = b.tensor("x", [2, 5, 7, 3])
        y = b.tensor("y", [2, 9, 4, 3])
        b.op("RESIZE_BILINEAR", [x, b.const("size", np.array([9, 4], I32))], [y], **mode)
        feed = rand(rng, (2, 5, 7, 3), low=-1e4, high=1e4)
        assert_float_native_steps(b.build([x], [y]), [feed], threads=(1, 2), litert=False)


def test_resize_bilinear_f32_step_refuses_bad_tables():
    from edgelite.interpreter import native
    from tests.conftest import missing
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    bind = native.module.resize_bilinear_f32_step
    x, out = np.zeros((1, 2, 2, 1), F32), np.zeros((1, 3, 3, 1), F32)
    idx, w = np.array([0, 1, 1], np.int64), np.full(3, 0.5, F32)
    assert bind(x, out, (1, 2, 2, 1, 3, 3), (idx, idx, idx, idx), (w, w, w, w)) is not None
    with pytest.raises(ValueError, match="index out of range"):
        bind(x, out, (1, 2, 2, 1, 3, 3), (idx, idx + 1, idx, idx), (w, w, w, w))
    with pytest.raises(ValueError, match="wx1 holds 8 bytes, needs 12"):
        bind(x, out, (1, 2, 2, 1, 3, 3), (idx, idx, idx, idx), (w, w, w, w[:2].copy()))
    with pytest.raises(ValueError, match="the output holds 36 bytes, needs 64"):
        bind(x, out, (1, 2, 2, 1, 4, 4), (idx, idx, idx, idx), (w, w, w, w))


def test_float_bilinear_native_needs_no_numpy_scratch(rng):
    # With the native step the record keeps no row / term scratch: a memory limit a little
    # above the arena holds on the native backend and refuses the numpy one (its scratch
    # is 1.5x the output). A constant input is folded at allocate through the native eval:
    # the numpy kernel's values.
    model = resize_model("RESIZE_BILINEAR", F32, (1, 28, 28, 32), (112, 112), (None, None))
    assert_native_fits_where_numpy_does_not(model, int(2.5 * 2**20))  # arena: 0.1 + 1.53 MiB
    m = QuantModel()
    x = m.const("x", rng.uniform(-3, 3, (1, 5, 6, 3)).astype(F32), F32)
    y = m.output("y", (1, 9, 11, 3), F32)
    m.op("RESIZE_BILINEAR", [x, m.const("size", np.array([9, 11], I32), I32)], [y],
         version=2, half_pixel_centers=True)
    assert_folded_alike(m.build())
