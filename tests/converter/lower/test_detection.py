"""converter/lower/detection.py: NonMaxSuppressionV2..V5 and CombinedNonMaxSuppression on
TFLite builtins, against numpy transcriptions of TensorFlow's kernels
(tensorflow/core/kernels/image/non_max_suppression_op.cc, checked against TensorFlow 2.21 on
random cases while writing them):

    DoNonMaxSuppressionOp (V2..V5): candidates score > score_threshold, best first (equal
      scores: lower index first); hard suppression at IoU > iou_threshold; Soft-NMS
      (sigma > 0) multiplies the score by exp(-0.5 / sigma * iou^2) and never hard-suppresses;
      a candidate whose score changed goes back to the queue if still above the threshold.
    CombinedNonMaxSuppression: per image and class, the same hard NMS (at most
      min(max_output_size_per_class, num_boxes) boxes); all selections ranked by score;
      the first max_total_size kept, boxes clipped to [0, 1] (clip_boxes), zeros after.

Scores are distinct here (TF and LiteRT order equal scores differently; the module docstring
of detection.py says how).
"""

import numpy as np
import pytest

from edgelite.errors import GraphError, ShapeError

from .lowering import F32, I32, graph, run

COVERED = {"NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
           "NonMaxSuppressionV5", "CombinedNonMaxSuppression"}

f32 = np.float32


def iou(boxes, i, j) -> np.float32:
    """TF's IOU in float32."""
    a, b = boxes[i], boxes[j]
    ymin_i, ymax_i = min(a[0], a[2]), max(a[0], a[2])
    xmin_i, xmax_i = min(a[1], a[3]), max(a[1], a[3])
    ymin_j, ymax_j = min(b[0], b[2]), max(b[0], b[2])
    xmin_j, xmax_j = min(b[1], b[3]), max(b[1], b[3])
    area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i)
    area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j)
    if area_i <= 0 or area_j <= 0:
        return f32(0)
    inter = max(min(ymax_i, ymax_j) - max(ymin_i, ymin_j), f32(0)) * \
        max(min(xmax_i, xmax_j) - max(xmin_i, xmin_j), f32(0))
    return f32(inter / (area_i + area_j - inter))


def tf_nms(boxes, scores, size, iou_threshold, score_threshold, sigma=0.0):
    """DoNonMaxSuppressionOp: (selected indices, their scores)."""
    iou_threshold, score_threshold, sigma = f32(iou_threshold), f32(score_threshold), f32(sigma)
    queue = [[scores[i], i, 0] for i in range(len(scores)) if scores[i] > score_threshold]
    scale = f32(-0.5) / sigma if sigma > 0 else f32(0)
    selected, picked = [], []
    while len(selected) < size and queue:
        queue.sort(key=lambda c: (-c[0], c[1]))
        cand = queue.pop(0)
        original, hard = cand[0], False
        for j in range(len(selected) - 1, cand[2] - 1, -1):
            sim = iou(boxes, cand[1], selected[j])
            # expf, correctly rounded (glibc's, which TF and LiteRT call)
            weight = f32(np.exp(np.float64(scale * sim * sim))) \
                if sigma > 0 or sim <= iou_threshold else f32(0)
            cand[0] = f32(cand[0] * f32(weight))
            if sigma <= 0 and sim > iou_threshold:
                hard = True
                break
            if cand[0] <= score_threshold:
                break
        cand[2] = len(selected)
        if not hard:
            if cand[0] == original:
                selected.append(cand[1])
                picked.append(cand[0])
                continue
            if cand[0] > score_threshold:
                queue.append(cand)
    return np.array(selected, np.int32), np.array(picked, F32)


def tf_combined(boxes, scores, per_class, total, iou_threshold, score_threshold,
                pad_per_class=False, clip=True):
    """BatchedNonMaxSuppressionOp: (boxes, scores, classes, valid_detections)."""
    b, n, q, _ = boxes.shape
    c = scores.shape[2]
    s = min(per_class, n)
    k_out = min(total, per_class * c) if pad_per_class else total
    out = (np.zeros((b, k_out, 4), F32), np.zeros((b, k_out), F32), np.zeros((b, k_out), F32),
           np.zeros(b, np.int32))
    for bi in range(b):
        found = []
        for ci in range(c):
            class_boxes = boxes[bi, :, ci if q > 1 else 0]
            sel, _ = tf_nms(class_boxes, scores[bi, :, ci], s, iou_threshold, score_threshold)
            found += [(scores[bi, i, ci], ci, class_boxes[i]) for i in sel]
        found.sort(key=lambda r: -r[0])
        found = found[:k_out]
        out[3][bi] = len(found)
        for j, (score, ci, box) in enumerate(found):
            out[0][bi, j] = np.clip(box, 0, 1) if clip else box
            out[1][bi, j], out[2][bi, j] = score, ci
    return out


def random_boxes(r, n, spread=0.35):
    corner = r.uniform(0, 1, (n, 2)).astype(F32)
    return np.concatenate([corner, corner + r.uniform(0.05, spread, (n, 2)).astype(F32)], 1)


def distinct_scores(r, shape):
    """Scores all different from each other (no ties to order)."""
    return (r.permutation(int(np.prod(shape))).reshape(shape) + 1).astype(F32) / \
        f32(np.prod(shape) + 1)


def nms_graph(op, n, consts, **attrs):
    g = graph(boxes=(n, 4), scores=(n,))
    names = []
    for name, value in consts:
        g.const(name, value)
        names.append(name)
    types = dict(T=F32) if op == "NonMaxSuppressionV5" else dict(T=F32, T_threshold=F32)
    g.node("y", op, ["boxes", "scores"] + names, **types, **attrs)
    return g


def _consts(size, iou_threshold, score_threshold=None, sigma=None):
    out = [("size", np.array(size, np.int32)), ("iou", np.array(iou_threshold, F32))]
    if score_threshold is not None:
        out.append(("score", np.array(score_threshold, F32)))
    if sigma is not None:
        out.append(("sigma", np.array(sigma, F32)))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pad", [True, False])
def test_v4_selects_as_tensorflow(seed, pad):
    r = np.random.default_rng(seed)
    n = int(r.integers(4, 30))
    boxes, scores = random_boxes(r, n), distinct_scores(r, (n,))
    size, iou_t, score_t = int(r.integers(0, n + 2)), float(r.choice([0.2, 0.5])), 0.3
    g = nms_graph("NonMaxSuppressionV4", n, _consts(size, iou_t, score_t),
                  pad_to_max_output_size=pad)
    got = run(g, {"boxes": boxes, "scores": scores}, ["y", "y:1"])
    want, _ = tf_nms(boxes, scores, size, iou_t, score_t)
    assert int(got.outputs[1]) == len(want)
    np.testing.assert_array_equal(got.outputs[0], np.pad(want, (0, size - len(want))) if pad
                                  else want)
    assert got.ops == ["NON_MAX_SUPPRESSION_V4"] + ([] if pad else ["RESHAPE", "SLICE"])


def test_iou_equal_to_the_threshold_keeps_the_box_as_tensorflow_does():
    """TF suppresses at IoU > t, LiteRT at IoU >= t: the constant becomes next(t)."""
    boxes = np.array([[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 1, 4]], F32)  # IoU(0, 1) = 0.5
    scores = np.array([0.9, 0.8, 0.7], F32)
    g = nms_graph("NonMaxSuppressionV4", 3, _consts(3, 0.5, 0.0), pad_to_max_output_size=True)
    got = run(g, {"boxes": boxes, "scores": scores}, ["y", "y:1"])
    assert got.outputs[0].tolist() == [0, 1, 2] and int(got.outputs[1]) == 3
    assert got.outputs[0].tolist() == tf_nms(boxes, scores, 3, 0.5, 0.0)[0].tolist()


@pytest.mark.parametrize("op", ["NonMaxSuppressionV2", "NonMaxSuppressionV3"])
def test_v2_v3_give_only_the_selected_indices(op):
    r = np.random.default_rng(7)
    boxes, scores = random_boxes(r, 20, 0.6), distinct_scores(r, (20,)) - f32(0.5)
    consts = _consts(19, 0.2, None if op == "NonMaxSuppressionV2" else 0.1)
    got = run(nms_graph(op, 20, consts), {"boxes": boxes, "scores": scores}, ["y"])
    want, _ = tf_nms(boxes, scores, 19, 0.2, np.finfo(F32).min if op.endswith("2") else 0.1)
    assert len(want) < 19
    np.testing.assert_array_equal(got.outputs[0], want)
    assert got.ops == ["NON_MAX_SUPPRESSION_V4", "RESHAPE", "SLICE"]


def test_selected_boxes_gather_with_the_dynamic_count():
    """V3's output has as many entries as were selected: a Gather after it sees them."""
    r = np.random.default_rng(3)
    boxes, scores = random_boxes(r, 16, 0.6), distinct_scores(r, (16,))
    g = nms_graph("NonMaxSuppressionV3", 16, _consts(10, 0.3, 0.2))
    g.const("axis", np.array(0, np.int32))
    g.node("picked", "GatherV2", ["boxes", "y", "axis"], Tparams=F32, Tindices=I32, Taxis=I32)
    got = run(g, {"boxes": boxes, "scores": scores}, ["picked"])
    want, _ = tf_nms(boxes, scores, 10, 0.3, 0.2)
    np.testing.assert_array_equal(got.outputs[0], boxes[want])


def test_computed_size_and_thresholds():
    """Operands fed at run time: rank-0 tensors for LiteRT's kernel, outputs sized then."""
    r = np.random.default_rng(11)
    boxes, scores = random_boxes(r, 16, 0.5), distinct_scores(r, (16,))
    g = graph(boxes=(16, 4), scores=(16,), size=((), I32), iou=((), F32), score=((), F32))
    g.node("y", "NonMaxSuppressionV4", ["boxes", "scores", "size", "iou", "score"], T=F32,
           T_threshold=F32, pad_to_max_output_size=False)
    feeds = {"boxes": boxes, "scores": scores, "size": np.array(7, np.int32),
             "iou": np.array(0.3, F32), "score": np.array(0.2, F32)}
    got = run(g, feeds, ["y", "y:1"])
    want, _ = tf_nms(boxes, scores, 7, 0.3, 0.2)
    np.testing.assert_array_equal(got.outputs[0], want)
    assert int(got.outputs[1]) == len(want)
    assert got.ops == ["NON_MAX_SUPPRESSION_V4", "RESHAPE", "SLICE"]  # (rank-0 reshapes go)


def test_v3_selection_made_fixed_size_with_zeros():
    """concat([boxes[selected], zeros[k]])[:k] (models/det_nms_v3.pb's pattern) with fewer
    than k selected: zeros follow the selected boxes (TF's converter, writing V3 as the
    padded V4, gives box 0 there)."""
    r = np.random.default_rng(4)
    boxes, scores = random_boxes(r, 16, 0.6), distinct_scores(r, (16,))
    g = nms_graph("NonMaxSuppressionV3", 16, _consts(10, 0.2, 0.3))
    for name, value in (("axis", np.array(0, np.int32)), ("zeros", np.zeros((10, 4), F32)),
                        ("b", np.array([0], np.int32)), ("e", np.array([10], np.int32)),
                        ("s", np.array([1], np.int32))):
        g.const(name, value)
    g.node("picked", "GatherV2", ["boxes", "y", "axis"], Tparams=F32, Tindices=I32, Taxis=I32)
    g.node("cat", "ConcatV2", ["picked", "zeros", "axis"], T=F32, N=2, Tidx=I32)
    g.node("out", "StridedSlice", ["cat", "b", "e", "s"], T=F32, Index=I32)
    got = run(g, {"boxes": boxes, "scores": scores}, ["out"])
    want, _ = tf_nms(boxes, scores, 10, 0.2, 0.3)
    assert 0 < len(want) < 10
    np.testing.assert_array_equal(got.outputs[0], np.concatenate(
        [boxes[want], np.zeros((10 - len(want), 4), F32)]))
    (out,) = got.graph.outputs
    assert out.shape == (10, 4) and out.shape_signature is None  # static again after [:k]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sigma", [0.0, 0.3, 1.0])
def test_v5_soft_nms_as_tensorflow(seed, sigma):
    r = np.random.default_rng(seed)
    n = int(r.integers(4, 24))
    boxes, scores = random_boxes(r, n, 0.5), distinct_scores(r, (n,))
    g = nms_graph("NonMaxSuppressionV5", n, _consts(n, 0.5, 0.05, sigma),
                  pad_to_max_output_size=True)
    got = run(g, {"boxes": boxes, "scores": scores}, ["y", "y:1", "y:2"])
    want, want_scores = tf_nms(boxes, scores, n, 0.5, 0.05, sigma)
    count = int(got.outputs[2])
    assert count == len(want)
    np.testing.assert_array_equal(got.outputs[0][:count], want)
    np.testing.assert_array_equal(got.outputs[1][:count], want_scores)
    assert not got.outputs[1][count:].any()


@pytest.mark.parametrize("q", [1, 3])
@pytest.mark.parametrize("per_class, total, pad_per_class",
                         [(4, 6, False), (2, 10, False), (2, 10, True), (30, 5, False)])
@pytest.mark.parametrize("batch", [1, 2])
def test_combined_nms_as_tensorflow(q, per_class, total, pad_per_class, batch):
    r = np.random.default_rng(per_class * 10 + total + q)
    n, c = 12, 3
    boxes = np.stack([np.stack([random_boxes(r, n, 0.6) * f32(1.2) - f32(0.1)
                                for _ in range(q)], 1) for _ in range(batch)])
    scores = distinct_scores(r, (batch, n, c))
    g = graph(boxes=boxes.shape, scores=scores.shape)
    for name, value in (("per_class", np.array(per_class, np.int32)),
                        ("total", np.array(total, np.int32)), ("iou", np.array(0.3, F32)),
                        ("score", np.array(0.25, F32))):
        g.const(name, value)
    g.node("y", "CombinedNonMaxSuppression",
           ["boxes", "scores", "per_class", "total", "iou", "score"],
           pad_per_class=pad_per_class, clip_boxes=q == 1)
    got = run(g, {"boxes": boxes, "scores": scores}, ["y", "y:1", "y:2", "y:3"])
    want = tf_combined(boxes, scores, per_class, total, 0.3, 0.25, pad_per_class, q == 1)
    for a, b in zip(got.outputs, want, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert "CUSTOM" not in got.ops and "NON_MAX_SUPPRESSION_V4" in got.ops


def test_combined_nms_without_score_threshold_ranks_every_selection():
    """score_threshold -inf (tf.image.combined_non_max_suppression's default): the unfilled
    slots rank below every score with a finite fill."""
    r = np.random.default_rng(5)
    boxes = random_boxes(r, 10, 0.6)[None, :, None]
    scores = distinct_scores(r, (1, 10, 2)) - f32(0.5)
    g = graph(boxes=boxes.shape, scores=scores.shape)
    for name, value in (("per_class", np.array(4, np.int32)), ("total", np.array(7, np.int32)),
                        ("iou", np.array(0.5, F32)), ("score", np.array(-np.inf, F32))):
        g.const(name, value)
    g.node("y", "CombinedNonMaxSuppression",
           ["boxes", "scores", "per_class", "total", "iou", "score"])
    got = run(g, {"boxes": boxes, "scores": scores}, ["y", "y:1", "y:2", "y:3"])
    want = tf_combined(boxes, scores, 4, 7, 0.5, -np.inf)
    for a, b in zip(got.outputs, want, strict=True):
        np.testing.assert_array_equal(a, b)


def _combined_error(boxes_shape, scores_shape, per_class=3, total=4, iou_t=0.5):
    g = graph(boxes=boxes_shape, scores=scores_shape)
    for name, value in (("per_class", np.array(per_class, np.int32)),
                        ("total", np.array(total, np.int32)), ("iou", np.array(iou_t, F32)),
                        ("score", np.array(0.1, F32))):
        g.const(name, value)
    g.node("y", "CombinedNonMaxSuppression",
           ["boxes", "scores", "per_class", "total", "iou", "score"])
    feeds = {"boxes": np.zeros(boxes_shape, F32), "scores": np.zeros(scores_shape, F32)}
    run(g, feeds, ["y", "y:1", "y:2", "y:3"])


@pytest.mark.parametrize("args, error, match", [
    (((1, 5, 2, 4), (1, 5, 3)), ShapeError, "q = 2; it must be 1 or the number of classes 3"),
    (((1, 5, 1, 4), (1, 4, 3)), ShapeError, r"scores must be \[1, 5, num_classes\]"),
    (((1, 5, 1, 4), (1, 5, 3), 0), ShapeError, "max_output_size_per_class 0 must be > 0"),
    (((1, 5, 1, 4), (1, 5, 3), 3, -1), ShapeError, "max_total_size -1 must be > 0"),
    (((1, 5, 1, 4), (1, 5, 3), 3, 4, 1.5), ShapeError, r"iou_threshold 1.5 must be in \[0, 1\]"),
])
def test_combined_nms_refuses_what_tensorflow_refuses(args, error, match):
    with pytest.raises(error, match=match):
        _combined_error(*args)


def test_negative_constant_sizes_and_sigma_are_refused():
    g = nms_graph("NonMaxSuppressionV4", 3, _consts(-2, 0.5, 0.0))
    with pytest.raises(ShapeError, match="max_output_size -2 must be >= 0"):
        run(g, {"boxes": np.zeros((3, 4), F32), "scores": np.zeros(3, F32)}, ["y"])
    g = nms_graph("NonMaxSuppressionV5", 3, _consts(2, 0.5, 0.0, -1.0))
    with pytest.raises(ShapeError, match="soft_nms_sigma -1.0 must be >= 0"):
        run(g, {"boxes": np.zeros((3, 4), F32), "scores": np.zeros(3, F32)}, ["y"])


def test_combined_nms_needs_constant_sizes():
    g = graph(boxes=(1, 5, 1, 4), scores=(1, 5, 2), per_class=((), np.dtype(np.int32)))
    for name, value in (("total", np.array(4, np.int32)), ("iou", np.array(0.5, F32)),
                        ("score", np.array(0.1, F32))):
        g.const(name, value)
    g.node("y", "CombinedNonMaxSuppression",
           ["boxes", "scores", "per_class", "total", "iou", "score"])
    feeds = {"boxes": np.zeros((1, 5, 1, 4), F32), "scores": np.zeros((1, 5, 2), F32),
             "per_class": np.array(2, np.int32)}
    with pytest.raises(GraphError, match="max_output_size_per_class\\) must be a constant"):
        run(g, feeds, ["y"])
