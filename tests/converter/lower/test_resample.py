"""converter/lower/resample.py: ResizeArea, ResizeBicubic, ScaleAndTranslate.

The references compute each output pixel in float64 from TensorFlow's definitions, pixel by
pixel (tensorflow/core/kernels/image/resize_area_op.cc, resize_bicubic_op.cc,
scale_and_translate_op.cc, sampling_kernels.h); the converter's float32 matrices
(converter/lower/sampling.py) are not used. TF's own outputs for these ops are checked by
tests/models (models/img_resample, models/builders/zoo_image.py).
"""

import math

import numpy as np
import pytest

from edgelite.errors import GraphError, ShapeError, UnsupportedOpError
from tests.support import assert_micro_exact


from .lowering import F32, check, floats, graph, rng, run, run_int8

COVERED = {"ResizeArea", "ResizeBicubic", "ScaleAndTranslate"}
U8 = np.dtype(np.uint8)
# [-1, H, W*C] times the rows matrix, [-1, W, C] times the columns' (a RESHAPE of a tensor
# to its own shape is dropped)
MATMULS = ["RESHAPE", "BATCH_MATMUL", "RESHAPE", "BATCH_MATMUL", "RESHAPE"]
# large matrices by their bands: GATHER the taps, weigh them; the columns' between two
# transposes ([N, W, out_h, C])
BAND = ["RESHAPE", "GATHER", "BATCH_MATMUL", "RESHAPE", "TRANSPOSE", "RESHAPE", "GATHER",
        "BATCH_MATMUL", "RESHAPE", "TRANSPOSE"]


def _scale(n_in, n_out, align_corners):
    return (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out


def _separable(x, row_weights, col_weights):
    """out[b, o, p, c] = sum_ij rows(o)[i] cols(p)[j] x[b, i, j, c]; each weights(o) is a
    {source index: weight} dict of one output position."""
    def matrix(cells, n_in):
        m = np.zeros((len(cells), n_in))
        for o, weights in enumerate(cells):
            for i, v in weights.items():
                m[o, i] += v
        return m
    rows, cols = matrix(row_weights, x.shape[1]), matrix(col_weights, x.shape[2])
    return np.einsum("oi,nijc,pj->nopc", rows, x.astype(np.float64), cols).astype(np.float32)


# -- ResizeArea -----------------------------------------------------------------------------------
def _area_weights(n_in, n_out, align_corners):
    """Output cell o covers [o s, (o + 1) s); each source pixel weighs its overlap, divided
    by s (indices past the image read its last pixel)."""
    s = _scale(n_in, n_out, align_corners)
    cells = []
    for o in range(n_out):
        lo, hi, weights = o * s, (o + 1) * s, {}
        for i in range(math.floor(lo), math.ceil(hi)):
            k = min(i, n_in - 1)
            weights[k] = weights.get(k, 0.0) + (min(i + 1, hi) - max(i, lo)) / s
        cells.append(weights)
    return cells


def resize_area_reference(x, size, align_corners=False):
    return _separable(x, _area_weights(x.shape[1], size[0], align_corners),
                      _area_weights(x.shape[2], size[1], align_corners))


def _resize_graph(op, x, size, **attrs):
    g = graph(x=(x.shape, x.dtype))
    g.const("size", np.array(size, np.int32))
    g.node("y", op, ["x", "size"], T=x.dtype, **attrs)
    return g


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("in_hw, out_hw", [((9, 11), (4, 5)), ((9, 11), (13, 7)),
                                           ((5, 6), (12, 15)), ((7, 8), (1, 3)),
                                           ((6, 9), (6, 4))], ids=str)
def test_resize_area(in_hw, out_hw, align_corners):
    """Any scale, shrinking and growing; an axis that keeps its size is skipped."""
    x = floats(rng(), 2, *in_hw, 3)
    ops = MATMULS if in_hw[0] != out_hw[0] else MATMULS[2:]  # (the same size: scale 1)
    check(_resize_graph("ResizeArea", x, out_hw, align_corners=align_corners), {"x": x},
          resize_area_reference(x, out_hw, align_corners), ops, atol=2e-6)


@pytest.mark.parametrize("in_hw, out_hw", [((8, 9), (4, 3)), ((6, 10), (6, 5))], ids=str)
def test_resize_area_by_whole_factors_is_an_average_pool(in_hw, out_hw):
    x = floats(rng(), 2, *in_hw, 3)
    check(_resize_graph("ResizeArea", x, out_hw), {"x": x}, resize_area_reference(x, out_hw),
          ["AVERAGE_POOL_2D"], atol=1e-6)


def test_resize_area_of_the_same_size_is_the_image():
    """(an IDENTITY, which the passes remove: the model's output is its input)"""
    x = floats(rng(), 1, 4, 5, 2)
    r = check(_resize_graph("ResizeArea", x, (4, 5)), {"x": x}, x, [])
    assert r.lowered == {"IDENTITY": 1}


@pytest.mark.parametrize("op, want", [("ResizeArea", ["CAST", "AVERAGE_POOL_2D"]),
                                      ("ResizeBicubic", ["CAST"] + MATMULS)])
def test_integer_images_are_resampled_as_float(op, want):
    """TF's kernels read static_cast<float>(pixel) and output float32."""
    x = (rng().permutation(96) * 2).reshape(1, 8, 4, 3).astype(U8)
    if op == "ResizeArea":
        g, ref = _resize_graph(op, x, (4, 2)), resize_area_reference(x, (4, 2))
    else:  # (tf.image.resize's bicubic: half-pixel centers)
        g = _resize_graph(op, x, (4, 2), half_pixel_centers=True)
        ref = resize_bicubic_reference(x, (4, 2))
    check(g, {"x": x}, ref, want, rtol=1e-5, atol=1e-3)


# -- ResizeBicubic ------------------------------------------------------------------------------
def _cubic(d, a):
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0


def _bicubic_weights(n_in, n_out, align_corners, half_pixel):
    """Four taps around floor(src); the fraction is read from TF's table of 1024 steps
    (lrintf(t * 1024) / 1024). a = -0.5 (Keys) with half_pixel_centers, whose taps outside
    the image are dropped and the rest renormalized; else a = -0.75 and edge taps clamped."""
    s = _scale(n_in, n_out, align_corners)
    cells = []
    for o in range(n_out):
        src = (o + 0.5) * s - 0.5 if half_pixel else o * s
        base = math.floor(src)
        t = np.rint((src - base) * 1024) / 1024
        a = -0.5 if half_pixel else -0.75
        taps = {base - 1 + k: _cubic(t + 1 - k, a) for k in range(4)}
        if half_pixel:
            taps = {i: v for i, v in taps.items() if 0 <= i < n_in}
            total = sum(taps.values())
            taps = {i: v / total for i, v in taps.items()}
        weights = {}
        for i, v in taps.items():
            k = min(max(i, 0), n_in - 1)
            weights[k] = weights.get(k, 0.0) + v
        cells.append(weights)
    return cells


def resize_bicubic_reference(x, size, align_corners=False, half_pixel=True):
    return _separable(x, _bicubic_weights(x.shape[1], size[0], align_corners, half_pixel),
                      _bicubic_weights(x.shape[2], size[1], align_corners, half_pixel))


@pytest.mark.parametrize("align_corners, half_pixel", [(False, True), (False, False),
                                                       (True, False)],
                         ids=["half_pixel", "legacy", "align_corners"])
@pytest.mark.parametrize("out_hw", [(5, 7), (14, 20), (1, 3)], ids=str)
def test_resize_bicubic(out_hw, align_corners, half_pixel):
    x = floats(rng(), 2, 6, 8, 3)
    check(_resize_graph("ResizeBicubic", x, out_hw, align_corners=align_corners,
                        half_pixel_centers=half_pixel), {"x": x},
          resize_bicubic_reference(x, out_hw, align_corners, half_pixel), MATMULS, atol=2e-6)


# -- ScaleAndTranslate --------------------------------------------------------------------------
def _lanczos(r):
    def k(x):
        if x > r:
            return 0.0
        return 1.0 if x <= 1e-3 else r * math.sin(math.pi * x) * math.sin(math.pi * x / r) / (
            math.pi * math.pi * x * x)
    return r, k


def _mitchell(x):  # B = C = 1/3
    if x >= 2:
        return 0.0
    if x >= 1:
        return ((-7 / 18 * x + 2) * x - 10 / 3) * x + 16 / 9
    return (7 / 6 * x - 2) * x * x + 8 / 9


KERNELS = {"lanczos1": _lanczos(1), "lanczos3": _lanczos(3), "lanczos5": _lanczos(5),
           "gaussian": (1.5, lambda x: math.exp(-x * x / 0.5) if x < 1.5 else 0.0),
           "box": (1, lambda x: 1.0 if x < 0.5 else 0.5 if x == 0.5 else 0.0),
           "triangle": (1, lambda x: max(1 - x, 0.0)),
           "keyscubic": (2, lambda x: _cubic(x, -0.5) if x < 2 else 0.0),
           "mitchellcubic": (2, _mitchell)}


def _span_weights(n_in, n_out, scale, translation, kernel, antialias):
    """Output o samples the input at (o + 0.5) / scale - translation / scale (nothing outside
    [0, n_in]); the kernel is stretched by 1 / scale when antialiasing a shrink; the taps
    within its reach (clamped to the image) weigh kernel(distance), normalized to sum 1."""
    radius, k = KERNELS[kernel]
    stretch = max(1 / scale, 1.0) if antialias else 1.0
    cells = []
    for o in range(n_out):
        sample = (o + 0.5) / scale - translation / scale
        if sample < 0 or sample > n_in:
            cells.append({})
            continue
        lo = min(max(math.ceil(sample - radius * stretch - 0.5), 0), n_in - 1)
        hi = min(max(math.floor(sample + radius * stretch - 0.5), 0), n_in - 1)
        taps = {i: k(abs(i + 0.5 - sample) / stretch) for i in range(lo, hi + 1)}
        total = sum(taps.values())
        cells.append({i: v / total for i, v in taps.items()})
    return cells


def scale_and_translate_reference(x, size, scale, translation, kernel, antialias):
    return _separable(
        x, _span_weights(x.shape[1], size[0], scale[0], translation[0], kernel, antialias),
        _span_weights(x.shape[2], size[1], scale[1], translation[1], kernel, antialias))


def _sat_graph(x, size, scale, translation, kernel, antialias):
    g = graph(x=(x.shape, x.dtype))
    g.const("size", np.array(size, np.int32))
    g.const("scale", np.array(scale, np.float32))
    g.const("translation", np.array(translation, np.float32))
    g.node("y", "ScaleAndTranslate", ["x", "size", "scale", "translation"], T=x.dtype,
           kernel_type=kernel, antialias=antialias)
    return g


# (size, scale, translation): tf.image.resize's (scale = size / input, no translation)
# shrinking and growing, and shifted samples, some outside the image (empty rows of zeros).
# No sample lands on a pixel edge or centre, where the box and gaussian kernels jump: there
# TF's float32 position decides and this float64 reference could not.
PLACEMENTS = [((4, 5), (4 / 9, 5 / 11), (0.0, 0.0)), ((15, 20), (15 / 9, 20 / 11), (0.0, 0.0)),
              ((8, 12), (0.6, 1.3), (0.73, -2.46)), ((6, 6), (0.25, 2.0), (-0.3, 4.0))]


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("size, scale, translation", PLACEMENTS, ids=str)
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_scale_and_translate(kernel, size, scale, translation, antialias):
    x = floats(rng(), 2, 9, 11, 3)
    want = scale_and_translate_reference(x, size, scale, translation, kernel, antialias)
    check(_sat_graph(x, size, scale, translation, kernel, antialias), {"x": x}, want, MATMULS,
          atol=1e-5)


@pytest.mark.parametrize("make, taps", [
    (lambda x: _resize_graph("ResizeBicubic", x, (96, 120), half_pixel_centers=True),
     [(96, 4), (120, 4)]),
    (lambda x: _sat_graph(x, (70, 100), (70 / 64, 100 / 80), (0, 0), "lanczos3", True),
     [(70, 6), (100, 6)]),
])
def test_a_large_matrix_is_applied_by_its_band(make, taps):
    """Over DENSE_VALUES values, with each output reading a few inputs: GATHER those rows
    ([out, k] indices) and weigh them with a [out, 1, k] constant. (TF's lanczos weights are
    float32 -- kPI a float, sinf -- up to 6e-6 off this float64 reference's.)"""
    x = floats(rng(), 1, 64, 80, 2)
    g = make(x)
    want = resize_bicubic_reference(x, (96, 120)) if taps[0][0] == 96 else \
        scale_and_translate_reference(x, (70, 100), (70 / 64, 100 / 80), (0, 0), "lanczos3",
                                      True)
    r = check(g, {"x": x}, want, BAND, atol=1e-4)
    assert [op.inputs[1].data.shape for op in r.graph.ops if op.type == "GATHER"] == taps


@pytest.mark.parametrize("in_hw, out_hw, ops", [((9, 11), (5, 6), MATMULS),
                                                ((64, 80), (70, 100), BAND)], ids=str)
def test_resampled_int8(in_hw, out_hw, ops):
    """int8: BATCH_MATMULs with the matrices (bands) as int8 constants, bit-exact in LiteRT's
    two kernel sets (and TFLite Micro's, whose default arena holds the small image);
    lanczos3 (weights below 0) within a few steps of the float result on a smooth image."""
    r = rng()
    ramp = np.sin(np.linspace(0, 3, in_hw[1]))[None, :] * \
        np.cos(np.linspace(0, 2, in_hw[0]))[:, None]
    calib = (ramp[None, None, :, :, None] * r.uniform(0.5, 2, (8, 1, 1, 1, 3))).astype(F32)
    x = calib[0]
    scale = (out_hw[0] / in_hw[0], out_hw[1] / in_hw[1])
    g = _sat_graph(x, out_hw, scale, (0, 0), "lanczos3", True)
    run8, default = run_int8(g, {"x": x}, {"x": calib})
    assert run8.ops == ["QUANTIZE"] + ops + ["DEQUANTIZE"]
    mm = [op for op in run8.graph.ops if op.type == "BATCH_MATMUL"]
    assert all(op.inputs[0].dtype == op.outputs[0].dtype == np.int8 for op in mm)
    want = scale_and_translate_reference(x, out_hw, scale, (0, 0), "lanczos3", True)
    step = 2 * np.abs(calib).max() / 255
    if ops is MATMULS:
        assert_micro_exact(run8.model, [x])
    for y in (run8.outputs[0], default[0]):
        assert np.abs(y - want).max() < 4 * step


# -- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error, message", [
    (lambda x: _resize_graph("ResizeArea", x, (0, 3)), ShapeError,
     r"the size \[0, 3\] must be two positive values"),
    (lambda x: _resize_graph("ResizeBicubic", x, (3, 3), align_corners=True,
                             half_pixel_centers=True), GraphError,
     "align_corners and half_pixel_centers are both true"),
    (lambda x: _sat_graph(x, (3, 3), (0.5, 0.0), (0, 0), "box", True), ShapeError,
     r"the scale \[0.5, 0.0\] must be positive"),
    (lambda x: _sat_graph(x, (3, 3), (0.5, 0.5), (0, 0), "cubic", True), GraphError,
     "attribute kernel_type is 'cubic'; it must be one of lanczos1"),
    (lambda x: _resize_graph("ResizeArea", x, (1 << 21, 3)), UnsupportedOpError,
     "resamples 4 pixels to 2097152: its interpolation matrix would hold 8388608 values"),
])
def test_refusals(make, error, message):
    x = np.zeros((1, 4, 4, 1), np.float32)
    op = make(x).gd.node[-1].op
    with pytest.raises(error, match=rf"^node 'y' \({op}\): {message}"):
        run(make(x), {"x": x}, ["y"])



def test_a_scale_computed_from_the_image_shape_folds():
    """tf.image.resize(..., antialias=True) divides the size by tf.shape(images)[1:3]
    (Shape, StridedSlice, Cast, RealDiv): with the image's shape known it is a constant."""
    x = floats(rng(), 1, 9, 11, 3)
    g = graph(x=x.shape)
    g.node("shape", "Shape", ["x"], T=F32, out_type=np.dtype(np.int32))
    for name, v in (("begin", [1]), ("end", [3]), ("strides", [1])):
        g.const(name, np.array(v, np.int32))
    g.node("hw", "StridedSlice", ["shape", "begin", "end", "strides"], T=np.dtype(np.int32),
           Index=np.dtype(np.int32))
    g.node("hw_f", "Cast", ["hw"], SrcT=np.dtype(np.int32), DstT=F32)
    g.const("size", np.array([4, 5], np.int32))
    g.const("size_f", np.array([4, 5], np.float32))
    g.node("scale", "RealDiv", ["size_f", "hw_f"], T=F32)
    g.const("translation", np.zeros(2, np.float32))
    g.node("y", "ScaleAndTranslate", ["x", "size", "scale", "translation"], T=F32,
           kernel_type="lanczos3", antialias=True)
    want = scale_and_translate_reference(x, (4, 5), (4 / 9, 5 / 11), (0, 0), "lanczos3", True)
    check(g, {"x": x}, want, MATMULS, atol=1e-5)


def test_a_size_known_only_when_running_is_refused():
    g = graph(x=(1, 4, 4, 1), size=((2,), np.dtype(np.int32)))
    g.node("y", "ResizeArea", ["x", "size"], T=F32)
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(ResizeArea\): the size \(input "
                       r"1, 'size'\) must be a constant"):
        run(g, {"x": np.zeros((1, 4, 4, 1), np.float32), "size": np.array([2, 2], np.int32)},
            ["y"])
