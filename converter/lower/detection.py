"""Detection ops: NonMaxSuppressionV2..V5 and CombinedNonMaxSuppression, on TFLite builtins.

TensorFlow's kernels (tensorflow/core/kernels/image/non_max_suppression_op.cc) and LiteRT's
NON_MAX_SUPPRESSION_V4 / V5 (kernels/non_max_suppression.cc, interpreter/kernels/
non_max_suppression.py) select the same boxes but for a few details, which the rules close
where a constant operand lets them:

* hard suppression: TF drops a candidate at IoU > threshold, LiteRT at IoU >= threshold.
  A constant threshold t < 1 becomes the next float32 above t (for float32 IoUs,
  IoU >= next(t) is IoU > t). t = 1 stays (next(1) would let LiteRT select a box again
  when it meets itself: it re-queues selected boxes); then only identical boxes differ;
* Soft-NMS (sigma > 0): TF never hard-suppresses (its iou_threshold is unused); LiteRT
  still does at IoU >= threshold, so a constant sigma > 0 gets threshold 1;
* TF's V2 / V3 / V4-unpadded / V5-unpadded outputs hold only the selected entries: the
  padded NON_MAX_SUPPRESSION_V4 / V5 outputs are cut to the count with SLICE (a dynamic
  shape, as TF's). TF's converter writes the padded tensor instead, and refuses V2 (Flex);
* V2's score threshold is float32's lowest (TF), not -inf.

Left as LiteRT does them (as TF's converter leaves them): equal scores leave LiteRT's heap in
its order (TF: lower index first), a zero-area box may be selected more than once.

CombinedNonMaxSuppression (TF's converter needs Flex for it) becomes, per image and class,
one NON_MAX_SUPPRESSION_V4 (TF's DoNMSPerClass: score > threshold, IoU > threshold, at most
min(max_output_size_per_class, num_boxes) boxes), then the selections of all classes in
class order, ranked by score with TOPK_V2 (TF: std::sort by score, which for equal scores
keeps class order only up to 16 entries -- insertion sort -- as TOPK_V2 always does), the
first max_total_size kept, boxes clipped to [0, 1] with clip_boxes, zeros past the count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from ..shape_inference import infer_shapes
from .context import LowerCtx, attr_bool, fail
from .spec import FLOAT, Attr, In, Lowering, scalar_input, spec

F32 = np.float32
I32 = np.int32
LOWEST = np.finfo(F32).min  # V2's score threshold (std::numeric_limits<float>::lowest())
MAX_UNROLLED = 4096  # NMS ops one CombinedNonMaxSuppression may become (batch x classes)


def _scalar_value(t):
    return None if not t.is_const else np.asarray(t.data).reshape(-1)[0]


def _iou_threshold(ctx: LowerCtx, node, t, soft: bool):
    """TF's suppression rule on LiteRT's kernel (see the module docstring)."""
    value = _scalar_value(t)
    if value is not None and not 0 <= value <= 1:
        raise fail(ShapeError, node, f"iou_threshold {float(value)} must be in [0, 1] "
                   "(TensorFlow's kernel refuses it)")
    if soft:
        return ctx.const(node, "iou_threshold", np.array(1, F32))
    if value is None:
        return _float_scalar(ctx, node, t, "iou_threshold")
    if value < 1:
        value = np.nextafter(F32(value), F32(np.inf))
    return ctx.const(node, "iou_threshold", np.array(value, F32))


def _float_scalar(ctx: LowerCtx, node, t, what: str):
    """A float32 scalar operand (constants converted, computed ones reshaped to rank 0)."""
    if t.is_const:
        return ctx.const(node, what, np.asarray(t.data, F32).reshape(()))
    if t.dtype != F32:
        raise fail(UnsupportedOpError, node, f"the {what} is computed as {t.dtype.name}; "
                   "LiteRT's kernel takes float32")
    return _rank0(ctx, node, t, what)


def _int_scalar(ctx: LowerCtx, node, t, what: str):
    """An int32 scalar operand (a constant one checked >= 0)."""
    if not t.is_const:
        return _rank0(ctx, node, t, what)
    value = int(np.asarray(t.data).reshape(-1)[0])
    if value < 0:
        raise fail(ShapeError, node, f"{what} {value} must be >= 0")
    return ctx.const(node, what, np.array(value, I32))


def _rank0(ctx: LowerCtx, node, t, what: str):
    """A computed one-element operand as the rank-0 tensor LiteRT's kernel requires."""
    out = ctx.graph.tensor(f"{node.name}/{what}", t.dtype, ())
    ctx.graph.add_op("RESHAPE", [t, ctx.const(node, f"{what}/shape", np.zeros(0, I32))],
                     [out], dict(new_shape=[]), name=node.name)
    return out


def _float_input(ctx: LowerCtx, node, i: int, what: str):
    t = ctx.input(node, i)
    if t.dtype == F32:
        return t
    out = ctx.graph.tensor(f"{node.name}/{what}_f32", F32, t.shape)
    ctx.graph.add_op("CAST", [t], [out], name=node.name)
    return out


def non_max_suppression(version: int):
    """NonMaxSuppressionV<version>(boxes, scores, max_output_size, iou_threshold
    [, score_threshold [, soft_nms_sigma]]) -> NON_MAX_SUPPRESSION_V4 / V5."""
    def rule(ctx: LowerCtx, node) -> None:
        boxes = _float_input(ctx, node, 0, "boxes")
        scores = _float_input(ctx, node, 1, "scores")
        size = _int_scalar(ctx, node, ctx.input(node, 2), "max_output_size")
        sigma = None
        if version == 5:
            sigma_t = ctx.input(node, 5)
            sigma_value = _scalar_value(sigma_t)
            if sigma_value is not None and sigma_value < 0:
                raise fail(ShapeError, node, f"soft_nms_sigma {float(sigma_value)} must be "
                           ">= 0")
            sigma = _float_scalar(ctx, node, sigma_t, "soft_nms_sigma")
        soft = sigma is not None and _scalar_value(sigma) is not None and \
            _scalar_value(sigma) > 0
        iou = _iou_threshold(ctx, node, ctx.input(node, 3), soft)
        if version == 2:
            score = ctx.const(node, "score_threshold", np.array(LOWEST, F32))
        else:
            score = _float_scalar(ctx, node, ctx.input(node, 4), "score_threshold")
        pad = version >= 4 and attr_bool(node, "pad_to_max_output_size", False)
        inputs = [boxes, scores, size, iou, score] + ([sigma] if sigma is not None else [])
        n_sel = 2 if version == 5 else 1
        padded = [ctx.output(node, I32, 0) if pad else
                  ctx.graph.tensor(f"{node.name}/padded_indices", I32)]
        if version == 5:
            padded.append(ctx.output(node, F32, 1) if pad else
                          ctx.graph.tensor(f"{node.name}/padded_scores", F32))
        count = ctx.output(node, I32, n_sel) if version >= 4 else \
            ctx.graph.tensor(f"{node.name}/valid_outputs", I32)
        ctx.graph.add_op("NON_MAX_SUPPRESSION_V5" if version == 5 else
                         "NON_MAX_SUPPRESSION_V4", inputs, padded + [count], name=node.name)
        if pad:
            return
        size_1 = ctx.graph.tensor(f"{node.name}/valid_size", I32, (1,))
        ctx.graph.add_op("RESHAPE", [count, ctx.const(node, "valid_size/shape",
                                                       np.array([1], I32))],
                         [size_1], dict(new_shape=[1]), name=node.name)
        begin = ctx.const(node, "begin", np.zeros(1, I32))
        for k, t in enumerate(padded):  # (a dynamic shape: SLICE's size is computed)
            ctx.graph.add_op("SLICE", [t, begin, size_1], [ctx.output(node, t.dtype, k)],
                             name=node.name)
    rule.__name__ = f"non_max_suppression_v{version}"
    return rule


# -- CombinedNonMaxSuppression -------------------------------------------------------------------
class _Emit:
    """Small helper: adds ops under one node's name, each output a fresh named tensor."""

    def __init__(self, ctx: LowerCtx, node) -> None:
        self.ctx, self.node = ctx, node
        self.n = 0

    def const(self, data, dtype=None):
        self.n += 1
        return self.ctx.const(self.node, f"c{self.n}", data, dtype)

    def op(self, type_: str, inputs, dtype, options=None, n_outputs: int = 1, out=None):
        """One op; its output(s) fresh tensors, or `out` (a node output) if given."""
        if out is not None:
            self.ctx.graph.add_op(type_, inputs, [out], options, name=self.node.name)
            return out
        outs = []
        for _ in range(n_outputs):
            self.n += 1
            outs.append(self.ctx.graph.tensor(
                f"{self.node.name}/t{self.n}", dtype[len(outs)]
                if isinstance(dtype, tuple) else dtype))
        self.ctx.graph.add_op(type_, inputs, outs, options, name=self.node.name)
        return outs if n_outputs > 1 else outs[0]

    def reshape(self, x, shape, dtype):
        return self.op("RESHAPE", [x, self.const(np.array(shape, I32))], dtype,
                       dict(new_shape=list(shape)))

    def slice(self, x, begin, size, dtype):
        return self.op("SLICE", [x, self.const(np.array(begin, I32)),
                                 self.const(np.array(size, I32))], dtype)


def _combined_params(ctx: LowerCtx, node):
    boxes, scores = ctx.input(node, 0), ctx.input(node, 1)
    if boxes.shape is None or scores.shape is None:  # the ops lowered so far tell them
        infer_shapes(ctx.graph, strict=False)
    if boxes.shape is None or scores.shape is None or any(
            d is None or d < 0 for d in boxes.shape + scores.shape):
        raise fail(UnsupportedOpError, node, "needs the shapes of boxes and scores; give "
                   "the inputs' shapes (--input-shape)")
    if len(boxes.shape) != 4 or boxes.shape[3] != 4:
        raise fail(ShapeError, node, f"boxes must be [batch, num_boxes, q, 4], are "
                   f"{list(boxes.shape)}")
    b, n, q, _ = boxes.shape
    if len(scores.shape) != 3 or scores.shape[:2] != (b, n):
        raise fail(ShapeError, node, f"scores must be [{b}, {n}, num_classes], are "
                   f"{list(scores.shape)}")
    c = scores.shape[2]
    if q not in (1, c):
        raise fail(ShapeError, node, f"boxes have q = {q}; it must be 1 or the number of "
                   f"classes {c}")
    values = []
    for i, what in ((2, "max_output_size_per_class"), (3, "max_total_size")):
        v = int(np.asarray(ctx.const_input(node, i, what)).reshape(-1)[0])
        if v <= 0:
            raise fail(ShapeError, node, f"{what} {v} must be > 0")
        values.append(v)
    if b * c > MAX_UNROLLED or n == 0 or c == 0:
        raise fail(UnsupportedOpError, node, f"{b} images x {c} classes of {n} boxes: "
                   f"edgelite lowers 1..{MAX_UNROLLED} (image, class) pairs with boxes")
    return b, n, q, c, values[0], values[1]


def combined_non_max_suppression(ctx: LowerCtx, node) -> None:
    b, n, q, c, per_class, total = _combined_params(ctx, node)
    pad_per_class = attr_bool(node, "pad_per_class", False)
    s = min(per_class, n)  # size_per_class
    k_out = min(total, per_class * c) if pad_per_class else total  # per_batch_size
    k = min(k_out, s * c)  # entries ranked (TOPK_V2 needs k <= c * s)
    e = _Emit(ctx, node)
    boxes = _float_input(ctx, node, 0, "boxes")
    scores = _float_input(ctx, node, 1, "scores")
    iou = _iou_threshold(ctx, node, ctx.input(node, 4), False)
    score_t = ctx.input(node, 5)
    score = _float_scalar(ctx, node, score_t, "score_threshold")
    size = e.const(np.array(s, I32))
    # per image: scores as [c, n] rows, boxes as [q, n, 4]
    scores_t = e.op("TRANSPOSE", [scores, e.const(np.array([0, 2, 1], I32))], F32)
    boxes_t = e.op("TRANSPOSE", [boxes, e.const(np.array([0, 2, 1, 3], I32))], F32) \
        if q > 1 else boxes
    plan = _Plan(n, q, c, s, k, k_out, attr_bool(node, "clip_boxes", True))
    outs = [ctx.output(node, dtype, i) for i, dtype in enumerate((F32, F32, F32, I32))]
    results = ([], [], [], [])
    for bi in range(b):
        img_scores = scores_t if b == 1 else e.slice(scores_t, [bi, 0, 0], [1, c, n], F32)
        img_scores = e.reshape(img_scores, (c, n), F32)
        img_boxes = boxes_t if b == 1 else e.slice(boxes_t, [bi, 0, 0, 0],
                                                   [1, q, n, 4] if q > 1 else [1, n, 1, 4], F32)
        img_boxes = e.reshape(img_boxes, (q * n, 4), F32)
        rows = e.op("UNPACK", [img_scores], F32, dict(num=c, axis=0), n_outputs=c) \
            if c > 1 else [e.reshape(img_scores, (n,), F32)]
        class_boxes = [img_boxes] if q == 1 else e.op(
            "UNPACK", [e.reshape(img_boxes, (q, n, 4), F32)], F32, dict(num=q, axis=0),
            n_outputs=q)
        picked, counts = [], []
        for ci in range(c):
            idx, cnt = e.op("NON_MAX_SUPPRESSION_V4", [class_boxes[ci if q > 1 else 0],
                                                        rows[ci], size, iou, score],
                            (I32, I32), n_outputs=2)
            picked.append(idx)
            counts.append(cnt)
        fill = _fill(e, score_t, score, img_scores)
        image = _combine_image(e, plan, picked, counts, img_scores, img_boxes, fill,
                               outs if b == 1 else [None] * 4)
        for parts, t in zip(results, image):
            parts.append(t)
    if b > 1:
        for out, parts in zip(outs, results):
            ctx.graph.add_op("CONCATENATION", parts, [out], dict(axis=0), name=node.name)


@dataclass(frozen=True)
class _Plan:
    n: int  # boxes per image
    q: int  # box sets (1: shared by the classes)
    c: int  # classes
    s: int  # boxes kept per class: min(max_output_size_per_class, n)
    k: int  # entries ranked: min(per_batch_size, c * s)
    k_out: int  # per_batch_size: the outputs' second dimension
    clip: bool


def _fill(e: _Emit, score_t, score, img_scores):
    """What unfilled slots rank with: below every selected score (each is > the score
    threshold), and finite, so int8 calibration sees a usable range. The threshold itself,
    unless it is a constant that is not finite: then min(scores) - (|min(scores)| + 1)."""
    value = _scalar_value(score_t)
    if value is None or np.isfinite(value):
        return score
    low = e.op("REDUCE_MIN", [img_scores, e.const(np.array([0, 1], I32))], F32,
               dict(keep_dims=False))
    margin = e.op("ADD", [e.op("ABS", [low], F32), e.const(np.ones((), F32))], F32)
    return e.op("SUB", [low, margin], F32)


def _combine_image(e: _Emit, p: _Plan, picked, counts, img_scores, img_boxes, fill, dest):
    """One image: the selections of every class, in class order (slot = class * s + j),
    ranked by score (SelectResultPerBatch). Returns boxes [1, k_out, 4], scores and
    classes [1, k_out] and the count [1], written into `dest` where given."""
    slot_class = np.repeat(np.arange(p.c, dtype=I32), p.s)
    indices = picked[0] if p.c == 1 else e.op("CONCATENATION", picked, I32, dict(axis=0))
    count = e.reshape(counts[0], (1,), I32) if p.c == 1 else \
        e.op("PACK", counts, I32, dict(axis=0, values_count=p.c))
    # each slot's score: scores[class, index]; the fill where the class selected fewer
    row = e.op("ADD", [indices, e.const(slot_class * p.n)], I32)
    slot_scores = e.op("GATHER", [e.reshape(img_scores, (p.c * p.n,), F32), row], F32,
                       dict(axis=0))
    filled = e.op("LESS", [e.const(np.tile(np.arange(p.s, dtype=I32), p.c)[None]),
                           e.op("GATHER", [count, e.const(slot_class)], I32, dict(axis=0))],
                  np.bool_)  # [1, c * s]: the batch dimension from here on
    ranked = e.op("SELECT_V2", [filled, slot_scores, fill], F32)
    top_scores, top_slots = e.op("TOPK_V2", [ranked, e.const(np.array(p.k, I32))],
                                 (F32, I32), n_outputs=2)
    # valid_detections: min(selected, per_batch_size); selected <= c * s, so min(., k)
    total = e.op("SUM", [count, e.const(np.array([0], I32))], I32, dict(keep_dims=True))
    valid = e.op("MINIMUM", [total, e.const(np.array(p.k, I32))], I32, out=dest[3])
    padded = p.k_out > p.k  # per_batch_size beyond what can be selected: zeros
    final = [None] * 3 if padded else dest[:3]
    keep = e.op("LESS", [e.const(np.arange(p.k, dtype=I32)[None]), valid], np.bool_)
    zeros = e.const(np.zeros((), F32))
    out_scores = e.op("SELECT_V2", [keep, top_scores, zeros], F32, out=final[1])
    classes = e.op("GATHER", [e.const(slot_class.astype(F32)), top_slots], F32, dict(axis=0))
    out_classes = e.op("SELECT_V2", [keep, classes, zeros], F32, out=final[2])
    box_row = e.op("GATHER", [row if p.q > 1 else indices, top_slots], I32, dict(axis=0))
    box = e.op("GATHER", [img_boxes, box_row], F32, dict(axis=0))
    if p.clip:
        box = e.op("MAXIMUM", [e.op("MINIMUM", [box, e.const(np.ones((), F32))], F32), zeros],
                   F32)
    keep_box = e.op("LESS", [e.const(np.arange(p.k, dtype=I32)[None, :, None]), valid],
                    np.bool_)
    out_boxes = e.op("SELECT_V2", [keep_box, box, zeros], F32, out=final[0])
    outs = [out_boxes, out_scores, out_classes]
    if padded:
        outs = [e.op("PAD", [t, e.const(np.array([[0, 0], [0, p.k_out - p.k]] +
                                                 [[0, 0]] * (i == 0), I32))], F32, out=d)
                for i, (t, d) in enumerate(zip(outs, dest))]
    return outs + [valid]


# -- specs (TF op definitions: image_ops.cc) ----------------------------------------------------
_FLOAT32 = frozenset({np.dtype(np.float32)})
_BOXES = In("the boxes", FLOAT, ranks=(2,))
_SCORES = In("the scores", FLOAT, ranks=(1,))
_SIZE = scalar_input("max_output_size", frozenset({np.dtype(I32)}), const=False)


def _threshold(what: str) -> In:
    return scalar_input(what, FLOAT, typed="T_threshold", const=False)


_PAD = Attr("pad_to_max_output_size", "b")
_V2 = spec(_BOXES, _SCORES, _SIZE, _threshold("iou_threshold"))
_V3 = spec(_BOXES, _SCORES, _SIZE, _threshold("iou_threshold"), _threshold("score_threshold"))
_V4 = spec(_BOXES, _SCORES, _SIZE, _threshold("iou_threshold"), _threshold("score_threshold"),
           attrs=(_PAD,))
_V5 = spec(_BOXES, _SCORES, _SIZE, *(scalar_input(w, FLOAT, typed="T", const=False) for w in
                                     ("iou_threshold", "score_threshold", "soft_nms_sigma")),
           attrs=(_PAD,))
_COMBINED = spec(In("the boxes", _FLOAT32, None, ranks=(4,)),
                 In("the scores", _FLOAT32, None, ranks=(3,)),
                 scalar_input("max_output_size_per_class", frozenset({np.dtype(I32)})),
                 scalar_input("max_total_size", frozenset({np.dtype(I32)})),
                 scalar_input("iou_threshold", _FLOAT32, const=False),
                 scalar_input("score_threshold", _FLOAT32, const=False),
                 attrs=(Attr("pad_per_class", "b"), Attr("clip_boxes", "b")))

RULES = {
    "NonMaxSuppressionV2": Lowering(non_max_suppression(2), _V2),
    "NonMaxSuppressionV3": Lowering(non_max_suppression(3), _V3),
    "NonMaxSuppressionV4": Lowering(non_max_suppression(4), _V4),
    "NonMaxSuppressionV5": Lowering(non_max_suppression(5), _V5),
    "CombinedNonMaxSuppression": Lowering(combined_non_max_suppression, _COMBINED),
}
