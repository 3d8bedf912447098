"""``TFLite_Detection_PostProcess``: SSD box decoding and non-max suppression, the last op
of TensorFlow Object Detection API detectors (tensorflow/lite/kernels/
detection_postprocess.cc; LiteRT's builtin resolver registers it as a custom op).

Inputs: box encodings [1, N, >= 4] (y, x, h, w relative to the anchor), class scores
[1, N, C + b] (b = 1 with a background column first, else 0), anchors [N, 4] (y, x, h, w).
Float32, or uint8 (dequantized first, r = (q - zp) * s in float; uint8 box encodings
come with uint8 anchors); LiteRT's kernel fails on int8, edgelite's refuses it. Outputs, all float32 with M = max_detections *
max_classes_per_detection: boxes [1, M, 4] (ymin, xmin, ymax, xmax), classes [1, M],
scores [1, M], num_detections [1].

Options: a flexbuffer map (Init): max_detections, max_classes_per_detection,
detections_per_class (absent: 100), use_regular_nms (absent: false), nms_score_threshold,
nms_iou_threshold, num_classes, y_scale, x_scale, h_scale, w_scale.

Decoding (DecodeCenterSizeBoxes), in double, each value rounded to float:

    yc = y / y_scale * ah + ay           half_h = 0.5 * exp(h / h_scale) * ah
    xc = x / x_scale * aw + ax           half_w = 0.5 * exp(w / w_scale) * aw
    box = (yc - half_h, xc - half_w, yc + half_h, xc + half_w)   (float subtractions)

Single-class NMS (NonMaxSuppressionSingleClassHelper): keep scores >= threshold, sort them
decreasing with a stable sort (ties: lower anchor first), take the best remaining box and
drop every later one whose IoU with it (in float) is > the IoU threshold, up to the
maximum count. A decoded box with ymin > ymax or xmin > xmax fails the op.

* fast (use_regular_nms false): each anchor's k = min(max_classes_per_detection, C) best
  classes, one NMS over the anchors' best scores; each selected anchor fills k slots
  (a stride of max_classes_per_detection per anchor). Slots past the selected ones are
  zero here; LiteRT leaves them as they were.
* regular: NMS per class (at most min(detections_per_class, max_detections) boxes each);
  each class's list is merged into the running list by decreasing score, stably (on
  equal scores the earlier class stays first: measured with the installed LiteRT, whose
  kernel stable-sorts the running list and the class's boxes together), and the list is
  cut to max_detections; other slots are zero.

Where several classes of one anchor tie for its k best (k > 1), LiteRT's
std::partial_sort leaves their order to the C++ library; here the lower class comes first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ModelFormatError, ShapeError
from ..base import Kernel, OpContext, OutputSpec

F32 = np.float32
DETECTIONS_PER_CLASS = 100  # kNumDetectionsPerClass: detections_per_class when absent
INT_KEYS = ("max_detections", "max_classes_per_detection", "num_classes")
FLOAT_KEYS = ("nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale",
              "w_scale")


@dataclass(frozen=True)
class Options:
    max_detections: int
    max_classes_per_detection: int
    detections_per_class: int
    use_regular_nms: bool
    nms_score_threshold: np.float32
    nms_iou_threshold: np.float32
    num_classes: int
    y_scale: np.float32
    x_scale: np.float32
    h_scale: np.float32
    w_scale: np.float32


@dataclass(frozen=True)
class Dequant:
    """r = (q - zero_point) * scale in float32 (Dequantizer; None: already float)."""

    zero_point: np.float32
    scale: np.float32


@dataclass(frozen=True)
class DetectionRecord:
    where: str  # the op, for the error at invoke
    options: Options
    boxes_dq: Dequant | None
    anchors_dq: Dequant | None
    scores_dq: Dequant | None
    label_offset: int  # 1 when the scores have a background column first
    slots: int  # M = max_detections * max_classes_per_detection


def _number(ctx: OpContext, opts: dict, key: str, kind, default):
    value = opts.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if kind is bool and isinstance(value, (bool, int)):
            return bool(value)
        raise ModelFormatError(f"{ctx.describe()}: custom option {key} is "
                               f"{type(value).__name__}, expected a number")
    if kind is int:
        value = int(value)
        if not -2**31 <= value < 2**31:
            raise ModelFormatError(f"{ctx.describe()}: custom option {key}={value} is out "
                                   "of int32 range")
        return value
    with np.errstate(over="ignore"):  # a double past float32's range becomes inf, as in C
        return kind(value)


def read_options(ctx: OpContext) -> Options:
    """The flexbuffer options; absent keys read as 0 (flexbuffers' AsInt32 / AsFloat of a
    null), detections_per_class as 100 and use_regular_nms as false, as Init does."""
    opts = ctx.flexbuffer_options()
    if not isinstance(opts, dict):
        raise ModelFormatError(f"{ctx.describe()}: its custom options are a flexbuffer "
                               f"{type(opts).__name__}, not the map of options it needs")
    values = {k: _number(ctx, opts, k, int, 0) for k in INT_KEYS}
    values.update({k: _number(ctx, opts, k, F32, 0.0) for k in FLOAT_KEYS})
    values["detections_per_class"] = _number(ctx, opts, "detections_per_class", int,
                                             DETECTIONS_PER_CLASS)
    values["use_regular_nms"] = _number(ctx, opts, "use_regular_nms", bool, False)
    return Options(**values)


def _dequant(ctx: OpContext, t, role: str, allowed) -> Dequant | None:
    ctx.require_dtype(t, allowed, role)
    if t.dtype == F32:
        return None
    q = t.quantization
    if q is None or q.scale.size != 1:
        raise ctx.unsupported(f"{role} tensor has type {t.dtype.name} but no per-tensor "
                              "scale and zero point")
    zp = int(q.zero_point[0]) if q.zero_point.size else 0
    return Dequant(F32(zp), F32(q.scale[0]))


def _check_options(ctx: OpContext, o: Options, num_classes_with_background: int) -> None:
    if o.max_detections < 0:
        raise ctx.shape_error(f"max_detections {o.max_detections} must be >= 0")
    if o.use_regular_nms and min(o.detections_per_class, o.max_detections) <= 0:
        raise ctx.shape_error(f"regular NMS needs detections_per_class "
                              f"({o.detections_per_class}) and max_detections > 0")
    if o.max_classes_per_detection <= 0:
        raise ctx.shape_error(f"max_classes_per_detection {o.max_classes_per_detection} "
                              "must be > 0")
    if not F32(0) < o.nms_iou_threshold <= F32(1):
        raise ctx.shape_error(f"nms_iou_threshold {o.nms_iou_threshold} must be in (0, 1]")
    if not 0 <= num_classes_with_background - o.num_classes <= 1 or o.num_classes < 1:
        raise ctx.shape_error(
            f"num_classes {o.num_classes} does not fit class predictions of "
            f"{num_classes_with_background} columns (the classes, plus at most one "
            "background column)")


def prepare(ctx: OpContext):
    ctx.check_arity(3, 3, 4)
    boxes, scores, anchors = ctx.input(0), ctx.input(1), ctx.input(2)
    o = read_options(ctx)
    if boxes.rank != 3 or scores.rank != 3 or anchors.rank != 2:
        raise ctx.shape_error(f"box encodings {list(boxes.shape)} and class predictions "
                              f"{list(scores.shape)} must be 3-D, anchors "
                              f"{list(anchors.shape)} 2-D")
    n = boxes.shape[1]
    if boxes.shape[0] != 1 or scores.shape[0] != 1 or boxes.shape[2] < 4 or \
            scores.shape[1] != n or anchors.shape != (n, 4):
        raise ctx.shape_error(
            f"box encodings {list(boxes.shape)}, class predictions {list(scores.shape)} and "
            f"anchors {list(anchors.shape)} must be [1, N, >=4], [1, N, classes] and [N, 4]")
    _check_options(ctx, o, scores.shape[2])
    boxes_dq = _dequant(ctx, boxes, "box encodings", (np.float32, np.uint8))
    anchor_type = (np.float32,) if boxes_dq is None else (np.uint8,)
    anchors_dq = _dequant(ctx, anchors, "anchors", anchor_type)
    scores_dq = _dequant(ctx, scores, "class predictions", (np.float32, np.uint8))
    for t in ctx.outputs:
        ctx.require_dtype(t, (np.float32,), "output")
    slots = o.max_detections * o.max_classes_per_detection  # in both modes (Prepare)
    rec = DetectionRecord(ctx.describe(), o, boxes_dq, anchors_dq, scores_dq,
                          scores.shape[2] - o.num_classes, slots)
    f32 = np.dtype(F32)
    return (OutputSpec((1, slots, 4), f32), OutputSpec((1, slots), f32),
            OutputSpec((1, slots), f32), OutputSpec((1,), f32)), rec


def _as_float(values: np.ndarray, dq: Dequant | None) -> np.ndarray:
    if dq is None:
        return values
    return (values.astype(F32) - dq.zero_point) * dq.scale  # float32 throughout


def decode(rec: DetectionRecord, encodings: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """Corner boxes [N, 4] (ymin, xmin, ymax, xmax), float32 (DecodeCenterSizeBoxes)."""
    o = rec.options
    e = _as_float(encodings[0, :, :4], rec.boxes_dq).astype(np.float64)
    a = _as_float(anchors, rec.anchors_dq).astype(np.float64)
    with np.errstate(all="ignore"):  # a zero scale gives inf / nan, as in C
        yc = (e[:, 0] / np.float64(o.y_scale) * a[:, 2] + a[:, 0]).astype(F32)
        xc = (e[:, 1] / np.float64(o.x_scale) * a[:, 3] + a[:, 1]).astype(F32)
        half_h = (0.5 * np.exp(e[:, 2] / np.float64(o.h_scale)) * a[:, 2]).astype(F32)
        half_w = (0.5 * np.exp(e[:, 3] / np.float64(o.w_scale)) * a[:, 3]).astype(F32)
        return np.stack([yc - half_h, xc - half_w, yc + half_h, xc + half_w], axis=1)


def _iou(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """ComputeIntersectionOverUnion of box i with each of ``others``, in float32."""
    bi, bj = boxes[i], boxes[others]
    area_i = (bi[2] - bi[0]) * (bi[3] - bi[1])
    area_j = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])
    ih = np.maximum(np.minimum(bi[2], bj[:, 2]) - np.maximum(bi[0], bj[:, 0]), F32(0))
    iw = np.maximum(np.minimum(bi[3], bj[:, 3]) - np.maximum(bi[1], bj[:, 1]), F32(0))
    inter = ih * iw
    with np.errstate(all="ignore"):
        iou = inter / (area_i + area_j - inter)
    return np.where((area_i <= 0) | (area_j <= 0), F32(0), iou)


def nms(rec: DetectionRecord, boxes: np.ndarray, scores: np.ndarray, limit: int
        ) -> list[int]:
    """Anchors kept by single-class NMS, best first (see the module docstring)."""
    o = rec.options
    keep = np.flatnonzero(scores >= o.nms_score_threshold)
    order = keep[np.argsort(-scores[keep], kind="stable")]
    active = np.ones(order.size, bool)
    selected: list[int] = []
    for i in range(order.size):
        if len(selected) >= min(order.size, limit):
            break
        if not active[i]:
            continue
        selected.append(int(order[i]))
        active[i] = False
        rest = i + 1 + np.flatnonzero(active[i + 1:])
        if rest.size:
            active[rest[_iou(boxes, order[i], order[rest]) > o.nms_iou_threshold]] = False
        if not active.any():
            break
    return selected


def _fast(rec: DetectionRecord, boxes, scores, out_boxes, out_classes, out_scores) -> int:
    o = rec.options
    k = min(o.max_classes_per_detection, o.num_classes)
    class_scores = scores[:, rec.label_offset:rec.label_offset + o.num_classes]
    best = np.argsort(-class_scores, axis=1, kind="stable")[:, :k]
    top = np.take_along_axis(class_scores, best[:, :1], axis=1)[:, 0]
    selected = nms(rec, boxes, top, o.max_detections)
    for b, anchor in enumerate(selected):
        slots = slice(o.max_classes_per_detection * b, o.max_classes_per_detection * b + k)
        out_boxes[0, slots] = boxes[anchor]
        out_classes[0, slots] = best[anchor]
        out_scores[0, slots] = class_scores[anchor, best[anchor]]
    return len(selected)


def _regular(rec: DetectionRecord, boxes, scores, out_boxes, out_classes, out_scores) -> int:
    o = rec.options
    per_class = min(o.detections_per_class, o.max_detections)
    ranked: list[tuple[np.float32, int, int]] = []  # (score, anchor, class), best first
    for c in range(o.num_classes):
        column = np.ascontiguousarray(scores[:, c + rec.label_offset])
        new = [(column[a], a, c) for a in nms(rec, boxes, column, per_class)]
        merged, i, j = [], 0, 0
        while i < len(ranked) or j < len(new):  # ties: the earlier class first
            if j < len(new) and (i == len(ranked) or new[j][0] > ranked[i][0]):
                merged.append(new[j])
                j += 1
            else:
                merged.append(ranked[i])
                i += 1
        ranked = merged[:o.max_detections]
    for slot, (score, anchor, c) in enumerate(ranked):
        out_boxes[0, slot] = boxes[anchor]
        out_classes[0, slot] = c
        out_scores[0, slot] = score
    return len(ranked)


def eval(rec: DetectionRecord, inputs, outputs) -> None:
    out_boxes, out_classes, out_scores, out_num = outputs
    boxes = decode(rec, inputs[0], inputs[2])
    bad = np.count_nonzero((boxes[:, 0] > boxes[:, 2]) | (boxes[:, 1] > boxes[:, 3]))
    if bad:
        raise ShapeError(f"{rec.where}: {bad} decoded box(es) have ymin > ymax or "
                         "xmin > xmax (negative anchor heights or widths?); LiteRT fails "
                         "here too")
    scores = _as_float(inputs[1][0], rec.scores_dq)
    for out in (out_boxes, out_classes, out_scores):
        out.fill(0.0)
    run = _regular if rec.options.use_regular_nms else _fast
    out_num[0] = run(rec, boxes, scores, out_boxes, out_classes, out_scores)


KERNEL = Kernel(prepare, eval)
