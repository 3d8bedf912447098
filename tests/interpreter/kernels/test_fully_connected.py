"""FULLY_CONNECTED: float against LiteRT's reference kernels, int8 / uint8 bit-exact with
both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from tests.conftest import missing
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_close, assert_matches_litert, full_range, rand,
                          random_qparams, run_edgelite)
from ..tflite_builder import ModelBuilder


def fc_model(x_shape, w, bias, out_shape, *, const_weights=True, **options):
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    graph_inputs = [x]
    if const_weights:
        wt = b.tensor("w", w.shape, data=w)
    else:
        wt = b.tensor("w", w.shape)
        graph_inputs.append(wt)
    inputs = [x, wt]
    if bias is not None:
        inputs.append(b.tensor("b", bias.shape, data=bias))
    else:
        inputs.append(-1)
    y = b.tensor("y", out_shape)
    b.op("FULLY_CONNECTED", inputs, [y], **options)
    return b.build(graph_inputs, [y])


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_fc_activation(rng, act):
    x = rand(rng, (3, 10), low=-2, high=2)
    w = rand(rng, (7, 10))
    bias = rand(rng, (7,))
    model = fc_model(x.shape, w, bias, (3, 7), fused_activation_function=act)
    assert_matches_litert(model, [x])


def test_fc_without_bias(rng):
    x = rand(rng, (2, 6))
    w = rand(rng, (4, 6))
    assert_matches_litert(fc_model(x.shape, w, None, (2, 4)), [x])


def test_fc_flattens_input(rng):
    # [2, 3, 4] with input depth 12 -> batch = 24 / 12 = 2 rows.
    x = rand(rng, (2, 3, 4))
    w = rand(rng, (5, 12))
    bias = rand(rng, (5,))
    (out,) = assert_matches_litert(fc_model(x.shape, w, bias, (2, 5)), [x])
    assert out.shape == (2, 5)


def test_fc_keep_num_dims(rng):
    x = rand(rng, (2, 3, 4))
    w = rand(rng, (5, 4))
    bias = rand(rng, (5,))
    model = fc_model(x.shape, w, bias, (2, 3, 5), keep_num_dims=True)
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == (2, 3, 5)


def test_fc_runtime_weights(rng):
    x = rand(rng, (3, 8))
    w = rand(rng, (4, 8))
    bias = rand(rng, (4,))
    model = fc_model(x.shape, w, bias, (3, 4), const_weights=False)
    (out,) = run_edgelite(model, [x, w])
    assert_close(out, x @ w.T + bias)


def test_fc_bad_input_depth(rng):
    model = fc_model((2, 7), rand(rng, (3, 4)), None, (2, 3))
    with pytest.raises(ShapeError, match="FULLY_CONNECTED.*input depth 4"):
        run_edgelite(model, [rand(rng, (2, 7))])


# --------------------------------------------------------------------------- int8 / uint8


def quant_fc_model(rng, dtype, x_shape, units, *, per_channel=False, act="NONE", bias=True,
             keep_num_dims=False, w_zp=None, out_q=None):
    depth = x_shape[-1]
    s_x, z_x = random_qparams(rng, dtype, 0.01, 0.05)
    s_out, z_out = out_q or random_qparams(rng, dtype, 0.05, 0.5)
    if dtype == np.int8:
        w = rng.integers(-127, 128, size=(units, depth)).astype(np.int8)
        w_scales = rng.uniform(0.002, 0.02, size=units if per_channel else 1).astype(np.float32)
        zps = np.zeros(len(w_scales), np.int64) if w_zp is None else np.array([w_zp])
    else:
        w = full_range(rng, (units, depth), np.uint8)
        w_scales = np.float32([rng.uniform(0.002, 0.02)])
        zps = np.array([int(rng.integers(100, 156))])
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s_x, z_x)
    inputs = [x, m.const("w", w, dtype, w_scales, zps)]
    if bias:
        b_scales = np.float32(s_x) * w_scales
        inputs.append(m.const("b", rng.integers(-5000, 5000, size=units), np.int32, b_scales,
                              np.zeros(len(b_scales), np.int64)))
    rows = int(np.prod(x_shape)) // depth
    out_shape = tuple(x_shape[:-1]) + (units,) if keep_num_dims else (rows, units)
    y = m.output("y", out_shape, dtype, s_out, z_out)
    m.op("FULLY_CONNECTED", inputs, [y], version=4 if dtype == np.int8 else 1,
         fused_activation_function=act, keep_num_dims=keep_num_dims)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("x_shape,units", [((64, 16), 8), ((3, 200), 10), ((2, 3, 4, 8), 5)])
def test_fully_connected(rng, dtype, x_shape, units):
    model, feeds = quant_fc_model(rng, dtype, x_shape, units)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_fully_connected_activation(rng, dtype, act):
    model, feeds = quant_fc_model(rng, dtype, (32, 24), 6, act=act,
                            out_q=(0.02, 0 if dtype == np.int8 else 128))
    assert_bit_exact(model, feeds)


def test_fully_connected_per_channel(rng):
    model, feeds = quant_fc_model(rng, np.int8, (50, 40), 12, per_channel=True)
    assert_bit_exact(model, feeds)


def test_fully_connected_no_bias_keep_dims(rng):
    model, feeds = quant_fc_model(rng, np.int8, (2, 5, 12), 7, bias=False, keep_num_dims=True)
    assert_bit_exact(model, feeds)


def test_fully_connected_large_depth(rng):
    # K = 1024: one float32 product (partial sums within 1024 * 127 * ~128).
    model, feeds = quant_fc_model(rng, np.int8, (4, 1024), 16)
    assert_bit_exact(model, feeds)


def _native_float_steps(model, feeds, shape):
    """(numpy backend output, native output, the native run's step functions)."""
    from edgelite.interpreter import Interpreter
    results, steps = [], None
    for native in (False, True):
        interp = Interpreter(model_content=model, native=native)
        interp.resize_tensor_input(interp.get_input_details()[0]["index"], shape)
        interp.allocate_tensors()
        steps = [s[0] for s in interp._steps]
        for d, v in zip(interp.get_input_details(), feeds):
            interp.set_tensor(d["index"], v)
        interp.invoke()
        results.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    return results[0], results[1], steps


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_small_float_fc_native_step_is_litert_reference_bit_for_bit(rng, act, with_bias):
    # a small float FC with constant weights runs as one C step (native/fc_f32.c) in
    # reference_ops::FullyConnected's order: LiteRT BUILTIN_REF's bits (the numpy kernel's
    # BLAS product is only close); before and after a resize re-binds it
    from edgelite.interpreter import native
    from tests.support.runtimes import run_litert
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    w = rand(rng, (17, 40))
    bias = rand(rng, (17,)) if with_bias else None
    small = fc_model((2, 40), w, bias, (2, 17), fused_activation_function=act)
    for shape in ((2, 40), (6, 40)):
        x = rand(rng, shape, low=-3, high=3)
        plain, got, steps = _native_float_steps(small, [x], shape)
        assert steps == [native.module.run_native_step]
        model = fc_model(shape, w, bias, (shape[0], 17), fused_activation_function=act)
        (want,) = run_litert(model, [x], "reference")
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
        assert_close(plain, want)


@pytest.mark.parametrize("const_weights", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
def test_float_fc_bound_step_equals_eval(rng, const_weights, with_bias):
    # larger float FCs (and any with weights that are not constant) keep eval's numpy calls
    # on 2-D views bound once (eval_bound): the numpy backend's bits, before and after a
    # resize re-binds them
    from edgelite.interpreter import native
    from edgelite.interpreter.kernels.fully_connected import SMALL_FC, eval_bound
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    w = rand(rng, (50, 400))
    bias = rand(rng, (50,)) if with_bias else None
    model = fc_model((2, 400), w, bias, (2, 50), const_weights=const_weights,
                     fused_activation_function="RELU6")
    for shape in ((2, 400), (4, 400)):
        assert shape[0] * 400 * 50 > SMALL_FC
        x = rand(rng, shape, low=-3, high=3)
        plain, got, steps = _native_float_steps(model, [x] if const_weights else [x, w], shape)
        assert steps == [eval_bound]
        np.testing.assert_array_equal(plain, got)
        want = np.clip(x @ w.T + (0 if bias is None else bias), 0, 6)
        assert_close(got, want.astype(np.float32))
