"""The native float32 kernels of native/transcend_f32.c on vexp.h's e^x: LOGISTIC, TANH,
EXP, ELU and HARD_SWISH swept over every float32 input class against LiteRT's two
kernel sets (the bounds docs/native-float.md records), against the numpy kernels, across
the baseline / AVX2 builds and thread splits; GELU and SOFTMAX against LiteRT's spread; models
against TensorFlow's outputs; and the float convolutions' bias + activation stage against
the numpy stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native

from ..test_conv import ACTIVATIONS, conv_model
from .test_native_depthwise_f32 import _run, avx2, needs_native  # noqa: F401 (a fixture)

MODELS = Path(__file__).resolve().parents[4] / "models"
OPS = {"LOGISTIC": "logistic_f32", "TANH": "tanh_f32", "EXP": "exp_f32", "ELU": "elu_f32",
       "HARD_SWISH": "hard_swish_f32"}
# Max distance in ulp from LiteRT's reference kernel (std::exp / std::tanh / std::expm1;
# ELU: TFLite's builtin kernel, BUILTIN_REF has none) over every finite output, float32
# denormals included; LiteRT's default kernels (XNNPACK) measure 4 (TANH), 3 (ELU), 60
# (EXP) and more for LOGISTIC near the denormal range, which they flush to 0. HARD_SWISH is
# plain arithmetic in the reference's order: exact.
BOUND = {"LOGISTIC": 2, "TANH": 2, "EXP": 1, "ELU": 1, "HARD_SWISH": 0}
REFERENCE = {"ELU": "optimized"}
# values each op returns exactly (the reference's own value there): saturation, +-0
SATURATED = {"LOGISTIC": lambda x: (x > 16.619047164916992188) | (x < -104),
             "TANH": lambda x: np.abs(x) >= 9.1, "EXP": lambda x: (x > 88.73) | (x < -104),
             "ELU": lambda x: (x >= 0) | (x < -17.4), "HARD_SWISH": lambda x: x == x}


def _model(op: str, shape):
    from tests.interpreter.tflite_builder import ModelBuilder

    b = ModelBuilder()
    x, y = b.tensor("x", shape), b.tensor("y", shape)
    b.op(op, [x], [y])
    return b.build([x], [y])


def float_classes(rng, n: int = 4000) -> np.ndarray:
    """Every float32 input class: random bit patterns (every exponent, NaNs with payloads),
    a dense sweep over the ops' interesting range, tiny normals, denormals of both signs,
    the cut-offs and their neighbours, +-0, +-inf, NaN, the overflow / underflow edges."""
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = np.linspace(-110, 100, 4 * n, dtype=np.float32)
    near0 = np.linspace(-1, 1, n, dtype=np.float32) * np.float32(10.0) ** rng.integers(
        -30, 1, n).astype(np.float32)
    den = rng.integers(1, 1 << 23, n // 4, dtype=np.uint32).view(np.float32)
    edges = np.float32([16.619047164916992188, -9.0, 9.01, 9.1, 88.72284, 88.7229, -87.33655,
                        -103.97208, -104.0, 1e-4, -1e-4, 2.0**-13, 2.0**-12, -(2.0**-12)])
    near = np.concatenate([np.nextafter(edges, np.float32(np.inf)),
                           np.nextafter(edges, np.float32(-np.inf))])
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan])
    return np.concatenate([special, edges, near, bits, dense, near0, den, -den])


def ulp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in float32 steps (signed values on one integer line; -0 == +0)."""
    def line(v):
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(line(a) - line(b))


def _litert(op: str, x: np.ndarray, kernels: str) -> np.ndarray:
    from tests.support.runtimes import run_litert

    return run_litert(_model(op, x.shape), [x], kernels)[0]


def _native(op: str, x: np.ndarray, kernel: str | None = None) -> np.ndarray:
    out = np.empty_like(x)
    getattr(native.module, kernel or OPS[op])(x, out, 0, x.size)
    return out


def _assert_specials(op: str, got: np.ndarray, want: np.ndarray, x: np.ndarray,
                     saturated: bool = True) -> None:
    """NaN where ``want`` has NaN, infinities, signed zeros and (``saturated``) the values
    past the saturation points exactly ``want``'s."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{op}: NaN")
    exact = ~np.isfinite(x) | ~np.isfinite(want) | (want == 0)
    if saturated:
        exact |= SATURATED[op](x)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"{op}: special values")
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


@needs_native
@pytest.mark.parametrize("op", list(OPS))
def test_native_within_litert_spread(op, avx2):
    """Every input class, both builds of the C loops: within BOUND ulp of LiteRT's
    reference kernel, no further from it than LiteRT's default kernels are (on outputs
    both give as normal floats), special values exactly the reference's."""
    x = float_classes(np.random.default_rng(10))
    want = _litert(op, x, REFERENCE.get(op, "reference"))
    default = _litert(op, x, "default")
    got = _native(op, x)
    _assert_specials(op, got, want, x)
    finite = np.isfinite(want) & np.isfinite(got)
    worst = int(ulp(got[finite], want[finite]).max())
    assert worst <= BOUND[op], f"{op}: {worst} ulp from LiteRT's reference kernel"
    tiny = np.finfo(np.float32).tiny
    normal = finite & np.isfinite(default) & (np.abs(want) >= tiny) & (np.abs(default) >= tiny)
    spread = int(ulp(default[normal], want[normal]).max())
    assert int(ulp(got[normal], want[normal]).max()) <= spread, (op, spread)


@needs_native
@pytest.mark.parametrize("op", list(OPS))
def test_native_builds_and_backends_agree(op):
    """The baseline and AVX2 builds give identical floats; through the interpreter the C
    kernel runs (one native step on 1 thread, pool slices on 2: identical) and stays
    within BOUND + 4 ulp of the numpy kernel (numpy's exp / tanh / expm1 are up to 4 ulp
    from std::exp here; HARD_SWISH equal), with the special values identical."""
    x = float_classes(np.random.default_rng(11))
    got = _native(op, x)
    if native.module.has_avx2():
        before = native.module.allow_avx2(False)
        try:
            np.testing.assert_array_equal(_native(op, x), got)
        finally:
            native.module.allow_avx2(before)
    shape = (1, 1, 1, x.size)
    model = _model(op, shape)
    x4 = x.reshape(shape)
    one, two = (_run(model, x4, native=True, num_threads=t) for t in (1, 2))
    np.testing.assert_array_equal(one, got.reshape(shape))
    np.testing.assert_array_equal(two, one)
    with np.errstate(all="ignore"):
        numpy = _run(model, x4, native=False)
    _assert_specials(op, one, numpy, x4, saturated=False)  # np.tanh(9.1) < 1
    finite = np.isfinite(numpy)
    limit = BOUND[op] + 4 if BOUND[op] else 0  # HARD_SWISH: the same float32 steps
    assert int(ulp(one[finite], numpy[finite]).max()) <= limit


@needs_native
@pytest.mark.parametrize("op", list(OPS))
def test_native_step_binds_any_size(op, monkeypatch):
    """Small and large tensors (a 112 x 112 x 32 swish input included) bind the C kernel
    (as a native step: the large one split over the C pool at 2 threads, see
    test_native_steps_split_over_the_c_pool)."""
    calls = []
    name = OPS[op]
    for fn in (name, name + "_step"):
        real = getattr(native.module, fn)
        monkeypatch.setattr(native.module, fn,
                            lambda *a, real=real, fn=fn: calls.append(fn) or real(*a))
    for shape in ((1, 5, 7, 3), (1, 112, 112, 32)):
        x = np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 4
        for threads in (1, 2):
            calls.clear()
            got = _run(_model(op, shape), x, native=True, num_threads=threads)
            assert calls, f"{op} {shape} on {threads} threads: the C kernel did not run"
            assert np.array_equal(got, _native(op, x.reshape(-1)).reshape(shape))


@needs_native
@pytest.mark.parametrize("op", list(OPS) + ["SOFTMAX"])
def test_native_steps_split_over_the_c_pool(op, monkeypatch):
    """A large float element-wise op (SOFTMAX: rows) stays one native step at any thread
    count; from 2 threads its values are cut into tasks on the C pool (HARD_SWISH, a few
    float operations a value, only from SPLIT_ELEMENTS values), with the same bits."""
    from edgelite.interpreter.kernels.common import native_split

    bind = (OPS.get(op) or "softmax_f32") + "_step"
    splits = []
    real = getattr(native.module, bind)
    monkeypatch.setattr(native.module, bind, lambda *a: splits.append(a[-2:]) or real(*a))
    shape = (1, 56, 56, 48)            # 150,528 values: between the two thresholds
    model = _softmax_model(shape, 1.0) if op == "SOFTMAX" else _model(op, shape)
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32) * 6
    results = []
    for threads in (1, 2, 3):
        splits.clear()
        interp = Interpreter(model_content=model, native=True, num_threads=threads)
        interp.allocate_tensors()
        steps = [s for s in interp._steps if isinstance(s[1], native.module.NativeStep)]
        assert len(steps) == len(interp._steps) == 1
        threads_bound, tasks = splits[-1]
        assert threads_bound == threads
        cheap = op == "HARD_SWISH"
        assert native_split.SPLIT_TRANSCENDENTAL < x.size < native_split.SPLIT_ELEMENTS
        assert tasks == (1 if threads == 1 or cheap else 2 * threads)
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        results.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    for got in results[1:]:
        np.testing.assert_array_equal(got.view(np.int32), results[0].view(np.int32))


@needs_native
def test_float_steps_refuse_bad_splits():
    x, out = np.zeros(8, np.float32), np.zeros(8, np.float32)
    assert native.module.logistic_f32_step(x, out, 2, 4) is not None
    for threads, tasks in ((0, 1), (65, 1), (2, 0)):
        with pytest.raises(ValueError, match="bad threads or tasks"):
            native.module.logistic_f32_step(x, out, threads, tasks)
        with pytest.raises(ValueError, match="bad threads or tasks"):
            native.module.softmax_f32_step(x, out, 4, 1.0, threads, tasks)


@needs_native
@pytest.mark.parametrize("approximate", [False, True])
def test_native_gelu_within_litert_spread(approximate, avx2):
    """GELU (exact: erfc; approximate: tanh) over every input class: NaN where LiteRT's
    reference kernel has it, the largest absolute error from the reference no larger than
    LiteRT's default kernels' (near x = -5 the tanh form cancels: ulp distances say
    little there); the exact form equals the numpy kernel (the same erfcc in double)."""
    from tests.interpreter.tflite_builder import ModelBuilder
    from tests.support.runtimes import run_litert

    x = np.concatenate([float_classes(np.random.default_rng(12)),
                        np.linspace(-12, 12, 20001, dtype=np.float32)])
    b = ModelBuilder()
    t, y = b.tensor("x", x.shape), b.tensor("y", x.shape)
    b.op("GELU", [t], [y], approximate=approximate)
    model = b.build([t], [y])
    got = _native("GELU", x, "gelu_tanh_f32" if approximate else "gelu_erfc_f32")
    np.testing.assert_array_equal(_run(model, x, native=True), got)
    want, default = (run_litert(model, [x], k)[0] for k in ("reference", "default"))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want) & np.isfinite(default)
    err = lambda a: float(np.abs(a[finite].astype(np.float64) - want[finite]).max())  # noqa: E731
    assert err(got) <= err(default)
    if not approximate:
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got, _run(model, x, native=False))


def _softmax_model(shape, beta: float):
    from tests.interpreter.tflite_builder import ModelBuilder

    b = ModelBuilder()
    x, y = b.tensor("x", shape), b.tensor("y", shape)
    b.op("SOFTMAX", [x], [y], beta=beta)
    return b.build([x], [y])


@needs_native
@pytest.mark.parametrize("depth,beta,scale", [(1000, 1.0, 5.0), (7, 0.5, 30.0), (64, 2.0, 1.0),
                                              (3, 1.0, 100.0), (4096, 1.0, 10.0), (1, 1.0, 1.0)])
def test_native_softmax_within_litert_spread(depth, beta, scale, avx2, monkeypatch):
    """float32 SOFTMAX rows (NaN, +-inf and all -inf rows among them): the C kernel runs
    (1 and 2 threads, identical), NaN exactly where LiteRT's reference kernel has it, and
    on normal outputs no further from the reference than LiteRT's default kernels or the
    numpy kernel are, + 2 ulp (the three sum the row in different orders; the reference
    left to right in float32, the C kernel in 8 lanes)."""
    from tests.support.runtimes import run_litert

    rng = np.random.default_rng(depth)
    x = (rng.standard_normal((40, depth)) * scale).astype(np.float32)
    x[0, 0], x[1, :], x[2, -1], x[3, 0] = np.nan, -np.inf, np.inf, -np.inf
    model = _softmax_model(x.shape, beta)
    calls = []
    for fn in ("softmax_f32", "softmax_f32_step"):
        real = getattr(native.module, fn)
        monkeypatch.setattr(native.module, fn, lambda *a, real=real: calls.append(1) or real(*a))
    got = _run(model, x, native=True)
    assert calls, "the C SOFTMAX did not run"
    np.testing.assert_array_equal(_run(model, x, native=True, num_threads=2), got)
    want = run_litert(model, [x], "reference")[0]
    default = run_litert(model, [x], "default")[0]
    with np.errstate(all="ignore"):
        numpy = _run(model, x, native=False)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(want) & (np.abs(want) >= tiny) & (np.abs(default) >= tiny)
    spread = max(int(ulp(default[normal], want[normal]).max()),
                 int(ulp(numpy[normal], want[normal]).max()))
    assert int(ulp(got[normal], want[normal]).max()) <= spread + 2
    np.testing.assert_allclose(got.sum(axis=1)[4:], 1.0, rtol=1e-5)


def _golden_outputs(stem: str) -> tuple[dict, dict]:
    golden = np.load(MODELS / f"{stem}.golden.npz")
    inputs = {k: golden[k] for k in golden.files if k == "input" or k.startswith("inputs/")}
    outputs = {k: golden[k] for k in golden.files if k == "output" or k.startswith("outputs/")}
    return inputs, outputs


@needs_native
@pytest.mark.parametrize("stem,ran", [
    ("efficientnet_like", {"logistic_f32", "softmax_f32"}),
    ("op_zoo_math", {"logistic_f32", "tanh_f32", "exp_f32", "elu_f32", "softmax_f32"}),
])
def test_models_against_tensorflow(stem, ran, monkeypatch):
    """TensorFlow's own .tflite of the swish / squeeze-excite sample and of the op zoo
    (sigmoid, tanh, exp, softplus's EXP, elu, softmax) on both backends: each output within 2e-5
    (relative to its magnitude) of TensorFlow's, the C kernels having run."""
    calls = set()
    for fn in ran:
        for name in (fn, fn + "_step"):
            real = getattr(native.module, name)
            monkeypatch.setattr(native.module, name,
                                lambda *a, real=real, fn=fn: calls.add(fn) or real(*a))
    inputs, outputs = _golden_outputs(stem)
    for flag in (True, False):
        interp = Interpreter(model_path=str(MODELS / f"{stem}.tf.tflite"), native=flag)
        interp.allocate_tensors()
        ins = interp.get_input_details()
        by_name = {d["name"]: d for d in interp.get_output_details()}
        for sample in range(2):
            for d, value in zip(ins, inputs.values()):
                interp.set_tensor(d["index"], value[sample:sample + 1].astype(np.float32))
            interp.invoke()
            for key, want in outputs.items():
                d = by_name.get(key.split("/")[-1]) or interp.get_output_details()[0]
                got = interp.get_tensor(d["index"])
                w = want[sample:sample + 1].reshape(got.shape)
                np.testing.assert_allclose(got, w, rtol=2e-5, atol=2e-5 * np.abs(w).max(),
                                           err_msg=f"{stem} {key} native={flag}")
    assert calls == ran, calls


@needs_native
@pytest.mark.parametrize("seed", range(16))
def test_float_conv_output_stage_native_equals_numpy(seed, avx2, monkeypatch):
    """Random float CONV_2Ds (pointwise and im2col strategies, strides,
    paddings, activations, with and without bias) on 1 and 2 threads: the C
    bias + activation stage runs and gives exactly the numpy stage's floats (the
    one-group step of native_conv_blas turned off: it has its own tests)."""
    from edgelite.interpreter.kernels.common import native_conv_blas
    monkeypatch.setattr(native_conv_blas, "_ready", False)
    monkeypatch.setattr(native_conv_blas, "packed", lambda: False)
    rng = np.random.default_rng(100 + seed)
    c, o = int(rng.integers(1, 20)), int(rng.integers(1, 40))
    kh, kw = (1, 1) if seed % 4 == 0 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    size = 70 if seed == 1 else int(rng.integers(6, 20))
    x = rng.standard_normal((int(rng.integers(1, 3)), size, size, c)).astype(np.float32)
    filt = rng.standard_normal((o, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) if seed % 3 else None
    pointwise = seed % 4 == 0
    model = conv_model(x.shape, filt, bias, padding="VALID" if pointwise else
                       str(rng.choice(["SAME", "VALID"])),
                       stride=(1, 1) if pointwise else (int(rng.integers(1, 3)),) * 2,
                       act=str(rng.choice(ACTIVATIONS)))
    calls = []
    real = native.module.bias_act_f32
    monkeypatch.setattr(native.module, "bias_act_f32",
                        lambda *a: calls.append(1) or real(*a))
    for threads in (1, 2):
        want = _run(model, x, native=False, num_threads=threads)
        got = _run(model, x, native=True, num_threads=threads)
        np.testing.assert_array_equal(got, want, err_msg=f"{threads} threads")
    assert calls, "the native output stage did not run"
