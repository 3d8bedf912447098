"""fused_steps.py: LOGISTIC + MUL(x, LOGISTIC(x)) as one native step, and a float convolution
followed by that swish as one, only where nothing can tell, with the unfused steps' bits."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, fused_steps
from tests.support import rand

from .tflite_builder import ModelBuilder


@pytest.fixture
def native():
    from edgelite.interpreter import native
    from tests.conftest import missing
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    return native


def swish_model(shape, *, swapped=False, sigmoid_out=False, other_reader=False, relu=False,
                other_factor=False):
    """x -> LOGISTIC -> s; y = MUL(x, s) (or the variants that must not fuse)."""
    b = ModelBuilder()
    x = b.tensor("x", shape)
    s = b.tensor("s", shape)
    y = b.tensor("y", shape)
    b.op("LOGISTIC", [x], [s])
    factor = b.tensor("z", shape) if other_factor else x
    b.op("MUL", [s, factor] if swapped else [factor, s], [y],
         fused_activation_function=1 if relu else 0)
    outputs = [y, s] if sigmoid_out else [y]
    inputs = [x, factor] if other_factor else [x]
    if other_reader:
        t = b.tensor("t", shape)
        b.op("ADD", [s, x], [t])
        outputs.append(t)
    return b.build(inputs, outputs)


def run(model, feeds, fuse=True, monkeypatch=None, **kwargs):
    if not fuse:
        monkeypatch.setattr(fused_steps, "fuse_swish", lambda e, s, o, a, k: (s, o))
    interp = Interpreter(model_content=model, **kwargs)
    interp.allocate_tensors()
    if not fuse:
        monkeypatch.undo()
    for d, v in zip(interp.get_input_details(), feeds):
        interp.set_tensor(d["index"], v)
    interp.invoke()
    return len(interp._steps), [interp.get_tensor(d["index"]) for d in
                                interp.get_output_details()]


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("shape,threads", [((1, 5, 7, 3), 1), ((1, 112, 112, 32), 2)])
def test_swish_is_one_step_with_the_two_steps_bits(native, monkeypatch, rng, swapped, shape,
                                                   threads):
    x = rand(rng, shape, low=-20, high=20)
    x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, 17.0]
    model = swish_model(shape, swapped=swapped)
    steps, (y,) = run(model, [x], native=True, num_threads=threads)
    plain_steps, (want,) = run(model, [x], False, monkeypatch, native=True,
                               num_threads=threads)
    assert (steps, plain_steps) == (1, 2)
    # the same bits; a NaN is a NaN (its sign is the first operand's on x86: the MUL's
    # sigmoid when it comes first, x in the fused step)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(y), nan)
    np.testing.assert_array_equal(y.view(np.int32)[~nan], want.view(np.int32)[~nan])
    _, (numpy_y,) = run(model, [x], native=False)
    np.testing.assert_allclose(y, numpy_y, rtol=4e-7, atol=1e-30)


@pytest.mark.parametrize("variant", ["sigmoid_out", "other_reader", "relu", "other_factor"])
def test_not_fused_where_the_sigmoid_or_the_product_would_differ(native, rng, variant):
    # the sigmoid is read (an output, another op) or the MUL is not x * s alone
    shape = (1, 4, 4, 8)
    model = swish_model(shape, **{variant: True})
    feeds = [rand(rng, shape, low=-5, high=5) for _ in range(2 if variant == "other_factor"
                                                               else 1)]
    steps, outs = run(model, feeds, native=True)
    _, want = run(model, feeds, native=False)
    assert steps == (3 if variant == "other_reader" else 2)
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w, rtol=4e-7)


def test_not_fused_with_preserve_all_tensors_or_numpy(native, rng):
    x = rand(rng, (1, 4, 4, 8), low=-5, high=5)
    model = swish_model(x.shape)
    assert run(model, [x], native=True, preserve_all_tensors=True)[0] == 2
    assert run(model, [x], native=False)[0] == 2


# -- a float convolution taking the swish after it as its activation ---------------------------

def conv_swish_model(rng, kind, shape=(1, 9, 11, 8), channels=16, *, relu=False,
                     conv_out=False, other_reader=False, intermediate=False, stride=1):
    """[ADD(x, x) ->] CONV_2D / DEPTHWISE_CONV_2D -> y; swish(y) -> m (or the variants that
    must not fuse). ``intermediate``: the convolution's input is a tensor that dies at the
    convolution, whose memory the planner could hand to m (with stride 2 it would: m and
    the sigmoid fit in it side by side)."""
    b = ModelBuilder()
    x = b.tensor("x", shape)
    src = x
    if intermediate:
        src = b.tensor("x2", shape)
        b.op("ADD", [x, x], [src])
    n, h, w, c = shape
    o = c if kind == "DEPTHWISE_CONV_2D" else channels
    out_shape = (n, -(-h // stride), -(-w // stride), o)
    y, s, m = (b.tensor(name, out_shape) for name in ("y", "s", "m"))
    filt_shape = (1, 3, 3, o) if kind == "DEPTHWISE_CONV_2D" else (o, 3, 3, c)
    filt = b.const("w", rand(rng, filt_shape, low=-1, high=1))
    bias = b.const("b", rand(rng, (o,), low=-1, high=1))
    extra = dict(depth_multiplier=1) if kind == "DEPTHWISE_CONV_2D" else {}
    b.op(kind, [src, filt, bias], [y], padding="SAME", stride_w=stride, stride_h=stride,
         fused_activation_function=1 if relu else 0, **extra)
    b.op("LOGISTIC", [y], [s])
    b.op("MUL", [y, s], [m])
    outputs = [m, y] if conv_out else [m]
    if other_reader:
        t = b.tensor("t", out_shape)
        b.op("ADD", [y, y], [t])
        outputs.append(t)
    return b.build([x], outputs)


def run_pair_only(model, feeds, monkeypatch, **kwargs):
    """run() with the convolution + swish fusion off (the LOGISTIC + MUL pair still fuses)"""
    monkeypatch.setattr(fused_steps, "FUSIONS", tuple(
        f for f in fused_steps.FUSIONS if f[0] is not fused_steps._conv_step))
    try:
        return run(model, feeds, **kwargs)
    finally:
        monkeypatch.undo()


@pytest.fixture
def blas(native):
    from edgelite.interpreter.kernels.common import native_conv_blas
    assert native_conv_blas.available(), "numpy's sgemm was not found"


@pytest.mark.parametrize("kind", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("shape,threads", [((1, 9, 11, 8), 1), ((1, 56, 56, 32), 2)])
def test_convolution_takes_the_swish_with_the_unfused_bits(blas, monkeypatch, rng, kind,
                                                           shape, threads):
    x = rand(rng, shape, low=-4, high=4)
    x.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 40.0]
    for intermediate, stride in ((False, 1), (True, 1), (True, 2)):
        model = conv_swish_model(rng, kind, shape, intermediate=intermediate, stride=stride)
        steps, (m,) = run(model, [x], native=True, num_threads=threads)
        pair_steps, (want,) = run_pair_only(model, [x], monkeypatch, native=True,
                                            num_threads=threads)
        plain_steps, (plain,) = run(model, [x], False, monkeypatch, native=True,
                                    num_threads=threads)
        assert (steps, pair_steps, plain_steps) == (1 + intermediate, 2 + intermediate,
                                                    3 + intermediate)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(m), nan)
        np.testing.assert_array_equal(m.view(np.int32)[~nan], want.view(np.int32)[~nan])
        np.testing.assert_array_equal(np.isnan(plain), nan)
        np.testing.assert_array_equal(plain.view(np.int32)[~nan], want.view(np.int32)[~nan])
        # numpy's product sums the up to 288 taps in another order (and without FMA)
        _, (numpy_m,) = run(model, [x], native=False)
        np.testing.assert_allclose(m, numpy_m, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("variant", ["relu", "conv_out", "other_reader"])
def test_convolution_keeps_its_output_where_it_is_read(blas, rng, variant):
    # a fused activation already, or the convolution's output is an output / read again:
    # the pair fuses, the convolution does not take it
    x = rand(rng, (1, 9, 11, 8), low=-4, high=4)
    model = conv_swish_model(rng, "CONV_2D", **{variant: True})
    steps, outs = run(model, [x], native=True)
    _, want = run(model, [x], native=False)
    assert steps == (3 if variant == "other_reader" else 2)
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("kind", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_the_swish_output_gets_memory_of_its_own_from_the_convolution_on(blas, monkeypatch,
                                                                         rng, kind):
    # planned_outputs: m is planned from the convolution's step, so it does not share the
    # memory of the convolution's input (which dies there) and the fusion happens; planned
    # from the MUL's step, m would take that memory and the convolution could not write it
    model = conv_swish_model(rng, kind, (1, 16, 16, 8), intermediate=True, stride=2)

    def shares(monkeypatch=None):
        if monkeypatch is not None:
            monkeypatch.setattr(fused_steps, "planned_outputs",
                                lambda entries, keep: [e[0].outputs for e in entries])
        interp = Interpreter(model_content=model, native=True)
        interp.allocate_tensors()
        names = {d["name"]: d["index"] for d in interp.get_tensor_details()}
        arrays = interp._alloc.arrays
        return np.may_share_memory(arrays[names["m"]], arrays[names["x2"]]), \
            len(interp._steps)

    assert shares() == (False, 2)
    assert shares(monkeypatch) == (True, 3)    # not fused: the pair alone


# -- an 8-bit swish as one table ----------------------------------------------------------------

def swish8_model(dtype, shape, *, swapped=False, out_scale=0.03, relu=False,
                 sigmoid_out=False):
    """x (8-bit) -> LOGISTIC -> s (TFLite's fixed 1/256 scale); y = MUL(x, s)."""
    b = ModelBuilder()
    low = -128 if dtype == np.int8 else 0
    x = b.tensor("x", shape, dtype, scale=0.05, zero_point=131 if dtype == np.uint8 else 3)
    s = b.tensor("s", shape, dtype, scale=1 / 256, zero_point=low)
    y = b.tensor("y", shape, dtype, scale=out_scale, zero_point=low + 100)
    b.op("LOGISTIC", [x], [s])
    b.op("MUL", [s, x] if swapped else [x, s], [y], fused_activation_function=1 if relu else 0)
    return b.build([x], [y, s] if sigmoid_out else [y])


@pytest.mark.parametrize("dtype,kernels", [(np.int8, "default"), (np.int8, "reference"),
                                           (np.int8, "micro"), (np.uint8, "default"),
                                           (np.uint8, "reference")])  # (TFLM: no uint8)
@pytest.mark.parametrize("variant", [{}, {"swapped": True}, {"relu": True},
                                     {"out_scale": 0.002}])
def test_8bit_swish_is_one_table_with_the_two_ops_bytes(native, monkeypatch, rng, dtype,
                                                       kernels, variant):
    info = np.iinfo(dtype)
    for shape, threads in (((1, 16, 16, 1), 1), ((1, 64, 64, 32), 2)):
        model = swish8_model(dtype, shape, **variant)
        x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
        x.reshape(-1)[:256] = np.arange(256, dtype=np.uint8).view(dtype)   # every byte
        kw = dict(native=True, num_threads=threads, kernels=kernels)
        steps, (y,) = run(model, [x], **kw)
        plain_steps, (want,) = run(model, [x], False, monkeypatch, **kw)
        assert (steps, plain_steps) == (1, 2)
        np.testing.assert_array_equal(y, want)
        _, (numpy_y,) = run(model, [x], native=False, kernels=kernels)
        np.testing.assert_array_equal(y, numpy_y)


def test_8bit_swish_keeps_a_sigmoid_that_is_read(native, rng):
    shape = (1, 8, 8, 4)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    model = swish8_model(np.int8, shape, sigmoid_out=True)
    steps, outs = run(model, [x], native=True)
    _, want = run(model, [x], native=False)
    assert steps == 2
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)
