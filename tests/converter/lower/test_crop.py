"""converter/lower/crop.py: CropAndResize.

The reference transcribes TensorFlow's CPU kernel (tensorflow/core/kernels/image/
crop_and_resize_op.cc, CropAndResizePerBox) in float32 scalars, box by box and sample by
sample; the converted model must give the same bits (edgelite and LiteRT). TF's own outputs
are checked by tests/models (models/img_crop_and_resize, models/builders/zoo_image.py).
"""

import numpy as np
import pytest

from edgelite.errors import ShapeError
from tests.support import assert_micro_exact


from .lowering import F32, I32, floats, graph, rng, run, run_int8

COVERED = {"CropAndResize"}
f32 = np.float32


def _position(lo, hi, n_in, n_crop, k):
    """in_y of crop row k (in_x alike): the kernel's float32 arithmetic."""
    lo, hi, span = f32(lo), f32(hi), f32(n_in - 1)
    if n_crop > 1:
        return lo * span + f32(k) * ((hi - lo) * span / f32(n_crop - 1))
    return f32(0.5 * float(lo + hi) * (n_in - 1))  # (a double expression, rounded once)


def _roundf(v):  # halves away from zero
    return int(np.floor(v + 0.5)) if v - np.floor(v) != 0.5 else int(np.floor(v)) + 1


def crop_and_resize_reference(image, boxes, box_index, crop, method="bilinear",
                              extrapolation=0.0):
    _, h, w, depth = image.shape
    out = np.zeros((len(boxes), crop[0], crop[1], depth), np.float32)
    img = image.astype(np.float32)
    for b, (y1, x1, y2, x2) in enumerate(boxes):
        src = img[box_index[b]]
        for y in range(crop[0]):
            in_y = _position(y1, y2, h, crop[0], y)
            for x in range(crop[1]):
                in_x = _position(x1, x2, w, crop[1], x)
                if not (0 <= in_y <= h - 1 and 0 <= in_x <= w - 1):
                    out[b, y, x] = extrapolation
                elif method == "nearest":
                    out[b, y, x] = src[_roundf(in_y), _roundf(in_x)]
                else:
                    top, left = int(np.floor(in_y)), int(np.floor(in_x))
                    bottom, right = int(np.ceil(in_y)), int(np.ceil(in_x))
                    y_lerp, x_lerp = in_y - f32(top), in_x - f32(left)
                    upper = src[top, left] + (src[top, right] - src[top, left]) * x_lerp
                    lower = src[bottom, left] + (src[bottom, right] - src[bottom, left]) * x_lerp
                    out[b, y, x] = upper + (lower - upper) * y_lerp
    return out


# Whole image, flipped, a sub-box, a degenerate box (one point), boxes reaching outside the
# image (extrapolated samples), a box on the last row / column.
BOXES = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [0.1, 0.2, 0.8, 0.9], [0.5, 0.3, 0.5, 0.3],
                  [-0.3, 0.4, 1.2, 0.6], [0.2, -0.5, 0.6, 1.4], [1, 0, 1, 1]], np.float32)
BOX_INDEX = np.array([0, 1, 1, 0, 1, 0, 1], np.int32)


def _graph(image, crop, n_boxes, constant_boxes=None, **attrs):
    g = graph(x=(image.shape, image.dtype))
    if constant_boxes is None:
        g.placeholder("boxes", [n_boxes, 4])
        g.placeholder("box_index", [n_boxes], np.int32)
    else:
        g.const("boxes", constant_boxes[0])
        g.const("box_index", constant_boxes[1])
    g.const("crop_size", np.array(crop, np.int32))
    g.node("y", "CropAndResize", ["x", "boxes", "box_index", "crop_size"], T=image.dtype,
           **attrs)
    return g


# The lowering of computed boxes, image 6 x 8 (per axis: the positions -- SUB, MUL, DIV,
# MUL, MUL, ADD; one ADD, two MULs for a crop of 1 -- clamped, RELU and MINIMUM, inside where
# EQUAL to their clamp; bilinear: FLOOR, SUB, CAST, GREATER, CAST, ADD for floor, weight and
# ceil; nearest: FLOOR, SUB, GREATER_EQUAL, CAST, CAST, ADD for roundf), the flat indices
# (b * H + row) * W + column, the gathers and the three lerps (SUB, MUL, ADD).
COMPUTED_OPS = {
    ("bilinear", (4, 5)): {"RESHAPE": 3, "SPLIT": 1, "SUB": 7, "MUL": 12, "DIV": 2, "ADD": 13,
                           "RELU": 2, "MINIMUM": 2, "EQUAL": 2, "LOGICAL_AND": 1, "FLOOR": 2,
                           "CAST": 4, "GREATER": 2, "GATHER_ND": 4, "SELECT_V2": 1},
    ("nearest", (1, 1)): {"RESHAPE": 3, "SPLIT": 1, "SUB": 2, "MUL": 6, "ADD": 6, "RELU": 2,
                          "MINIMUM": 2, "EQUAL": 2, "LOGICAL_AND": 1, "FLOOR": 2, "CAST": 4,
                          "GREATER_EQUAL": 2, "GATHER_ND": 1, "SELECT_V2": 1},
}


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", [(4, 5), (1, 1), (1, 6), (7, 1)], ids=str)
def test_crop_and_resize_of_computed_boxes(crop, method):
    """Boxes and box indices are inputs (a detector's): every sample position, index and
    weight is computed in the graph, bit for bit as TF's kernel computes them."""
    image = floats(rng(), 2, 6, 8, 3)
    want = crop_and_resize_reference(image, BOXES, BOX_INDEX, crop, method, -2.5)
    r = run(_graph(image, crop, len(BOXES), method=method, extrapolation_value=-2.5),
            {"x": image, "boxes": BOXES, "box_index": BOX_INDEX}, ["y"], rtol=0, atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)
    assert r.ops.count("DIV") == 2 - crop.count(1)  # (y2 - y1) * (H - 1) / (crop - 1)
    if (method, crop) in COMPUTED_OPS:
        assert r.graph.op_counts() == COMPUTED_OPS[method, crop]


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_constant_boxes_fold_to_gathers(method):
    """Constant boxes: the positions, indices and weights are constants; boxes inside the
    image need no SELECT_V2."""
    image = floats(rng(), 2, 6, 8, 3)
    boxes = (BOXES[[0, 1, 2, 3, 6]], BOX_INDEX[[0, 1, 2, 3, 6]])
    want = crop_and_resize_reference(image, *boxes, (3, 4), method)
    r = run(_graph(image, (3, 4), 5, boxes, method=method), {"x": image}, ["y"], rtol=0,
            atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)
    assert r.graph.op_counts() == ({"RESHAPE": 1, "GATHER_ND": 1} if method == "nearest" else
                                   {"RESHAPE": 1, "GATHER_ND": 4, "SUB": 3, "MUL": 3, "ADD": 3})


def test_a_box_edge_on_the_last_row_stays_inside():
    """H = 8, crop 4, box [0, 1]: TF's in_y of the last row is 3 * (7 / 3) = 6.9999998 --
    inside; x * (1 / 3) instead of x / 3 (div_to_mul) gives 7.0000005 and would extrapolate."""
    image = floats(rng(), 1, 8, 8, 1)
    boxes, index = np.array([[0, 0, 1, 1]], np.float32), np.zeros(1, np.int32)
    want = crop_and_resize_reference(image, boxes, index, (4, 4), extrapolation=9.0)
    assert not np.any(want == 9.0)
    r = run(_graph(image, (4, 4), 1, extrapolation_value=9.0),
            {"x": image, "boxes": boxes, "box_index": index}, ["y"], rtol=0, atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)


def test_nearest_rounds_halves_away_from_zero():
    """roundf: a position of 2.5 samples pixel 3 (TFLite's ROUND would pick 2)."""
    image = np.arange(36, dtype=np.float32).reshape(1, 6, 6, 1)
    boxes = np.array([[0.5, 0.5, 0.5, 0.5], [0.1, 0.3, 0.1, 0.7]], np.float32)
    index = np.zeros(2, np.int32)
    want = crop_and_resize_reference(image, boxes, index, (1, 1), "nearest")
    assert want[0, 0, 0, 0] == 3 * 6 + 3
    r = run(_graph(image, (1, 1), 2, method="nearest"),
            {"x": image, "boxes": boxes, "box_index": index}, ["y"], rtol=0, atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)


def test_integer_images_are_gathered_then_made_float():
    image = (rng().permutation(144).reshape(2, 6, 4, 3) + 50).astype(np.uint8)
    want = crop_and_resize_reference(image, BOXES, BOX_INDEX, (3, 5))
    r = run(_graph(image, (3, 5), len(BOXES)),
            {"x": image, "boxes": BOXES, "box_index": BOX_INDEX}, ["y"], rtol=0, atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)
    gathers = [op for op in r.graph.ops if op.type == "GATHER_ND"]
    assert len(gathers) == 4 and all(op.outputs[0].dtype == np.uint8 for op in gathers)


@pytest.mark.parametrize("threshold", [0.2, 0.7])
def test_a_number_of_boxes_known_only_when_running(threshold):
    """The boxes a detector kept (Where + GatherNd: their count is -1 in the file), all of
    image 0: the crops have as many rows as boxes were kept."""
    image = floats(rng(), 1, 6, 8, 3)
    scores = np.linspace(0, 1, len(BOXES), dtype=np.float32)
    g = graph(x=image.shape, boxes=BOXES.shape, scores=scores.shape)
    g.const("threshold", np.float32(threshold))
    g.node("mask", "Greater", ["scores", "threshold"], T=F32)
    g.node("where", "Where", ["mask"], T=np.dtype(np.bool_))
    g.node("kept", "GatherNd", ["boxes", "where"], Tparams=F32, Tindices=np.dtype(np.int64))
    g.node("shape", "Shape", ["kept"], T=F32, out_type=I32)
    for name, v in (("begin", [0]), ("end", [1]), ("strides", [1])):
        g.const(name, np.array(v, np.int32))
    g.node("count", "StridedSlice", ["shape", "begin", "end", "strides"], T=I32, Index=I32)
    g.const("zero", np.int32(0))
    g.node("box_index", "Fill", ["count", "zero"], T=I32, index_type=I32)
    g.const("crop_size", np.array([3, 4], np.int32))
    g.node("y", "CropAndResize", ["x", "kept", "box_index", "crop_size"], T=F32)
    kept = BOXES[scores > threshold]
    want = crop_and_resize_reference(image, kept, np.zeros(len(kept), np.int32), (3, 4))
    r = run(g, {"x": image, "boxes": BOXES, "scores": scores}, ["y"], rtol=0, atol=0)
    np.testing.assert_array_equal(r.outputs[0], want)


def test_int8_computes_positions_in_float_and_pixels_in_int8():
    """The positions (and so the pixels picked) are exactly the float model's; the gathers
    and the interpolation run in int8, bit-exact in LiteRT's two kernel sets and in TFLite
    Micro."""
    r = rng()
    ramp = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 6, 8, 1)
    calib = {"x": ramp[None] * r.uniform(0.5, 1.5, (8, 2, 1, 1, 3)).astype(np.float32),
             "boxes": np.repeat(BOXES[None], 8, 0), "box_index": np.repeat(BOX_INDEX[None], 8, 0)}
    feeds = {k: v[0] for k, v in calib.items()}
    run8, default = run_int8(_graph(feeds["x"], (4, 5), len(BOXES), extrapolation_value=0.5),
                             feeds, calib)
    types = {op.type: op.outputs[0].dtype for op in run8.graph.ops}
    assert types["FLOOR"] == types["DIV"] == np.float32
    assert types["GATHER_ND"] == types["SELECT_V2"] == np.int8
    want = crop_and_resize_reference(feeds["x"], BOXES, BOX_INDEX, (4, 5), extrapolation=0.5)
    step = 2 * np.abs(calib["x"]).max() / 255
    assert_micro_exact(run8.model, list(feeds.values()))
    for y in (run8.outputs[0], default[0]):
        assert np.abs(y - want).max() < 3 * step


@pytest.mark.parametrize("boxes, index, crop, message", [
    ((3, 4), (3,), [0, 4], r"crop_size \[0, 4\] must be two positive values"),
    ((3, 5), (3,), [2, 2], r"the boxes have shape \[3, 5\]; they must be \[num_boxes, 4\]"),
    ((3, 4), (2,), [2, 2], r"box_index has shape \[2\]; the 3 boxes need \[3\]"),
])
def test_refusals(boxes, index, crop, message):
    g = graph(x=(1, 4, 4, 1), boxes=boxes, box_index=(index, I32))
    g.const("crop_size", np.array(crop, np.int32))
    g.node("y", "CropAndResize", ["x", "boxes", "box_index", "crop_size"], T=F32)
    feeds = {"x": np.zeros((1, 4, 4, 1), np.float32), "boxes": np.zeros(boxes, np.float32),
             "box_index": np.zeros(index, np.int32)}
    with pytest.raises(ShapeError, match=rf"^node 'y' \(CropAndResize\): {message}"):
        run(g, feeds, ["y"])
