"""The converter's quantization arithmetic (quantize/qarith.py) and its one model runner
(runner.py): one definition each, bit-exact with LiteRT's QUANTIZE / DEQUANTIZE.

Scales in the QUANTIZE comparisons are powers of two, so x / s is exact in float32 (LiteRT's
division) and in float64 (the converter's): the rounding and clamping are what is compared.
"""

import ast
import re

import numpy as np
import pytest

from edgelite.converter.quantize import params, qarith
from edgelite.converter.runner import ModelRunner
from edgelite.interpreter import quant_math
from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from tests.conftest import ROOT
from tests.interpreter.tflite_builder import QuantModel
from tests.support import run_edgelite, run_litert

TIES = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]
AWAY = [-3, -2, -1, 1, 2, 3]
F32_BELOW_HALF = float(np.nextafter(np.float32(0.5), np.float32(0)))  # 0.49999997
RANGES = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32768, 32767)}


def test_one_rounding_function():
    assert qarith.round_half_away is quant_math.round_half_away
    assert params.round_half_away is quant_math.round_half_away


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_ties_round_away_from_zero_in_both_signs(dtype):
    r = qarith.round_half_away(np.array(TIES, dtype))
    assert r.dtype == dtype
    np.testing.assert_array_equal(r, AWAY)
    assert qarith.round_half_away(dtype(-2.5)) == -3.0
    np.testing.assert_array_equal(np.signbit(qarith.round_half_away(np.array([-0.4, 0.4], dtype))),
                                  [True, False])  # -0.4 -> -0.0, as std::round


def test_rounding_is_exact_next_to_ties():
    """floor(|x| + 0.5) rounds the sum first and gets these wrong; std::round does not."""
    f32 = np.array([F32_BELOW_HALF, -F32_BELOW_HALF, 2**23 + 1, -(2**23 + 1), 2**24 - 1,
                    np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(qarith.round_half_away(f32),
                                  [0, 0, 2**23 + 1, -(2**23 + 1), 2**24 - 1, np.inf, -np.inf])
    f64 = np.array([0.5 - 2**-54, 2.0**52 + 1, -(2.0**52 + 1)])
    np.testing.assert_array_equal(qarith.round_half_away(f64), [0, 2.0**52 + 1, -(2.0**52 + 1)])
    assert np.isnan(qarith.round_half_away(np.float32(np.nan)))
    # float32 values are exact in float64, where |x| + 0.5 does not round for |x| < 2^52
    x = np.random.default_rng(0).standard_normal(10_000).astype(np.float32) * 300
    x = np.concatenate([x, np.trunc(x) + np.float32(0.5), np.trunc(x) - np.float32(0.5)])
    x64 = x.astype(np.float64)
    np.testing.assert_array_equal(qarith.round_half_away(x),
                                  np.copysign(np.floor(np.abs(x64) + 0.5), x64))


def _one_op(op: str, shape, src, dst, scale, zero_point, axis: int = 0) -> bytes:
    m = QuantModel()
    quant = dict(scale=scale, zero_point=zero_point, quantized_dimension=axis)
    x = m.b.tensor("x", shape, src, **(quant if src != np.float32 else {}))
    y = m.b.tensor("y", shape, dst, **(quant if dst != np.float32 else {}))
    m.inputs.append(x)
    m.outputs.append(y)
    m.op(op, [x], [y])
    return m.build()


def _grid(scale: float, lo: int, hi: int) -> np.ndarray:
    """Ties of both signs, values next to ties, and values clamped at both ends, as reals."""
    k = np.arange(-6, 6, dtype=np.float64)
    steps = np.concatenate([k + 0.5, k, [F32_BELOW_HALF, -F32_BELOW_HALF, 0.0],
                            [lo - 3.5, lo - 0.5, hi + 0.5, hi + 3.5, 1e6, -1e6]])
    return (steps * scale).astype(np.float32)


@pytest.mark.parametrize("dtype,zero_point", [(np.int8, -3), (np.int8, 0), (np.uint8, 128),
                                              (np.uint8, 0), (np.int16, 0), (np.int16, 7)])
def test_quantize_matches_litert(dtype, zero_point):
    lo, hi = RANGES[dtype]
    scale = 0.25
    x = _grid(scale, lo - zero_point, hi - zero_point)
    model = _one_op("QUANTIZE", x.shape, np.float32, dtype, scale, zero_point)
    (expected,) = run_litert(model, [x], "reference")
    assert expected.min() == lo and expected.max() == hi           # both clamps are hit
    for ours in (qarith.quantize(x, scale, zero_point, dtype),      # converter constants
                 quant_math.quantize(x, scale, zero_point, dtype)):  # running models' inputs
        assert ours.dtype == dtype
        np.testing.assert_array_equal(ours, expected)
    if dtype != np.int16:   # edgelite's QUANTIZE kernel (int8 / uint8 outputs)
        np.testing.assert_array_equal(run_edgelite(model, [x], "reference")[0], expected)


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_per_channel_quantize_matches_litert(axis):
    shape = (3, 2, 3)
    scales = np.array([0.25, 0.5, 0.125], np.float32)
    x = np.random.default_rng(1).integers(-300, 300, shape).astype(np.float32) * 0.0625 + 0.03125
    x.reshape(-1)[:6] = [0.0625, -0.0625, 0.125, -0.375, 40.0, -40.0]   # ties, clamps
    dim = axis % len(shape)
    model = _one_op("QUANTIZE", shape, np.float32, np.int8, scales, np.zeros(3, np.int64), dim)
    (expected,) = run_litert(model, [x], "reference")
    np.testing.assert_array_equal(qarith.quantize(x, scales, 0, np.int8, axis), expected)
    for c in range(3):  # per channel = per tensor on each slice
        np.testing.assert_array_equal(
            np.take(expected, c, axis), qarith.quantize(np.take(x, c, axis), scales[c], 0, np.int8))


def test_quantize_narrow_range_and_missing_axis():
    w = np.array([-1000.0, -127.5, 126.5, 1000.0])
    np.testing.assert_array_equal(qarith.quantize(w, 1.0, 0, np.int8, qmin=-127, qmax=127),
                                  [-127, -127, 127, 127])
    with pytest.raises(ValueError, match="2 quantization parameters need an axis"):
        qarith.quantize(np.zeros((2, 2)), [1.0, 2.0], 0, np.int8)


@pytest.mark.parametrize("dtype,zero_point", [(np.int8, -5), (np.uint8, 131), (np.int16, 0)])
def test_dequantize_matches_litert(dtype, zero_point):
    lo, hi = RANGES[dtype]
    q = np.linspace(lo, hi, 257).round().astype(dtype)
    scale = float(np.float32(0.0123))   # not a power of two: the float32 rounding shows
    model = _one_op("DEQUANTIZE", q.shape, dtype, np.float32, scale, zero_point)
    (expected,) = run_litert(model, [q], "reference")
    real = qarith.dequantize(q, scale, zero_point)
    assert real.dtype == np.float64
    np.testing.assert_array_equal(real.astype(np.float32), expected)
    np.testing.assert_array_equal(quant_math.dequantize(q, scale, zero_point), expected)


def test_per_channel_dequantize_matches_litert():
    scales = np.array([0.0123, 0.5, 3e-5], np.float32)
    zero_points = np.zeros(3, np.int64)
    q = np.random.default_rng(2).integers(-128, 128, (2, 3)).astype(np.int8)
    model = _one_op("DEQUANTIZE", q.shape, np.int8, np.float32, scales, zero_points, 1)
    (expected,) = run_litert(model, [q], "reference")
    np.testing.assert_array_equal(qarith.dequantize(q, scales, 0, 1).astype(np.float32),
                                  expected)


def test_nudged_zero_point():
    np.testing.assert_array_equal(qarith.nudged_zero_point(np.array(TIES), -128, 127), AWAY)
    np.testing.assert_array_equal(qarith.nudged_zero_point(np.float32([7.5, 8.5]), 0, 255),
                                  [8, 9])
    assert qarith.nudged_zero_point(-128 + 127.5, -128, 127) == -1   # [-1, 1] in int8
    assert qarith.nudged_zero_point(300.0, 0, 255) == 255


# --------------------------------------------------------------------------- the runner


def _int8_io_model() -> bytes:
    """int8 input (scale 1/4, zp -3) -> DEQUANTIZE -> float output."""
    return _one_op("DEQUANTIZE", [1, 8], np.int8, np.float32, 0.25, -3)


def test_runner_feeds_like_litert_quantize_and_reads_like_dequantize():
    runner = ModelRunner(_int8_io_model(), keep_all=True)
    x = _grid(0.25, -125, 130)[:8].reshape(1, 8)
    (out,) = runner.run({"x": x.reshape(8)})          # a missing batch dim is added
    quantize = _one_op("QUANTIZE", [1, 8], np.float32, np.int8, 0.25, -3)
    (stored,) = run_litert(quantize, [x], "reference")
    np.testing.assert_array_equal(runner.stored(runner.inputs[0]["index"]), stored)
    (expected,) = run_litert(_int8_io_model(), [stored], "reference")
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(runner.tensor("x"), expected)     # a quantized tensor, real
    runner.run({"x": stored})                          # int8 data is taken as stored values
    np.testing.assert_array_equal(runner.stored(runner.inputs[0]["index"]), stored)


def test_runner_refuses_bad_samples():
    runner = ModelRunner(_int8_io_model(), label="m.tflite")
    with pytest.raises(ShapeError, match=r"m.tflite: input 'x' expects one sample of shape "
                                         r"\[1, 8\], the data holds samples of shape \[9\]"):
        runner.run({"x": np.zeros(9, np.float32)})
    with pytest.raises(EdgeliteError, match=r"m.tflite: the sample has no value for input 'x' "
                                            r"\(it has \['y'\]\)"):
        runner.run({"y": np.zeros(8, np.float32)})
    ids = QuantModel()
    x = ids.input("ids", [2], np.int32)
    y = ids.output("y", [2], np.int32)
    ids.op("ABS", [x], [y])
    runner = ModelRunner(ids.build())
    assert runner.run({"ids": np.array([-3.0, 4.0], np.float32)})[0].tolist() == [3, 4]
    with pytest.raises(DTypeError, match="input 'ids' is int32 without quantization "
                                         "parameters; give int32 data"):
        runner.run({"ids": np.array([1.5, 2.0])})


# --------------------------------------------------------------------------- one definition

HALF_AWAY_COPY = re.compile(r"floor\(\s*(np\.)?(abs|absolute)\(|copysign\(\s*(np\.)?floor\(")


def _sources(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def _calls(text: str, name: str) -> bool:
    """Whether the module's code (not its docstrings or comments) calls `name`."""
    return any(isinstance(node, ast.Call) and name in (getattr(node.func, "id", None),
                                                       getattr(node.func, "attr", None))
               for node in ast.walk(ast.parse(text)))


def test_half_away_rounding_is_written_once():
    """floor(|x| + 0.5) is written nowhere (interpreter/quant_math.round_half_away computes
    x - trunc(x), which is exact); in the converter only qarith.py calls round_half_away."""
    copies = [p for p, text in _sources("converter", "api", "cli", "interpreter")
              if HALF_AWAY_COPY.search(text)
              or "def round_half_away" in text and p != "interpreter/quant_math.py"]
    assert copies == []
    callers = [p for p, text in _sources("converter") if _calls(text, "round_half_away")]
    assert callers == ["converter/quantize/qarith.py"]


def test_models_run_through_one_runner():
    """Calibration, equalization, bias correction, selective search, constant folding,
    compare / eval and op replay construct no Interpreter of their own."""
    owners = [p for p, text in _sources("converter", "api") if _calls(text, "Interpreter")]
    # graph_model.py builds the interpreter over an IR graph for shape inference (which only
    # allocates: it reads planned shapes) and constant folding (one constant op at a time).
    assert owners == ["converter/graph_model.py", "converter/runner.py"]
