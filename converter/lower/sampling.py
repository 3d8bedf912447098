"""Interpolation matrices of TensorFlow's separable image resamplers (numpy only).

Each function returns, for one image axis, the [n_out, n_in] matrix M with
out[o] = sum_i M[o, i] * in[i] that TensorFlow's kernel applies along that axis (the
resamplers are separable: rows, then columns). Where the kernel clamps a source index to the
image, the weights of clamped taps add up on the edge pixel. The positions, spans and
weights are computed in float32 step by step as the kernels compute them -- a span boundary
(ceil / floor of a float32 position) must come out the same -- and returned as float64:

* ResizeArea (tensorflow/core/kernels/image/resize_area_op.cc): output cell o covers
  [o * s, (o + 1) * s) of the input (s = CalculateResizeScale); a source pixel weighs the
  length of its overlap, the sum is scaled by 1 / (s_rows * s_cols);
* ResizeBicubic (resize_bicubic_op.cc): four taps around floor(position), weights from a
  1025-entry table of the cubic convolution kernel (a = -0.75; a = -0.5, Keys, with
  half_pixel_centers, whose taps outside the image get weight 0 and the rest renormalized);
* ScaleAndTranslate (scale_and_translate_op.cc ComputeSpansCore, sampling_kernels.h): the
  sample position (o + 0.5) / scale - translation / scale, a kernel stretched by 1 / scale
  when antialiasing a downscale, weights normalized to sum 1, empty rows for positions
  outside the image.
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32
FLT_MIN = float(np.finfo(F32).tiny)
PI = F32(3.14159265359)  # sampling_kernels.h kPI (a float)
CUBIC_TABLE_SIZE = 1024  # resize_bicubic_op.cc kTableSize


def resize_scale(n_in: int, n_out: int, align_corners: bool) -> F32:
    """image_resizer_state.h CalculateResizeScale."""
    if align_corners and n_out > 1:
        return F32(n_in - 1) / F32(n_out - 1)
    return F32(n_in) / F32(n_out)


def _add(m: np.ndarray, o: int, i: int, w, n_in: int) -> None:
    m[o, min(max(i, 0), n_in - 1)] += float(w)


# -- ResizeArea ---------------------------------------------------------------------------------
def area(n_in: int, n_out: int, align_corners: bool) -> np.ndarray:
    """ResizeArea along one axis: the overlap lengths, divided by the scale (TF divides the
    sum by s_rows * s_cols once)."""
    s = resize_scale(n_in, n_out, align_corners)
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        lo, hi = F32(o) * s, F32(o + 1) * s
        for i in range(math.floor(lo), math.ceil(hi)):
            if i < lo:  # the first cell: it starts inside
                w = s if i + 1 > hi else F32(i + 1) - lo
            else:
                w = hi - F32(i) if i + 1 > hi else 1.0
            _add(m, o, i, w, n_in)
    return m / float(s)


# -- ResizeBicubic ------------------------------------------------------------------------------
def _cubic_table(a: float) -> np.ndarray:
    """InitCoeffsTable: [k, 0] the weight at distance k / 1024, [k, 1] at 1 + k / 1024
    (double arithmetic on a float x, stored as float)."""
    table = np.zeros((CUBIC_TABLE_SIZE + 1, 2), F32)
    for k in range(CUBIC_TABLE_SIZE + 1):
        x = float(F32(k * 1.0 / CUBIC_TABLE_SIZE))
        table[k, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
        x = float(F32(x + 1.0))
        table[k, 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return table


def bicubic(n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """GetWeightsAndIndices for every output position (HalfPixelScaler with Keys' kernel,
    else LegacyScaler with a = -0.75)."""
    s = resize_scale(n_in, n_out, align_corners)
    table = _cubic_table(-0.5 if half_pixel else -0.75)
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = (F32(o) + F32(0.5)) * s - F32(0.5) if half_pixel else F32(o) * s
        base = math.floor(src)
        k = int(np.rint(F32(src - F32(base)) * F32(CUBIC_TABLE_SIZE)))  # lrintf
        taps = np.array([table[k, 1], table[k, 0], table[CUBIC_TABLE_SIZE - k, 0],
                         table[CUBIC_TABLE_SIZE - k, 1]], F32)
        index = base - 1 + np.arange(4)
        if half_pixel:  # taps outside the image weigh 0; the others are renormalized
            taps[(index < 0) | (index >= n_in)] = 0
            total = taps[0] + taps[1] + taps[2] + taps[3]
            if abs(total) >= 1000 * FLT_MIN:
                taps = taps * (F32(1) / total)
        for i, w in zip(index, taps):
            _add(m, o, int(i), w, n_in)
    return m


# -- ScaleAndTranslate --------------------------------------------------------------------------
def _lanczos(radius: float):
    r = F32(radius)

    def weight(x: F32) -> F32:
        if x > r:
            return F32(0)
        if float(x) <= 1e-3:  # sin(x) / x at 0
            return F32(1)
        sin_a = F32(math.sin(float(PI * x)))
        sin_b = F32(math.sin(float(PI * x / r)))
        return r * sin_a * sin_b / (PI * PI * x * x)
    return radius, weight


def _gaussian(x: F32) -> F32:  # radius 1.5, sigma 0.5; the exponent in double
    return F32(0) if x >= F32(1.5) else F32(math.exp(float(-x * x) / 0.5))


def _box(x: F32) -> F32:
    return F32(1) if x < F32(0.5) else F32(0.5) if x == F32(0.5) else F32(0)


def _triangle(x: F32) -> F32:
    return F32(1) - x if x < F32(1) else F32(0)


def _keys_cubic(x: F32) -> F32:
    if x >= F32(2):
        return F32(0)
    if x >= F32(1):
        return ((F32(-0.5) * x + F32(2.5)) * x - F32(4)) * x + F32(2)
    return ((F32(1.5) * x - F32(2.5)) * x) * x + F32(1)


def _mitchell_cubic(x: F32) -> F32:
    if x >= F32(2):
        return F32(0)
    if x >= F32(1):
        return ((-F32(7) / F32(18) * x + F32(2)) * x - F32(10) / F32(3)) * x + \
            F32(16) / F32(9)
    return ((F32(7) / F32(6) * x - F32(2)) * x) * x + F32(8) / F32(9)


# kernel_type -> (radius, weight of a distance >= 0): SamplingKernelTypeFromString's names
KERNELS = {"lanczos1": _lanczos(1), "lanczos3": _lanczos(3), "lanczos5": _lanczos(5),
           "gaussian": (1.5, _gaussian), "box": (1.0, _box), "triangle": (1.0, _triangle),
           "keyscubic": (2.0, _keys_cubic), "mitchellcubic": (2.0, _mitchell_cubic)}


def scale_and_translate(n_in: int, n_out: int, scale: float, translation: float,
                        kernel_type: str, antialias: bool) -> np.ndarray:
    """ComputeSpansCore along one axis (scale > 0)."""
    radius, kernel = KERNELS[kernel_type]
    inv_scale = F32(1.0 / float(F32(scale)))
    inv_translate = -inv_scale * F32(translation)
    kernel_scale = max(inv_scale, F32(1)) if antialias else F32(1)
    reach = F32(radius) * kernel_scale
    one_over_kernel_scale = F32(1) / kernel_scale
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        sample = (F32(o) + F32(0.5)) * inv_scale + inv_translate
        if sample < 0 or sample > n_in:  # outside the image: an empty span
            continue
        start = min(max(math.ceil(sample - reach - F32(0.5)), 0), n_in - 1)
        end = min(max(math.floor(sample + reach - F32(0.5)), 0), n_in - 1) + 1
        weights = [kernel(abs((F32(i) + F32(0.5) - sample) * one_over_kernel_scale))
                   for i in range(start, end)]
        total = F32(0)
        for w in weights:
            total = total + w
        if abs(total) >= 1000 * FLT_MIN:
            norm = F32(1) / total
            m[o, start:end] = [float(w * norm) for w in weights]
    return m
