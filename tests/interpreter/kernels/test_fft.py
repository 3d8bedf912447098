"""RFFT2D, COMPLEX_ABS, REAL, IMAG (interpreter/kernels/fft.py) against both LiteRT kernel sets:
shapes cropped and zero-padded to fft_length, complex64 tensors from end to end, refusals."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError
from tests.support import KERNEL_SETS, run_edgelite, run_litert

from ..op_models import const, op_model, run_op

C64, F32 = np.complex64, np.float32


def both(op, operands, outputs, **options) -> list[np.ndarray]:
    """Every output of edgelite and of LiteRT, in both kernel sets: same dtype and shape,
    RFFT2D's values within 1e-6 of the largest magnitude (two double-precision FFTs summing
    in different orders, each rounded once to float32), the float outputs bit for bit;
    returns edgelite's outputs."""
    model, feeds = op_model(op, operands, outputs, **options)
    for kernels in KERNEL_SETS:
        ours, ref = run_edgelite(model, feeds, kernels), run_litert(model, feeds, kernels)
        for a, b in zip(ours, ref):
            assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
            if a.dtype.kind == "f":  # COMPLEX_ABS, REAL, IMAG: bit for bit
                assert a.tobytes() == b.tobytes(), (kernels, np.flatnonzero(a != b)[:5])
                continue
            scale = float(np.abs(b).max()) if b.size else 0.0
            assert np.abs(a.astype(np.complex128) - b).max() <= 1e-6 * scale, kernels
    return ours


def rfft2d(x, length) -> np.ndarray:
    h, w = length
    out_shape = x.shape[:-2] + (h, w // 2 + 1)
    (out,) = both("RFFT2D", [x, const(length, np.int32)], [(out_shape, C64)])
    return out


@pytest.mark.parametrize("shape, length", [
    ((1, 256), (1, 256)),        # tf.signal.rfft of a frame, as the converter lowers it
    ((3, 30, 256), (1, 256)),    # frames: rows beyond fft_height are cropped
    ((2, 1, 200), (1, 256)),     # zero-padded frames (frame_length < fft_length)
    ((5, 300), (1, 128)),        # cropped width
    ((4, 8), (4, 8)),            # a true 2-D transform
    ((2, 3, 5, 6), (8, 16)),     # padded both ways, two leading dims
    ((6, 20), (1, 64)),          # the DCT's padded rfft (tf.signal.dct: fft_length 2N)
    ((3, 4), (2, 2)),
])
def test_rfft2d_matches_litert(rng, shape, length):
    x = rng.standard_normal(shape).astype(F32)
    out = rfft2d(x, length)
    ref = np.fft.rfft2(x.astype(np.float64), s=length)
    np.testing.assert_allclose(out, ref, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("op, fn", [("COMPLEX_ABS", np.abs), ("REAL", np.real),
                                    ("IMAG", np.imag)])
def test_complex_to_real(rng, op, fn):
    z = (rng.standard_normal((2, 3, 7)) + 1j * rng.standard_normal((2, 3, 7))).astype(C64)
    z *= (10.0 ** rng.uniform(-30, 30, z.shape)).astype(F32)  # hypot's rounding over decades
    z[0, 0, :3] = [0, 3e38 + 3e38j, 1e-40j]  # zero, |z| past FLT_MAX (inf), subnormal
    (out,) = both(op, [z], [(z.shape, F32)])
    with np.errstate(over="ignore"):  # |z| in double, rounded once to float32
        np.testing.assert_array_equal(out, fn(z.astype(np.complex128)).astype(F32))


def test_spectrum_chain(rng):
    """RFFT2D's complex64 output feeds COMPLEX_ABS inside one model (a complex arena tensor)."""
    from ..tflite_builder import ModelBuilder
    b = ModelBuilder()
    x = b.tensor("frames", (2, 1, 64), F32)
    z = b.tensor("spectrum", (2, 1, 33), C64)
    m = b.tensor("magnitude", (2, 1, 33), F32)
    b.op("RFFT2D", [x, b.const("fft_length", np.array([1, 64], np.int32))], [z])
    b.op("COMPLEX_ABS", [z], [m])
    model = b.build([x], [m])
    frames = rng.standard_normal((2, 1, 64)).astype(F32)
    for kernels in KERNEL_SETS:
        (ours,), (ref,) = (run_edgelite(model, [frames], kernels),
                           run_litert(model, [frames], kernels))
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    np.testing.assert_allclose(ours, np.abs(np.fft.rfft(frames)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("length, what", [
    ((1, 200), r"fft_length is \[1, 200\]; LiteRT's RFFT2D takes positive powers of two only"),
    ((0, 256), r"fft_length is \[0, 256\]"),
    ((-2, 4), r"fft_length is \[-2, 4\]"),
    ((-2**31, 4), r"fft_length is \[-2147483648, 4\]"),
])
def test_rfft2d_refuses_other_lengths(length, what):
    x = np.ones((1, 8), F32)
    with pytest.raises(ShapeError, match=r"RFFT2D.*" + what):
        run_op("RFFT2D", [x, const(length, np.int32)], [((1, 1), C64)])


def test_rfft2d_refusals():
    x = np.ones((1, 8), F32)
    with pytest.raises(ShapeError, match=r"over the \d+-byte limit per tensor"):
        run_op("RFFT2D", [x, const([2**30, 2**20], np.int32)], [((1, 1), C64)])
    with pytest.raises(ShapeError, match=r"input 'input0' has shape \[8\]; RFFT2D needs at "
                       "least two dimensions"):
        run_op("RFFT2D", [np.ones(8, F32), const([1, 8], np.int32)], [((1, 5), C64)])
    # a computed fft_length is no refusal: the op is prepared at invoke (test_dynamic.py)
    (computed,) = run_op("RFFT2D", [x, np.array([1, 8], np.int32)], [((1, 5), C64)])
    np.testing.assert_array_equal(computed, np.complex64([[8, 0, 0, 0, 0]]))
    with pytest.raises(UnsupportedOpError, match=r"input tensor 'input0' has type float64"):
        run_op("RFFT2D", [x.astype(np.float64), const([1, 8], np.int32)], [((1, 5), C64)])
    with pytest.raises(UnsupportedOpError, match=r"REAL.*input tensor 'input0' has type "
                       "float32; this kernel supports complex64, complex128"):
        run_op("REAL", [x], [((1, 8), F32)])
