"""interpreter/kernels/normalization.py: L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION
against LiteRT; quantized L2_NORMALIZATION (and LOG_SOFTMAX, the other fixed-output op over
the last axis, softmax.py) bit-exact with both LiteRT kernel sets.

LRN: with kernels="reference" edgelite reproduces LiteRT's reference kernel bit for bit,
window [c - r, c + r) included; with the default kernels, LiteRT's optimized kernel
(TensorFlow's window [c - r, c + r], a running sum): bit for bit for beta 1 and 0.5, to the
last bit of Eigen's pow otherwise.
"""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError

from ..op_models import check_op, check_op_default, op_model
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, full_range, rand, random_qparams, run_edgelite,
                          run_litert)


F32 = np.float32


@pytest.mark.parametrize("shape", [(1, 10), (2, 3, 16), (4,), (1, 1, 1, 64)])
def test_l2_normalization(rng, shape):
    x = rand(rng, shape, low=-3, high=3)
    check_op("L2_NORMALIZATION", [x], [(shape, F32)])


def test_l2_normalization_epsilon():
    # A zero row stays zero; a row whose norm is below 1e-6 is divided by 1e-6.
    x = np.array([[0.0, 0.0, 0.0], [3e-7, -4e-7, 0.0], [3.0, 4.0, 0.0]], F32)
    (out,) = check_op("L2_NORMALIZATION", [x], [((3, 3), F32)])
    np.testing.assert_allclose(out, [[0, 0, 0], [0.3, -0.4, 0], [0.6, 0.8, 0]], rtol=1e-6)


@pytest.mark.parametrize("op,options,low,high", [
    ("L2_NORMALIZATION", {}, -3, 3),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels: still within rtol 1e-5 relative to the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)




F32 = np.float32
LRN = "LOCAL_RESPONSE_NORMALIZATION"


def lrn_model(x, radius, bias=1.0, alpha=1.0, beta=0.5):
    return op_model(LRN, [x], [(x.shape, F32)], radius=radius, bias=bias, alpha=alpha,
                    beta=beta)


def tf_lrn(x, radius, bias, alpha, beta):
    """tf.nn.local_response_normalization: sqr_sum[..., d] = sum(x[..., d - r : d + r + 1]
    ** 2); out = x / (bias + alpha * sqr_sum) ** beta (in float64 here)."""
    x64 = x.astype(np.float64)
    depth = x.shape[-1]
    sq = np.stack([np.sum(x64[..., max(0, d - radius):d + radius + 1] ** 2, axis=-1)
                   for d in range(depth)], axis=-1)
    return x64 / (bias + alpha * sq) ** beta


# (radius, bias, alpha, beta): TF's defaults (5, 1, 1, 0.5), AlexNet's (2, 2, 1e-4, 0.75),
# beta 1 (the optimized kernel's special case), radius 0 and a radius wider than the row.
PARAMS = [(5, 1.0, 1.0, 0.5), (2, 2.0, 1e-4, 0.75), (1, 1.5, 0.3, 1.0), (0, 1.5, 0.3, 0.75),
          (40, 0.5, 0.2, 0.3)]


@pytest.mark.parametrize("radius,bias,alpha,beta", PARAMS)
def test_reference_kernels_bit_exact(rng, radius, bias, alpha, beta):
    x = rand(rng, (2, 3, 4, 11), low=-3, high=3)
    model, feeds = lrn_model(x, radius, bias, alpha, beta)
    (ours,) = run_edgelite(model, feeds, "reference")
    (theirs,) = run_litert(model, feeds, "reference")
    assert ours.dtype == F32 and ours.shape == x.shape
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))


@pytest.mark.parametrize("radius,bias,alpha,beta", PARAMS)
def test_default_kernels_use_tensorflows_window(rng, radius, bias, alpha, beta):
    x = rand(rng, (2, 3, 4, 11), low=-3, high=3)
    model, feeds = lrn_model(x, radius, bias, alpha, beta)
    (ours,) = run_edgelite(model, feeds, "default")
    (theirs,) = run_litert(model, feeds, "default")
    if beta in (1.0, 0.5):
        np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    else:  # Eigen's pow against the correctly rounded one: a bit apart at most
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=2)
    np.testing.assert_allclose(ours, tf_lrn(x, radius, bias, alpha, beta), rtol=2e-6,
                               atol=1e-7)


@pytest.mark.parametrize("radius", [0, 3, 11, 40])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_default_kernels_bit_exact_where_eigen_takes_no_pow(rng, radius, beta):
    x = rand(rng, (1, 5, 7, 11), low=-4, high=4)
    model, feeds = lrn_model(x, radius, bias=0.75, alpha=0.05, beta=beta)
    (ours,) = run_edgelite(model, feeds, "default")
    np.testing.assert_array_equal(ours.view(np.uint32),
                                  run_litert(model, feeds, "default")[0].view(np.uint32))


def test_the_reference_window_stops_one_channel_early():
    # One channel: TF's window holds x itself, the reference's is empty (accum = 0).
    x = np.full((1, 1, 1, 1), 2.0, F32)
    model, feeds = lrn_model(x, radius=0, bias=1.0, alpha=1.0, beta=1.0)
    assert run_edgelite(model, feeds, "default")[0].item() == pytest.approx(2.0 / 5.0)
    assert run_edgelite(model, feeds, "reference")[0].item() == 2.0
    assert run_litert(model, feeds, "reference")[0].item() == 2.0


@pytest.mark.parametrize("kernels", ["reference", "default"])
def test_nan_and_inf_propagate_like_litert(kernels):
    """The optimized kernel's running sum carries a NaN or inf (inf - inf) into every later
    channel of the row; the reference only into the window."""
    x = np.array([[[[1.0, 3.0, 2.0, 0.5, -1.0, 0.0], [1.0, np.nan, 2.0, 0.5, -1.0, 0.0],
                    [1.0, 3.0, 2.0, np.inf, -1.0, 0.0]]]], F32)
    model, feeds = lrn_model(x, radius=1)
    (ours,) = run_edgelite(model, feeds, kernels)
    np.testing.assert_array_equal(ours, run_litert(model, feeds, kernels)[0])
    assert np.isnan(ours[0, 0, 1, 5]) == (kernels == "default")


@pytest.mark.parametrize("shape,dtype,radius,message", [
    ((2, 3, 4), F32, 1, "input must be 4-D"),
    ((1, 2, 2, 3), np.int8, 1, "has type int8"),
    ((1, 2, 2, 3), F32, -1, "radius must be >= 0, got -1"),
])
def test_refused(shape, dtype, radius, message):
    x = np.zeros(shape, dtype)
    model, feeds = op_model(LRN, [x], [(shape, dtype)], radius=radius, bias=1.0, alpha=1.0,
                            beta=0.5)
    with pytest.raises(EdgeliteError, match=message):
        run_edgelite(model, feeds, "default")


# --------------------------------------------------------------------------- quantized


def row_model(op, dtype, shape, q_in, q_out, version=2, **options):
    m = QuantModel()
    x = m.input("x", shape, dtype, *q_in)
    y = m.output("y", shape, dtype, *q_out)
    m.op(op, [x], [y], version=version, **options)
    return m.build()


def rows_with_corners(rng, shape, dtype, zero_point):
    x = full_range(rng, shape, dtype)
    x[0, 0] = zero_point  # a row of zeros (sum 0)
    x[0, 1] = zero_point + 1  # one small value, repeated
    x[0, 2, :1] = np.iinfo(dtype).max  # a single large value among random ones
    return x


# the output parameters each op fixes, and the input scales tried
CASES = {"L2_NORMALIZATION": ({np.int8: (1 / 128, 0), np.uint8: (1 / 128, 128)}, 0.01, 0.1),
         "LOG_SOFTMAX": ({np.int8: (16 / 256, 127), np.uint8: (16 / 256, 255)}, 0.01, 0.3)}


@pytest.mark.parametrize("op", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("depth", [1, 10, 100])
@pytest.mark.parametrize("seed", range(3))
def test_row_ops(op, dtype, depth, seed):
    rng = np.random.default_rng(seed)
    q_out, low, high = CASES[op]
    q_in = random_qparams(rng, dtype, low, high)
    x = rows_with_corners(rng, (2, 5, depth), dtype, q_in[1])
    assert_bit_exact(row_model(op, dtype, x.shape, q_in, q_out[dtype]), [x])


def test_l2_normalization_needs_fixed_output():
    model = row_model("L2_NORMALIZATION", np.int8, (2, 4), (0.1, 0), (0.01, 0))
    with pytest.raises(EdgeliteError, match="needs 1/128 and 0"):
        Interpreter(model_content=model).allocate_tensors()

