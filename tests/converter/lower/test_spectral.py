"""converter/lower/spectral.py: RFFT / RFFT2D, ComplexAbs, Real, Imag, Complex of constants,
BroadcastArgs, one small graph each; references are numpy's FFT (TF's spectral_ops.cc:
"Equivalent to np.fft.rfft"), every model also run in LiteRT."""

import numpy as np
import pytest

from edgelite.errors import DTypeError, GraphError, ShapeError, UnsupportedOpError

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode

from .lowering import (F32, I32, I64, check, floats, graph, rng, run,
                       runs_in_edgelite_and_litert)

C64 = np.dtype(np.complex64)
COVERED = {"RFFT", "RFFT2D", "ComplexAbs", "Real", "Imag", "Complex", "BroadcastArgs"}

RFFT_OPS = ["EXPAND_DIMS", "RFFT2D", "SQUEEZE"]  # TF's ConvertRfftToRfft2d


def _rfft(g, x: str, n: int, name: str = "z") -> str:
    g.const(f"{name}/n", np.array([n], np.int32))
    return g.node(name, "RFFT", [x, f"{name}/n"], Treal=F32, Tcomplex=C64)


@pytest.mark.parametrize("shape, n", [((3, 256), 256), ((2, 5, 200), 256), ((4, 300), 128),
                                      ((64,), 64)])
@pytest.mark.parametrize("op, part, tfl", [("ComplexAbs", np.abs, "COMPLEX_ABS"),
                                           ("Real", np.real, "REAL"), ("Imag", np.imag, "IMAG")])
def test_rfft_then_a_real_part(shape, n, op, part, tfl):
    """RFFT crops / zero-pads the last axis to fft_length (spectral_ops.cc), then the
    magnitude, real or imaginary part: float32 out of a complex64 tensor in the model."""
    x = floats(rng(), *shape)
    g = graph(x=shape)
    _rfft(g, "x", n)
    g.node("y", op, ["z"], T=C64, Tout=F32)
    want = part(np.fft.rfft(x.astype(np.float64), n=n)).astype(np.float32)
    check(g, {"x": x}, want, RFFT_OPS + [tfl], atol=2e-5 * np.abs(want).max(),
          lowered={"EXPAND_DIMS": 1, "RFFT2D": 1, "SQUEEZE": 1, tfl: 1})


@pytest.mark.parametrize("width, n", [(20, 40), (50, 12), (7, 7)])
def test_rfft_of_other_lengths_is_a_dft_matrix(width, n):
    """A length TFLite's RFFT2D refuses: two constant DFT matrices (re, im) after the
    passes FULLY_CONNECTED ops; zero-padded (20 -> 40) or cropped (50 -> 12) as RFFT."""
    x = floats(rng(), 3, width)
    g = graph(x=x.shape)
    _rfft(g, "x", n)
    g.node("re", "Real", ["z"], T=C64, Tout=F32)
    g.node("im", "Imag", ["z"], T=C64, Tout=F32)
    want = np.fft.rfft(x.astype(np.float64), n=n)
    check(g, {"x": x}, [np.real(want).astype(np.float32), np.imag(want).astype(np.float32)],
          ["FULLY_CONNECTED", "FULLY_CONNECTED"], outputs=["re", "im"], atol=1e-5)


def test_rfft2d():
    x = floats(rng(), 2, 3, 6)
    g = graph(x=x.shape)
    g.const("n", np.array([4, 8], np.int32))
    g.node("z", "RFFT2D", ["x", "n"], Treal=F32, Tcomplex=C64)
    g.node("y", "ComplexAbs", ["z"], T=C64, Tout=F32)
    want = np.abs(np.fft.rfft2(x.astype(np.float64), s=(4, 8))).astype(np.float32)
    check(g, {"x": x}, want, ["RFFT2D", "COMPLEX_ABS"], atol=1e-5)


def test_complex_of_constants_folds():
    """tf.signal.dct's twiddles: Complex(0, -k pi / 2N) of constants becomes one constant;
    multiplied by a spectrum's real part here through Real(Complex) -> REAL of a constant."""
    k = np.arange(5, dtype=np.float32)
    g = graph(x=(5,))
    g.const("re", np.float32(0.5))
    g.const("im", -k)
    g.node("c", "Complex", ["re", "im"], T=F32, Tout=C64)
    g.node("ci", "Imag", ["c"], T=C64, Tout=F32)
    g.node("y", "Mul", ["x", "ci"], T=F32)
    x = floats(rng(), 5)
    check(g, {"x": x}, x * -k, ["MUL"])


@pytest.mark.parametrize("index", [I32, I64])
def test_broadcast_args(index):
    """Computed shapes: BROADCAST_ARGS; the mel matrix's constant ones fold (no op)."""
    g = graph(a=((3,), index), b=((2,), index))
    g.node("y", "BroadcastArgs", ["a", "b"], T=index)
    a, b = np.array([2, 1, 5], index), np.array([4, 1], index)
    check(g, {"a": a, "b": b}, np.array([2, 4, 5], index), ["BROADCAST_ARGS"])
    g = graph(x=(3,))
    g.const("a", np.array([3, 1], index))
    g.const("b", np.array([1, 3], index))
    g.node("s", "BroadcastArgs", ["a", "b"], T=index)
    g.node("y", "BroadcastTo", ["x", "s"], T=F32, Tidx=index)
    x = floats(rng(), 3)
    check(g, {"x": x}, np.broadcast_to(x, (3, 3)), ["BROADCAST_TO"])


def test_int8_keeps_the_spectrum_float(tmp_path):
    """No integer RFFT2D / COMPLEX_ABS in LiteRT (OpDef: FLOAT_ONLY): an int8 model
    dequantizes the frames before them and quantizes the magnitudes after, and runs."""
    x = floats(rng(), 1, 64)
    g = graph(x=(-1, 64))
    _rfft(g, "x", 64)
    g.node("m", "ComplexAbs", ["z"], T=C64, Tout=F32)
    g.const("w", floats(rng(), 33, 4))
    g.node("y", "MatMul", ["m", "w"], T=F32, transpose_a=False, transpose_b=False)
    np.save(tmp_path / "x.npy", floats(rng(), 8, 64)[:, None])  # 8 samples of [1, 64]
    q = QuantizeOptions(QuantMode.INT8, calib=str(tmp_path / "x.npy"))
    result = convert_detailed(g.bytes(), ConvertOptions(quantize=q, input_shapes={"x": (1, 64)}))
    assert [op.type for op in result.graph.ops] == [
        "QUANTIZE", "EXPAND_DIMS", "DEQUANTIZE", "RFFT2D", "SQUEEZE", "COMPLEX_ABS", "QUANTIZE",
        "FULLY_CONNECTED", "DEQUANTIZE"]
    want = np.abs(np.fft.rfft(x.astype(np.float64))) @ floats(rng(), 33, 4)
    for (y,) in runs_in_edgelite_and_litert(result.model, [x]):
        assert np.abs(y - want).max() < 0.03 * np.abs(want).max()


def _dct_graph(n: int, tail: str = "Real"):
    """tf.signal.dct (type 2) as TF writes it: Pad to 2N, RFFT, StridedSlice [..., :N], times
    2 exp(-i pi k / 2N) (Complex, Exp, Mul of constants), Real."""
    g = graph(x=(3, n))
    g.const("pads", np.array([[0, 0], [0, n]], np.int32))
    g.node("padded", "Pad", ["x", "pads"], T=F32, Tpaddings=I32)
    _rfft(g, "padded", 2 * n)
    for name, v in (("b", [0, 0]), ("e", [0, n]), ("s", [1, 1])):
        g.const(name, np.array(v, np.int32))
    g.node("sliced", "StridedSlice", ["z", "b", "e", "s"], T=C64, Index=I32, begin_mask=3,
           end_mask=1)
    g.const("zeros", np.zeros(n, np.float32))
    g.const("angles", (-np.arange(n) * np.pi / (2 * n)).astype(np.float32))
    g.node("c", "Complex", ["zeros", "angles"], T=F32, Tout=C64)
    g.node("e_c", "Exp", ["c"], T=C64)
    g.const("two", np.complex64(2))
    g.node("twiddle", "Mul", ["two", "e_c"], T=C64)
    g.node("prod", "Mul", ["sliced", "twiddle"], T=C64)
    g.node("y", tail, ["prod"], T=C64, Tout=F32)
    return g


def dct2(x: np.ndarray) -> np.ndarray:
    """DCT-II without normalization (tf.signal.dct type 2, norm None):
    y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N)."""
    n = x.shape[-1]
    k, m = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return 2 * x.astype(np.float64) @ np.cos(np.pi * k * (2 * m + 1) / (2 * n)).T


def test_dct_on_builtins():
    """TF's converter needs Flex here (no complex STRIDED_SLICE / MUL in TFLite): edgelite
    slices and multiplies the real and imaginary parts; the imaginary product is dead."""
    x = floats(rng(), 3, 8)
    check(_dct_graph(8), {"x": x}, dct2(x).astype(np.float32),
          ["PAD"] + RFFT_OPS + ["REAL", "IMAG", "STRIDED_SLICE", "STRIDED_SLICE", "MUL", "MUL",
                                "SUB"], atol=1e-5)


@pytest.mark.parametrize("tail, part", [("Imag", np.imag), ("ComplexAbs", np.abs)])
def test_parts_reach_imag_and_abs(tail, part):
    x = floats(rng(), 3, 8)
    z = np.fft.rfft(np.pad(x.astype(np.float64), [(0, 0), (0, 8)]))[:, :8]
    twiddle = 2 * np.exp(-1j * np.arange(8) * np.pi / 16)
    r = run(_dct_graph(8, tail), {"x": x}, ["y"])
    np.testing.assert_allclose(r.outputs[0], part(z * twiddle), atol=1e-5)
    assert ("SQRT" if tail == "ComplexAbs" else "IMAG") in r.ops


def test_parts_through_identity_reshape_add_and_a_real_factor():
    """Identity and Reshape carry the parts; Add of two complex values adds the parts; a
    real tensor multiplies both."""
    x = floats(rng(), 2, 8)
    g = graph(x=(2, 8))
    _rfft(g, "x", 8)
    g.node("zi", "Identity", ["z"], T=C64)
    g.const("shape", np.array([10], np.int32))
    g.node("flat", "Reshape", ["zi", "shape"], T=C64, Tshape=I32)
    g.node("twice", "AddV2", ["flat", "flat"], T=C64)
    g.const("w", floats(rng(), 10))
    g.node("scaled", "Mul", ["twice", "w"], T=C64)
    g.node("y", "Imag", ["scaled"], T=C64, Tout=F32)
    want = np.imag(2 * np.fft.rfft(x.astype(np.float64)).reshape(10) * floats(rng(), 10))
    r = run(g, {"x": x}, ["y"])
    np.testing.assert_allclose(r.outputs[0], want, atol=1e-5)


def test_cast_of_a_spectrum_is_its_real_part():
    """Cast(complex64 -> float32 / int32 / complex64) of an RFFT: CAST of the complex64
    tensor (TF's converter writes the same; LiteRT's cast.cc casts the real part)."""
    x = floats(rng(), 2, 16) * 50
    g = graph(x=x.shape)
    _rfft(g, "x", 16)
    g.node("re", "Cast", ["z"], SrcT=C64, DstT=F32)
    g.node("re_int", "Cast", ["z"], SrcT=C64, DstT=I32)
    g.node("same", "Cast", ["z"], SrcT=C64, DstT=C64)
    g.node("im", "Imag", ["same"], T=C64, Tout=F32)
    z = np.fft.rfft(x.astype(np.float64)).astype(np.complex64)
    check(g, {"x": x}, [z.real, np.trunc(z.real).astype(np.int32), z.imag],
          RFFT_OPS + ["CAST", "CAST", "IMAG"], outputs=["re", "re_int", "im"], atol=1e-4)


def test_cast_of_parts_is_the_real_part():
    """A value carried as parts (the DCT's product): Cast to float32 is its real part, to
    int32 a CAST of it."""
    x = floats(rng(), 3, 8)
    g = _dct_graph(8, tail="Identity")
    g.node("re", "Cast", ["y"], SrcT=C64, DstT=F32)
    g.node("re_int", "Cast", ["y"], SrcT=C64, DstT=I32)
    want = dct2(x).astype(np.float32)
    r = run(g, {"x": x}, ["re", "re_int"])
    np.testing.assert_allclose(r.outputs[0], want, atol=1e-5)
    near = np.abs(want - np.round(want)) < 1e-3  # values a rounding error could flip
    np.testing.assert_array_equal(r.outputs[1][~near], np.trunc(want[~near]).astype(np.int32))
    assert r.ops.count("CAST") == 1 and "REAL" in r.ops


def test_refusals():
    g = graph(x=(2, 8))
    _rfft(g, "x", 8)
    for name, v in (("b", [0, 0]), ("e", [0, 4]), ("s", [1, 1])):
        g.const(name, np.array(v, np.int32))
    g.node("sliced", "StridedSlice", ["z", "b", "e", "s"], T=C64, Index=I32, begin_mask=1)
    g.const("axis", np.int32(1))
    g.node("y", "Sum", ["sliced", "axis"], T=C64, Tidx=I32)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(Sum\): reads the complex value "
                       r"'sliced', which edgelite carries as real and imaginary parts \(TFLite "
                       r"has no complex Sum\); only StridedSlice, .*, Real, Imag and ComplexAbs "
                       "take it$"):
        run(g, {"x": np.zeros((2, 8), np.float32)}, ["y"])
    with pytest.raises(UnsupportedOpError, match=r"^output 'prod' is a complex value TFLite "
                       "cannot compute with builtins"):
        run(_dct_graph(8), {"x": np.zeros((3, 8), np.float32)}, ["prod"])
    x = np.zeros((2, 200), np.float32)
    g = graph(x=x.shape)
    g.const("n", np.array([6, 200], np.int32))
    g.node("y", "RFFT2D", ["x", "n"], Treal=F32, Tcomplex=C64)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(RFFT2D\): fft_length \[6, 200\] "
                       "is not a power of two; TFLite's RFFT2D takes powers of two only"):
        run(g, {"x": x}, ["y"])
    g = graph(x=(2, 4000))
    _rfft(g, "x", 3000, "y")
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(RFFT\): fft_length 3000 is not a "
                       r"power of two, and its DFT matrix for 4000 samples would hold 6004000 "
                       r"values \(limit 1048576\); pad the frames to a power of two"):
        run(g, {"x": np.zeros((2, 4000), np.float32)}, ["y"])
    g = graph(x=x.shape)
    g.const("n", np.array([-4], np.int32))
    g.node("y", "RFFT", ["x", "n"], Treal=F32, Tcomplex=C64)
    with pytest.raises(ShapeError, match=r"^node 'y' \(RFFT\): fft_length \[-4\] must be "
                       "positive"):
        run(g, {"x": x}, ["y"])
    g = graph(x=x.shape, n=((1,), I32))
    g.node("y", "RFFT", ["x", "n"], Treal=F32, Tcomplex=C64)
    with pytest.raises(GraphError, match=r"^node 'y' \(RFFT\): input 1 \('n', fft_length\) must "
                       "be a constant"):
        run(g, {"x": x, "n": np.array([256], np.int32)}, ["y"])
    g = graph(x=((2, 8), np.dtype(np.float64)))
    _rfft(g, "x", 8, "y")
    g.gd.node[-1].attr["Treal"].type = 2
    with pytest.raises(DTypeError, match=r"^node 'y' \(RFFT\): input 0 \('x', the input\) is "
                       "float64; RFFT takes float32 there"):
        run(g, {"x": np.zeros((2, 8))}, ["y"])
    g = graph(x=(2,))
    g.const("zero", np.zeros(2, np.float32))
    g.node("y", "Complex", ["x", "zero"], T=F32, Tout=C64)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(Complex\): builds a complex "
                       "tensor from computed values; TFLite has no builtin for that"):
        run(g, {"x": np.zeros(2, np.float32)}, ["y"])
    for shape, what in (((4,), r"the input has shape \[4\]; RFFT2D needs at least 2 "
                         "dimensions"), ((2, 4), "fft_length has 1 values; RFFT2D takes 2")):
        g = graph(x=shape)
        g.const("n", np.array([4], np.int32))
        g.node("y", "RFFT2D", ["x", "n"], Treal=F32, Tcomplex=C64)
        with pytest.raises(ShapeError, match=r"^node 'y' \(RFFT2D\): " + what):
            run(g, {"x": np.zeros(shape, np.float32)}, ["y"])
