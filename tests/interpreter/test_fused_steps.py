"""fused_steps.py: LOGISTIC + MUL(x, LOGISTIC(x)) as one native step, only where nothing can
tell, with the two steps' bits."""

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
