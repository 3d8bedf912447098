"""Issue 16, detection heads (family "detection"): YOLO-style heads ending in non-max
suppression, as TensorFlow graphs write it.

Run from the repository root (TensorFlow is needed; edgelite's tests never import it):

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_detection [name ...]

Writes, deterministically (fixed seeds), through builders/beyond.py's finish_beyond
(models/<name>.pb, .golden.npz, .calib.npz, .tf_ops.json and TF's .tf.tflite where TF converts
with builtins only):

* det_yolo_head -- conv features -> [N, 8] rows -> the usual slicing (x[..., 0:2],
  x[..., 2:4], x[..., 4:5], x[..., 5:]) -> sigmoid / exp decoding -> corner boxes and
  objectness x class scores -> NonMaxSuppressionV4 (padded) -> the selected boxes and
  classes, and the count.
* det_soft_nms -- the same head with NonMaxSuppressionV5 (Soft-NMS, sigma 0.5): the
  selected boxes and their decayed scores, and the count.
* det_combined_nms -- the head's boxes and per-class scores into CombinedNonMaxSuppression
  (TF's converter needs Flex for it): boxes, scores, classes, valid detections.
* det_nms_v3 -- tf.image.non_max_suppression (NonMaxSuppressionV3: only the selected
  indices, a dynamic shape), the selection made 4 rows long with zeros (concat + slice).
  Its golden images all select 4 boxes: TF's converter writes V3 as the padded
  NON_MAX_SUPPRESSION_V4 (box 0 where fewer are selected), so with fewer its own file
  would not match TF, and the builder checks that it does.

One image per invoke: the NMS ops take one image's boxes, so the graphs read image 0 of
their batch, and the golden outputs are TensorFlow's, run one sample at a time (the tests
run batch 1). The golden images are chosen so that the selection is robust: perturbing the
decoded boxes and scores (about int8's rounding) selects the same boxes in the same order,
so float round-off (or int8 rounding) cannot flip a decision between TF and the file.
"""

from __future__ import annotations

import sys

from . import real_world
from .real_world import Built, Spec  # first: sets TF_USE_LEGACY_KERAS
from .beyond import finish_beyond
from .common import SESSION_CONFIG, np, tf

SEED = 16_300
H = W = 6  # feature grid
ANCHORS = np.array([[0.9, 1.2], [1.8, 1.5]], np.float32)  # (h, w) in cells
CLASSES = 3
N_GOLDEN, N_CALIB, N_POOL = 16, 32, 10000
# The golden images' selections survive noise this large on the decoded boxes and scores
# (about what int8 does to them: a flip there would swamp the int8 comparison).
BOX_NOISE, SCORE_NOISE = 1.2e-2, 4e-2
MAX_OUT = 4
IOU, SCORE = 0.45, 0.5
OBJ_BIAS = -5.0
ROW = 5 + CLASSES


# Per row (y, x, h, w, objectness, classes): weight scale and bias of the last conv, so that
# box sizes stay near the anchors and few boxes score high.
ROW_SCALE = np.array([0.5, 0.5, 0.08, 0.08, 0.8] + [0.8] * CLASSES, np.float32)
ROW_BIAS = np.array([0, 0, 0, 0, OBJ_BIAS] + [0] * CLASSES, np.float32)


def _weights(rng):
    scale = np.tile(ROW_SCALE, len(ANCHORS))
    w2 = rng.normal(0, 1, (1, 1, 12, len(ANCHORS) * ROW)) * scale
    # objectness and class logits from differences of the (positive) features: no box or
    # class wins everywhere
    is_class = np.tile(np.arange(ROW) >= 4, len(ANCHORS))
    w2[..., is_class] -= w2[..., is_class].mean(axis=2, keepdims=True)
    return (rng.normal(0, 0.5, (3, 3, 3, 12)).astype(np.float32),
            rng.normal(0, 0.1, 12).astype(np.float32),
            w2.astype(np.float32),
            (rng.normal(0, 0.2, len(ANCHORS) * ROW) + np.tile(ROW_BIAS, len(ANCHORS)))
            .astype(np.float32))


def _head(image, rng, per_image: bool):
    """Decoded boxes (ymin, xmin, ymax, xmax) and class scores: [N, 4] and [N, C] for image 0
    (per_image: the rows are p[0], then sliced -- consecutive StridedSlices), else
    [B, N, 4] and [B, N, C]."""
    w1, b1, w2, b2 = _weights(rng)
    h = tf.nn.relu(tf.nn.conv2d(image, w1, 1, "SAME") + b1)
    h = tf.nn.max_pool2d(h, 2, 2, "VALID")
    p = tf.nn.conv2d(h, w2, 1, "SAME") + b2
    p = tf.reshape(p, [-1, H * W * len(ANCHORS), ROW])
    if per_image:
        p = p[0]
    gy, gx = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    grid = np.repeat(np.stack([gy, gx], -1).reshape(-1, 1, 2), len(ANCHORS), 1)
    grid = grid.reshape(-1, 2).astype(np.float32)
    anchors = np.tile(ANCHORS, (H * W, 1))
    yx = (tf.sigmoid(p[..., 0:2]) + grid) * np.float32(1 / H)  # multiplications only
    hw = tf.exp(p[..., 2:4]) * (anchors / H).astype(np.float32)
    objectness = tf.sigmoid(p[..., 4:5])
    classes = tf.sigmoid(p[..., 5:])
    boxes = tf.concat([yx - hw * 0.5, yx + hw * 0.5], -1)
    return boxes, objectness * classes


def _graph(build, seed: int):
    """A tf.Graph with placeholder "image" [None, 12, 12, 3]; build(image, rng) returns
    {output name: tensor} and the intermediates {"boxes", "scores"} the golden check reads."""
    graph = tf.Graph()
    with graph.as_default():
        image = tf.compat.v1.placeholder(tf.float32, [None, 2 * H, 2 * W, 3], name="image")
        with tf.compat.v1.name_scope("head"):
            outputs, inner = build(image, np.random.default_rng(seed))
        names = []
        for name, t in outputs.items():
            names.append(tf.identity(t, name=name).op.name)
            assert names[-1] == name, names
    return graph, names, inner


def _yolo(image, rng):
    box, class_scores = _head(image, rng, True)
    score = tf.reduce_max(class_scores, -1)
    label = tf.cast(tf.argmax(class_scores, -1), tf.float32)
    idx, valid = tf.raw_ops.NonMaxSuppressionV4(
        boxes=box, scores=score, max_output_size=MAX_OUT, iou_threshold=IOU,
        score_threshold=SCORE, pad_to_max_output_size=True)
    return {"boxes": tf.gather(box, idx)[None], "scores": tf.gather(score, idx)[None],
            "classes": tf.gather(label, idx)[None], "count": tf.reshape(valid, [1])}, \
        {"boxes": box, "scores": score, "labels": class_scores}


def _soft(image, rng):
    box, class_scores = _head(image, rng, True)
    score = tf.reduce_max(class_scores, -1)
    idx, picked, valid = tf.raw_ops.NonMaxSuppressionV5(
        boxes=box, scores=score, max_output_size=MAX_OUT, iou_threshold=1.0,
        score_threshold=SCORE, soft_nms_sigma=0.5, pad_to_max_output_size=True)
    return {"boxes": tf.gather(box, idx)[None], "scores": picked[None],
            "count": tf.reshape(valid, [1])}, {"boxes": box, "scores": score, "sigma": 0.5}


def _v3(image, rng):
    """tf.image.non_max_suppression (NonMaxSuppressionV3: as many indices as selected),
    the selection made MAX_OUT rows long with zeros (concat, then the first MAX_OUT), as
    export code does."""
    box, class_scores = _head(image, rng, True)
    score = tf.reduce_max(class_scores, -1)
    idx = tf.image.non_max_suppression(box, score, MAX_OUT, IOU, SCORE)
    boxes = tf.concat([tf.gather(box, idx), tf.zeros([MAX_OUT, 4])], 0)[:MAX_OUT]
    scores = tf.concat([tf.gather(score, idx), tf.zeros([MAX_OUT])], 0)[:MAX_OUT]
    return {"boxes": boxes[None], "scores": scores[None]}, \
        {"boxes": box, "scores": score, "full": True}


def _combined(image, rng):
    boxes, class_scores = _head(image, rng, False)
    out = tf.image.combined_non_max_suppression(
        boxes[:, :, None], class_scores, max_output_size_per_class=3, max_total_size=MAX_OUT,
        iou_threshold=IOU, score_threshold=SCORE, clip_boxes=True)
    return {"boxes": out.nmsed_boxes, "scores": out.nmsed_scores,
            "classes": out.nmsed_classes, "count": out.valid_detections}, \
        {"boxes": boxes[0], "class_scores": class_scores[0]}


# The same head weights (seed) for all three; each model its own golden / calibration images.
MODELS = {"det_yolo_head": (_yolo, SEED), "det_soft_nms": (_soft, SEED),
          "det_combined_nms": (_combined, SEED), "det_nms_v3": (_v3, SEED)}


# --------------------------------------------------------------------------- golden inputs


def _select(inner: dict, boxes, scores) -> tuple[list, int]:
    """(selected box indices in output order, count) of the model's NMS on one image's
    decoded boxes / scores (eager TF)."""
    if "class_scores" in inner:
        out = tf.image.combined_non_max_suppression(
            boxes[None, :, None], scores[None], 3, MAX_OUT, IOU, SCORE, clip_boxes=False)
        count = int(out.valid_detections[0])
        picked = np.asarray(out.nmsed_boxes[0, :count])
        idx = [int(np.argmin(np.abs(boxes - b).sum(1))) for b in picked]
        return idx + np.asarray(out.nmsed_classes[0, :count]).astype(int).tolist(), count
    if "sigma" in inner:
        idx, _, valid = tf.raw_ops.NonMaxSuppressionV5(
            boxes=boxes, scores=scores, max_output_size=MAX_OUT, iou_threshold=1.0,
            score_threshold=SCORE, soft_nms_sigma=inner["sigma"], pad_to_max_output_size=True)
    else:
        idx, valid = tf.raw_ops.NonMaxSuppressionV4(
            boxes=boxes, scores=scores, max_output_size=MAX_OUT, iou_threshold=IOU,
            score_threshold=SCORE, pad_to_max_output_size=True)
    return np.asarray(idx).tolist(), int(valid)


def _robust(inner: dict, boxes, scores, labels, rng, trials: int = 16) -> bool:
    """At least two boxes selected, and the same selection under noise of about int8's
    step on the decoded values."""
    want = _select(inner, boxes, scores)
    if want[1] < (MAX_OUT if inner.get("full") else 2):
        return False
    if labels is not None:  # the two best classes of each selected box well apart
        top2 = np.sort(labels[want[0][:want[1]]], axis=1)[:, -2:]
        if np.any(top2[:, 1] - top2[:, 0] < SCORE_NOISE * 2):
            return False
    for _ in range(trials):
        b = boxes + rng.uniform(-BOX_NOISE, BOX_NOISE, boxes.shape).astype(np.float32)
        s = scores + rng.uniform(-SCORE_NOISE, SCORE_NOISE, scores.shape).astype(np.float32)
        if _select(inner, b, s) != want:
            return False
    return True


def _pick_inputs(graph, inner: dict, seed: int):
    """N_GOLDEN robust images and N_CALIB calibration images from a pool of random ones."""
    rng = np.random.default_rng(seed + 99)
    pool = rng.uniform(0, 1, (N_POOL, 2 * H, 2 * W, 3)) * rng.uniform(0, 2, (N_POOL, 1, 1, 3))
    pool = pool.astype(np.float32)  # noise with a random colour cast per image
    keys = [k for k in ("boxes", "scores", "class_scores", "labels") if k in inner]
    # the intermediates are image 0's: run the pool one image at a time
    values = {k: [] for k in keys}
    with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
        fetch = [inner[k] for k in keys]
        for x in pool:
            for k, v in zip(keys, sess.run(fetch, {"image:0": x[None]})):
                values[k].append(v)
    golden, check = [], np.random.default_rng(seed + 7)
    for i in range(N_POOL - N_CALIB):
        s = values["class_scores" if "class_scores" in inner else "scores"][i]
        labels = values["labels"][i] if "labels" in inner else None
        if _robust(inner, values["boxes"][i], s, labels, check):
            golden.append(i)
        if len(golden) == N_GOLDEN:
            break
    assert len(golden) == N_GOLDEN, f"only {len(golden)} robust golden images"
    return pool[golden], pool[-N_CALIB:]


def _run_per_sample(gd, feeds: dict, outputs: list) -> dict:
    """real_world.run_frozen, one sample at a time (the graphs read image 0 of a batch)."""
    n = len(next(iter(feeds.values())))
    runs = [_RUN_FROZEN(gd, {k: v[i:i + 1] for k, v in feeds.items()}, outputs)
            for i in range(n)]
    return {o: np.concatenate([r[o] for r in runs]) for o in outputs}


_RUN_FROZEN = real_world.run_frozen


def build(name: str) -> dict:
    fn, seed = MODELS[name]
    graph, outputs, inner = _graph(fn, seed)
    golden, calib = _pick_inputs(graph, inner, seed + list(MODELS).index(name))
    built = Built(graph_def=graph.as_graph_def(), inputs={"image": ((None, 2 * H, 2 * W, 3),
                                                                    "float32")},
                  outputs=outputs, golden={"image": golden},
                  notes={"built_with": "models/builders/zoo_detection.py",
                         "golden": "one image per run; images with a robust NMS selection"})
    real_world.run_frozen = _run_per_sample
    try:
        return finish_beyond(Spec(name, lambda: built), built, "detection", {"image": calib})
    finally:
        real_world.run_frozen = _RUN_FROZEN


def main(argv: list[str]) -> None:
    for name in argv or list(MODELS):
        print(f"{name}:")
        print(f"  {build(name)}")


if __name__ == "__main__":
    main(sys.argv[1:])
