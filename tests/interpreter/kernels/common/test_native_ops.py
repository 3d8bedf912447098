"""The native element-wise kernels (interpreter/kernels/common/native_ops.py, native/elementwise.c,
native/lut.c, ...) equal the numpy kernels bit for bit: random sweeps of shapes,
broadcasts, quantization parameters and fused activations, every (input pair / input)
value once, each kernel set and rounding, one and two threads -- and the native kernel
is the one that ran (not a numpy fallback)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native
from edgelite.interpreter.kernels.common import native_ops
from edgelite.interpreter.kernels.pooling import eval_native_average

from tests.conftest import MODELS
from tests.support.values import full_range, random_qparams

from ...tflite_builder import QuantModel
from ...test_native import needs_native

SETTINGS = [("default", "double"), ("reference", "double"), ("reference", "single"),
            ("micro", "double")]


@pytest.fixture(params=[True, False], ids=["avx2", "baseline"])
def isa(request):
    """Run the kernels built twice (elementwise.c, pool.c, lut.c) in their AVX2 build, where
    the CPU has one, and in their baseline x86-64 build."""
    if native.module is None:
        yield request.param
        return
    before = native.module.allow_avx2(request.param)
    try:
        yield request.param
    finally:
        native.module.allow_avx2(before)


def _run(model: bytes, feeds, use_native: bool, **kw):
    interp = Interpreter(model_content=model, native=use_native, **kw)
    interp.allocate_tensors()
    for d, x in zip(interp.get_input_details(), feeds):
        interp.set_tensor(d["index"], x)
    interp.invoke()
    evals = {step[0] for step in interp._steps}  # the prepared (eval, record, ...) calls
    return interp.get_tensor(interp.get_output_details()[0]["index"]), evals


def assert_backends_equal(model: bytes, feeds, native_eval, settings=SETTINGS,
                          threads=(1, 2)) -> np.ndarray:
    """numpy == native in every kernel set / rounding / thread count; the native
    interpreter ran ``native_eval`` (or a native step: the kernel bound at allocate). Returns the last output."""
    for kernels, rounding in settings:
        for n in threads:
            kw = dict(kernels=kernels, rounding=rounding, num_threads=n)
            want, evals_numpy = _run(model, feeds, False, **kw)
            got, evals_native = _run(model, feeds, True, **kw)
            # the op's native kernel ran: through its eval, or bound as a native step
            step = native.module.run_native_step
            assert native_eval in evals_native or step in evals_native
            assert native_eval not in evals_numpy and step not in evals_numpy
            np.testing.assert_array_equal(got, want, err_msg=f"{kernels} {rounding} {n}")
    return want


def _random_pair(rng, rank_max=5):
    """Two broadcast-compatible shapes: same shape, a scalar, a channel vector, or any
    mix of 1s (the inputs may also have different ranks)."""
    rank = int(rng.integers(0, rank_max + 1))
    out = [int(rng.integers(1, 9)) for _ in range(rank)]
    kind = rng.integers(4)
    if kind == 0 or rank == 0:
        return tuple(out), tuple(out)
    if kind == 1:
        return tuple(out), ()
    if kind == 2:
        return tuple(out), (out[-1],)
    a = tuple(d if rng.random() < 0.6 else 1 for d in out)
    b = tuple(d if rng.random() < 0.6 else 1 for d in out)
    b = b[int(rng.integers(0, len(b) + 1)):]  # maybe a lower rank
    return (a, b) if rng.random() < 0.5 else (b, a)


def binary_model(rng, op, dtype, shape1, shape2, scales, act="NONE"):
    m = QuantModel()
    a = m.input("a", shape1, dtype, *scales[0])
    b = m.input("b", shape2, dtype, *scales[1])
    y = m.output("y", np.broadcast_shapes(shape1, shape2), dtype, *scales[2])
    m.op(op, [a, b], [y], version=2, fused_activation_function=act)
    return m.build(), [full_range(rng, shape1, dtype), full_range(rng, shape2, dtype)]


def _binary_scales(rng, op, dtype, seed):
    scales = [random_qparams(rng, dtype, 0.01, 0.1) for _ in range(3)]
    if op == "MUL":
        (s1, _), (s2, _), (_, zo) = scales
        scales[2] = (float(np.float32(s1 * s2 * rng.uniform(20, 80))), zo)
    if seed % 5 == 4:  # scale ratios XNNPACK refuses: TFLite's optimized paths (add_paths)
        s, z = scales[0]
        scales[0] = (s / 3000.0, z)
    return scales


@needs_native
@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_sweep(seed, op, isa):
    rng = np.random.default_rng(seed * 7 + len(op))
    dtype = (np.int8, np.uint8)[seed % 2]
    shape1, shape2 = _random_pair(rng)
    act = str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))
    model, feeds = binary_model(rng, op, dtype, shape1, shape2,
                                _binary_scales(rng, op, dtype, seed), act)
    settings = SETTINGS if dtype == np.int8 else SETTINGS[:3]  # TFLM: no uint8 ADD / MUL
    assert_backends_equal(model, feeds, native_ops.eval_binary, settings)


@needs_native
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("broadcast", ["same", "row", "column"])
def test_binary_every_pair(op, dtype, broadcast, isa):
    """All 65536 input pairs, with power-of-two scale ratios that put many results on
    rounding ties and saturating ones, broadcast three ways."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1).astype(dtype)
    a, b = np.meshgrid(values, values, indexing="ij")
    if broadcast == "row":  # (256, 256) with (256,)
        feeds_shapes = [a, b[0]]
    elif broadcast == "column":  # (256, 1) with (256, 256)
        feeds_shapes = [a[:, :1], b]
    else:
        feeds_shapes = [a, b]
    z = 0 if dtype == np.int8 else 128
    out_scale = 2.0 if op == "MUL" else 0.25
    rng = np.random.default_rng(0)
    model, _ = binary_model(rng, op, dtype, feeds_shapes[0].shape, feeds_shapes[1].shape,
                            [(0.25, z), (0.125, z + 1), (out_scale, z - 1)])
    out = assert_backends_equal(model, feeds_shapes, native_ops.eval_binary,
                                SETTINGS[:3], threads=(1,))
    assert out.min() == info.min and out.max() == info.max  # saturation reached


@needs_native
@pytest.mark.parametrize("op", ["ADD", "MUL"])
def test_binary_large_split(op, isa, monkeypatch):
    """Outputs large enough to be split over 2-4 threads, tasks starting inside rows; the
    op stays one native step, its tasks run on the C pool."""
    rng = np.random.default_rng(3)
    scales = _binary_scales(rng, op, np.int8, 0)
    model, feeds = binary_model(rng, op, np.int8, (1, 113, 97, 96), (1, 1, 1, 96), scales)
    assert_backends_equal(model, feeds, native_ops.eval_binary, SETTINGS[:2], threads=(2, 3, 4))
    made, bind = [], native_ops.NativeBinary.native_step
    monkeypatch.setattr(native_ops.NativeBinary, "native_step",
                        lambda rec, i, o: made.append(rec) or bind(rec, i, o))
    interp = Interpreter(model_content=model, native=True, num_threads=3)
    interp.allocate_tensors()
    (step,) = interp._steps
    assert isinstance(step[1], native.module.NativeStep)
    size, threads, tasks = made[0].split
    assert (size, threads, tasks) == (113 * 97 * 96, 3, 6)
    assert size // tasks // 64 * 64 % 96  # the second task starts mid-row


def test_collapse():
    assert native_ops.collapse((1, 7, 7, 32), (1, 1, 1, 32)) == ((49, 32), (32, 1), (0, 1))
    assert native_ops.collapse((4, 5), ()) == ((20,), (1,), (0,))
    assert native_ops.collapse((2, 1, 4), (1, 3, 1)) == ((2, 3, 4), (4, 0, 1), (0, 1, 0))
    assert native_ops.collapse((), ()) == ((1,), (1,), (1,))
    assert native_ops.collapse((3, 1), (3, 5)) == ((3, 5), (1, 0), (5, 1))


# --------------------------------------------------------------------------- tables

UNARY = [("LOGISTIC", {}, (1 / 256, -128)), ("TANH", {}, (1 / 128, 0)),
         ("HARD_SWISH", {}, None), ("LEAKY_RELU", {"alpha": 0.2}, None),
         ("RELU6", {}, None), ("RELU", {}, None), ("ELU", {}, None), ("GELU", {}, None),
         ("QUANTIZE", {}, None)]


def unary_model(op, dtype, shape, in_q, out_q, options, out_dtype=None):
    m = QuantModel()
    x = m.input("x", shape, dtype, *in_q)
    y = m.output("y", shape, out_dtype or dtype, *out_q)
    m.op(op, [x], [y], **options)
    return m.build()


@needs_native
@pytest.mark.parametrize("op,options,fixed,dtype", [
    (*case, dtype) for case in UNARY for dtype in (np.int8, np.uint8)
    if (case[0], dtype) != ("ELU", np.uint8)])  # ELU: int8 only in LiteRT
@pytest.mark.parametrize("seed", range(3))
def test_table_sweep(op, options, fixed, dtype, seed, isa):
    """Every input value (and a large random tensor split over threads): the C lookup
    gives the numpy kernel's table entries in every kernel set."""
    rng = np.random.default_rng(seed)
    in_q = random_qparams(rng, dtype, 0.02, 0.2)
    out_q = fixed if fixed is not None else random_qparams(rng, dtype, 0.02, 0.2)
    if fixed is not None and dtype == np.uint8:
        out_q = (fixed[0], fixed[1] + 128)
    out_dtype = dtype
    if op == "QUANTIZE" and seed == 2:  # int8 <-> uint8 requantization
        out_dtype = np.uint8 if dtype == np.int8 else np.int8
        out_q = random_qparams(rng, out_dtype, 0.02, 0.2)
    shape = (1, 601, 599, 3) if seed == 0 else (256,)  # seed 0: split over the threads
    x = full_range(rng, shape, dtype)
    if shape == (256,):
        x = np.arange(256, dtype=np.uint8).view(dtype)
    model = unary_model(op, dtype, shape, in_q, out_q, options, out_dtype)
    settings = SETTINGS if dtype == np.int8 and op != "QUANTIZE" else SETTINGS[:3]
    if op == "GELU":
        settings = SETTINGS[:3]
    assert_backends_equal(model, [x], native_ops.eval_lut, settings,
                          threads=(1, 2) if seed == 0 else (1,))


@needs_native
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_dequantize_table(dtype):
    """DEQUANTIZE per tensor: float(double(s) * (q - z)) for every q, looked up."""
    rng = np.random.default_rng(5)
    x = np.arange(256, dtype=np.uint8).view(dtype)
    for scale, zp in [random_qparams(rng, dtype), (3.0e-7, 0), (1234.5, 7)]:
        model = unary_model("DEQUANTIZE", dtype, (256,), (scale, zp), (None, None), {},
                            np.float32)
        out = assert_backends_equal(model, [x], native_ops.eval_lut, SETTINGS[:1])
        assert out.dtype == np.float32
        q = x.astype(np.float64) - zp
        np.testing.assert_array_equal(out, (np.float64(np.float32(scale)) * q).astype(np.float32))


# --------------------------------------------------------------------------- MEAN / SUM


def reduce_model(op, dtype, shape, axes, keep_dims, in_q, out_q):
    m = QuantModel()
    x = m.input("x", shape, dtype, *in_q)
    axis = m.const("axis", np.asarray(axes, np.int32), np.int32)
    kept = [1 if i in axes else d for i, d in enumerate(shape)] if keep_dims else \
        [d for i, d in enumerate(shape) if i not in axes]
    y = m.output("y", kept, dtype, *out_q)
    m.op(op, [x, axis], [y], keep_dims=keep_dims)
    return m.build()


@needs_native
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_sums_sweep(seed, op):
    """Random shapes and blocks of axes (NHWC's spatial mean among them), both types,
    keep_dims or not: the C sums give the numpy kernel's outputs."""
    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    rank = int(rng.integers(1, 5))
    shape = tuple(int(rng.integers(1, 12)) for _ in range(rank))
    first = int(rng.integers(0, rank))
    axes = list(range(first, int(rng.integers(first + 1, rank + 1))))
    if seed % 4 == 0 and rank == 4:
        shape, axes = (int(rng.integers(1, 3)), 17, 19, 40), [1, 2]  # GAP
    in_q = random_qparams(rng, dtype, 0.01, 0.1)
    out_q = random_qparams(rng, dtype, 0.01, 0.1) if op == "MEAN" else \
        (in_q[0] * float(np.prod([shape[a] for a in axes])) / 3.0, in_q[1])
    x = full_range(rng, shape, dtype)
    x.reshape(-1)[:3] = np.iinfo(dtype).max  # saturating sums
    model = reduce_model(op, dtype, shape, axes, bool(seed % 3), in_q, out_q)
    settings = SETTINGS if dtype == np.int8 or op == "MEAN" else SETTINGS[:3]
    if op == "SUM" and dtype == np.int8:  # LiteRT's reference SUM reads int8 as uint8
        settings = [s for s in settings if s[0] != "reference"]
    if dtype == np.uint8:
        settings = [s for s in settings if s[0] != "micro"]
    assert_backends_equal(model, [x], native_ops.eval_sums, settings, threads=(1,))


@needs_native
def test_sums_axes_not_one_block_stay_numpy():
    model = reduce_model("MEAN", np.int8, (2, 3, 4), [0, 2], True, (0.1, 3), (0.05, -2))
    x = full_range(np.random.default_rng(1), (2, 3, 4), np.int8)
    want, _ = _run(model, [x], False)
    got, evals = _run(model, [x], True)
    assert native_ops.eval_sums not in evals
    np.testing.assert_array_equal(got, want)


def test_sum_dims():
    assert native_ops.sum_dims((1, 7, 7, 32), (1, 2)) == (1, 49, 32)
    assert native_ops.sum_dims((2, 3, 4), (2,)) == (6, 4, 1)
    assert native_ops.sum_dims((2, 1, 4), (0, 2)) == (1, 8, 1)
    assert native_ops.sum_dims((2, 3, 4), (0, 2)) is None
    assert native_ops.sum_dims((5, 1), (1,)) == (5, 1, 1)


# --------------------------------------------------------------------------- pools


@needs_native
@pytest.mark.parametrize("seed", range(24))
def test_average_pool_sweep(seed, isa):
    """Random geometry (filters, strides, SAME / VALID), both types, fused activations:
    the C average pool gives the numpy kernel's outputs (rounding ties included)."""
    op = "AVERAGE_POOL_2D"
    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    shape = (int(rng.integers(1, 3)), int(rng.integers(kh, 24)), int(rng.integers(kw, 24)),
             int(rng.integers(1, 40)))
    if seed == 0:  # large: split over the threads
        shape, kh, kw = (1, 147, 147, 64), 3, 3
    padding = str(rng.choice(["SAME", "VALID"]))
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    q = random_qparams(rng, dtype, 0.01, 0.1)
    act = str(rng.choice(["NONE", "RELU", "RELU6"]))
    m = QuantModel()
    x = m.input("x", shape, dtype, *q)
    y = m.output("y", shape, dtype, *q)  # the interpreters compute the output shape
    m.op(op, [x], [y], version=2, padding=padding, stride_h=stride[0], stride_w=stride[1],
         filter_height=kh, filter_width=kw, fused_activation_function=act)
    settings = SETTINGS if dtype == np.int8 else SETTINGS[:3]
    assert_backends_equal(m.build(), [full_range(rng, shape, dtype)], eval_native_average,
                          settings, threads=(1, 2) if seed < 4 else (1,))


# --------------------------------------------------------------------------- QUANTIZE


def _float_inputs(rng, shape, scale):
    """Normal values, exact ties (k + 1/2) * s, values a hair from them, huge values,
    inf and NaN."""
    x = (rng.standard_normal(shape) * 60 * scale).astype(np.float32).reshape(-1)
    k = rng.integers(-200, 200, x.size // 4)
    x[:k.size] = ((k + 0.5) * np.float64(np.float32(scale))).astype(np.float32)
    x[k.size:2 * k.size] = np.nextafter(x[:k.size], np.float32(0))
    x[-8:] = [np.inf, -np.inf, np.nan, 3e38, -3e38, 0.49999997 * scale, -0.5 * scale, 0]
    return x.reshape(shape)


@needs_native
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8, np.int16])
def test_quantize_float_sweep(seed, out_dtype):
    """float32 -> q by XNNPACK's convert, TFLite's reference and optimized (NEON block +
    scalar tail) kernels: the C conversion gives the numpy kernel's values, NaN, inf,
    out-of-range values and rounding ties included."""
    rng = np.random.default_rng(seed)
    shape = (1, 601, 599, 3) if seed == 0 else (int(rng.integers(1, 40)), 13)
    scale, zp = random_qparams(rng, out_dtype, 0.001, 0.1)
    if out_dtype == np.int16:
        zp = 0
    m = QuantModel()
    x = m.input("x", shape, np.float32)
    # quantized_dimension 1: XNNPACK refuses the tensor, TFLite's optimized kernel runs
    y = m.b.tensor("y", shape, out_dtype, scale=scale, zero_point=zp,
                   quantized_dimension=seed % 2)
    m.outputs.append(y)
    m.op("QUANTIZE", [x], [y])
    settings = SETTINGS if out_dtype == np.int8 else SETTINGS[:3]
    assert_backends_equal(m.build(), [_float_inputs(rng, shape, scale)],
                          native_ops.eval_quantize, settings,
                          threads=(1, 2) if seed == 0 else (1,))


# --------------------------------------------------------------------------- SOFTMAX


@needs_native
@pytest.mark.parametrize("seed", range(10))
def test_softmax_table_sweep(seed):
    """TFLite's optimized (float table) int8 / uint8 softmax -- the default kernel set's:
    random rows, depths, betas and input scales, a row of equal values (ties)."""
    from edgelite.interpreter.kernels.softmax import eval_native_table

    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 300)))
    if seed == 0:
        shape = (64, 64, 96)  # split over the threads
    qmin = int(np.iinfo(dtype).min)
    m = QuantModel()
    x = m.input("x", shape, dtype, float(np.float32(rng.uniform(0.01, 0.5))),
                int(rng.integers(qmin, qmin + 256)))
    y = m.output("y", shape, dtype, 1 / 256, qmin)
    m.op("SOFTMAX", [x], [y], beta=float(rng.uniform(0.3, 2.0)))
    feeds = full_range(rng, shape, dtype)
    feeds[0, 0, :] = feeds[0, 0, 0]  # a row of equal values
    out = assert_backends_equal(m.build(), [feeds], eval_native_table,
                                [("default", "double")])
    assert len(np.unique(out)) > 1


# --------------------------------------------------------------------------- a whole model

NET = MODELS / "native_ops_net.tf_int8.tflite"


@needs_native
@pytest.mark.parametrize("kernels,rounding", SETTINGS)
@pytest.mark.parametrize("threads", [1, 2])
def test_model_identical_on_both_backends(kernels, rounding, threads):
    """TF's int8 file of a small net with every op the native element-wise kernels take
    (models/builders/native_ops_net.py): both backends give the same bytes, the native
    one runs those kernels (as native steps where bound), and both equal LiteRT's outputs (LiteRT's two kernel sets)."""
    from tests.support.runtimes import run_litert

    model = NET.read_bytes()
    x = np.random.default_rng(11).uniform(-1, 1, (4, 1, 32, 32, 3)).astype(np.float32)
    # the small net runs its binary, table and QUANTIZE ops as native steps (no eval), and
    # its MEAN too in the default set (XNNPACK's float32 stage: native/steps.c mean_step)
    expected = {native.module.run_native_step}
    bound = {native_ops.eval_binary, native_ops.eval_lut, native_ops.eval_quantize}
    (bound if kernels == "default" else expected).add(native_ops.eval_sums)
    for sample in x:
        kw = dict(kernels=kernels, rounding=rounding, num_threads=threads)
        want, _ = _run(model, [sample], False, **kw)
        got, evals = _run(model, [sample], True, **kw)
        assert expected <= evals and not bound & evals
        np.testing.assert_array_equal(got, want)
        if kernels != "micro" and rounding == "double":
            np.testing.assert_array_equal(got, run_litert(model, [sample], kernels)[0])
