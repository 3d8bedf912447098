"""NON_MAX_SUPPRESSION_V4 / V5: greedy (and Soft-) non-max suppression of one set of boxes.

Matches tensorflow/lite/kernels/non_max_suppression.cc and the float NonMaxSuppression of
internal/reference/non_max_suppression.h:

* inputs: boxes [N, 4] (any two diagonal corners y1, x1, y2, x2), scores [N], max_output_size
  (int32 scalar), iou_threshold and score_threshold (float scalars); V5 adds soft_nms_sigma.
  Float32 only, as the installed LiteRT (2.3.0: "input_boxes->type != kTfLiteFloat32");
  its newest sources add int8 / int16 kernels. Others are refused in one line;
* outputs: V4 selected_indices [max_output_size] int32 and the count selected (int32
  scalar); V5 selected_indices, selected_scores [max_output_size] float32 and the count.
  Slots past the count are zero (ResetUnusedElementsToZeroes). A constant max_output_size
  fixes the shapes; a computed one makes them dynamic (sized at invoke, as LiteRT's
  SetTensorToDynamic does). A negative one fails, as TF_LITE_ENSURE(max_output_size >= 0).

The algorithm, step by step as LiteRT's (every quantity float32):

* candidates are the boxes with score > score_threshold (strictly), kept in a
  std::priority_queue ordered by score only. Equal scores leave in the order the C++
  library's heap gives: edgelite replays libstdc++'s push_heap / pop_heap (_Heap below),
  so ties come out as LiteRT's do;
* at most min(#candidates, max_output_size) are selected. The best candidate is compared
  with the boxes selected since it was last looked at, latest first: IoU >= iou_threshold
  drops it (hard suppression); else with sigma > 0 its score is multiplied by
  expf((-0.5f / sigma) * iou * iou), and a score fallen to <= score_threshold stops the
  scan. A candidate whose score did not change is selected. Then, unlike TensorFlow's
  kernel (which `continue`s after selecting), any candidate still above score_threshold is
  pushed back -- a selected one too: it meets itself next time (IoU 1, dropped whenever
  iou_threshold <= 1), but a zero-area box (IoU 0 with everything) or an iou_threshold
  above 1 selects it again. edgelite reproduces that;
* IoU (ComputeIntersectionAndUnion): corners sorted per box, area = (ymax - ymin) *
  (xmax - xmin); either area <= 0 gives 0; intersection = max(dy, 0) * max(dx, 0);
  union = (area1 + area2) - intersection; IoU = intersection / union (0 if union is 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Kernel, OpContext, OutputSpec
from .opdef import OpDef
from edgelite.errors import ShapeError
from ..libm import expf
from ..loader.model import MAX_TENSOR_BYTES
from edgelite.names import quoted

F32 = np.float32
MAX_OUTPUT_SIZE = MAX_TENSOR_BYTES // 4  # int32 slots an output may hold


@dataclass(frozen=True)
class NmsRecord:
    where: str  # the op, for errors at invoke
    soft: bool  # V5: a sigma input and a selected_scores output
    max_output_size: int | None  # None: read at invoke (dynamic outputs)


def prepare(ctx: OpContext):
    soft = ctx.op_name == "NON_MAX_SUPPRESSION_V5"
    n_in = 6 if soft else 5
    ctx.check_arity(n_in, n_in, num_outputs=3 if soft else 2)
    boxes, scores = ctx.input(0), ctx.input(1)
    for i, role in enumerate(("boxes", "scores", None, "iou_threshold", "score_threshold",
                              "soft_nms_sigma")[:n_in]):
        if role is not None:
            ctx.require_dtype(ctx.input(i), (np.float32,), role)
    if boxes.rank != 2 or boxes.shape[1] != 4:
        raise ctx.shape_error(f"boxes {quoted(boxes.name)} must have shape [num_boxes, 4], "
                              f"has {list(boxes.shape)}")
    if scores.shape != boxes.shape[:1]:
        raise ctx.shape_error(f"scores {quoted(scores.name)} must have shape "
                              f"[{boxes.shape[0]}] (one per box), has {list(scores.shape)}")
    size_t = ctx.input(2)
    ctx.require_dtype(size_t, (np.int32,), "max_output_size")
    for i in range(2, n_in):
        if ctx.input(i).rank != 0:
            raise ctx.shape_error(f"input {i} {quoted(ctx.input(i).name)} must be a scalar, "
                                  f"has shape {list(ctx.input(i).shape)}")
    size = None if size_t.data is None else int(size_t.data.reshape(-1)[0])
    if size is not None:
        _check_size(ctx.describe(), size)
    if soft and ctx.input(5).data is not None and ctx.input(5).data.reshape(-1)[0] < 0:
        raise ctx.shape_error(f"soft_nms_sigma {float(ctx.input(5).data.reshape(-1)[0])} "
                              "must be >= 0")
    dynamic = size is None
    shape = (0 if dynamic else size,)
    specs = [OutputSpec(shape, np.dtype(np.int32), dynamic)]
    if soft:
        specs.append(OutputSpec(shape, np.dtype(F32), dynamic))
    specs.append(OutputSpec((), np.dtype(np.int32)))
    if dynamic:  # the count too: the op fills all of its outputs at invoke
        specs[-1] = OutputSpec((), np.dtype(np.int32), True)
    return tuple(specs), NmsRecord(ctx.describe(), soft, size)


def _check_size(where: str, size: int) -> None:
    if not 0 <= size <= MAX_OUTPUT_SIZE:
        raise ShapeError(f"{where}: max_output_size {size} must lie in [0, {MAX_OUTPUT_SIZE}]"
                         " (LiteRT refuses a negative one; a larger one would not fit)")


def eval(rec: NmsRecord, inputs, outputs) -> None:
    boxes, scores = inputs[0], inputs[1]
    size = rec.max_output_size
    if size is None:
        size = int(inputs[2].reshape(-1)[0])
        _check_size(rec.where, size)
    iou_threshold = F32(inputs[3].reshape(-1)[0])
    score_threshold = F32(inputs[4].reshape(-1)[0])
    sigma = F32(inputs[5].reshape(-1)[0]) if rec.soft else F32(0)
    if sigma < 0:
        raise ShapeError(f"{rec.where}: soft_nms_sigma {float(sigma)} must be >= 0")
    selected, selected_scores = suppress(boxes, scores, size, iou_threshold,
                                         score_threshold, sigma)
    count = len(selected)
    indices = np.zeros(size, np.int32)
    indices[:count] = selected
    results = [indices]
    if rec.soft:
        picked = np.zeros(size, F32)
        picked[:count] = selected_scores
        results.append(picked)
    results.append(np.array(count, np.int32))
    if rec.max_output_size is None:
        outputs[:] = results
    else:
        for out, value in zip(outputs, results):
            np.copyto(out, value)


def suppress(boxes: np.ndarray, scores: np.ndarray, max_output_size: int, iou_threshold,
             score_threshold, sigma) -> tuple[list[int], list]:
    """The selected indices and their (soft-suppressed) scores, as LiteRT selects them."""
    corners = _corners(np.asarray(boxes, F32))
    scores = np.asarray(scores, F32)
    heap = _Heap()
    for i in np.flatnonzero(scores > score_threshold):
        heap.push([scores[i], int(i), 0])
    num_outputs = min(len(heap), max_output_size)
    scale = F32(-0.5) / sigma if sigma > 0 else F32(0)
    selected: list[int] = []
    selected_scores: list = []
    while len(selected) < num_outputs and len(heap):
        cand = heap.pop()
        original = cand[0]
        hard = False
        begin = cand[2]
        if begin < len(selected):
            ious = _iou(corners, cand[1], np.array(selected[begin:], np.intp))
            for iou in ious[::-1]:  # latest selection first
                if iou >= iou_threshold:
                    hard = True
                    break
                if sigma > 0:
                    cand[0] = F32(cand[0] * expf(scale * iou * iou))
                if cand[0] <= score_threshold:
                    break
        cand[2] = len(selected)
        if not hard:
            if cand[0] == original:
                selected.append(cand[1])
                selected_scores.append(cand[0])
            if cand[0] > score_threshold:
                heap.push(cand)
    return selected, selected_scores


def _min(a, b):
    """std::min(a, b): (b < a) ? b : a -- a NaN in b is not taken (np.minimum takes it)."""
    return np.where(b < a, b, a)


def _max(a, b):
    """std::max(a, b): (a < b) ? b : a."""
    return np.where(a < b, b, a)


def _corners(boxes: np.ndarray):
    """(ymin, xmin, ymax, xmax, area) per box, float32 (ComputeIntersectionAndUnion)."""
    y1, x1, y2, x2 = boxes.T
    ymin, ymax = _min(y1, y2), _max(y1, y2)
    xmin, xmax = _min(x1, x2), _max(x1, x2)
    return ymin, xmin, ymax, xmax, (ymax - ymin) * (xmax - xmin)


def _iou(corners, i: int, js: np.ndarray) -> np.ndarray:
    """IoU of box i with boxes js, float32, in LiteRT's order of operations (std::min /
    std::max as C++ has them, so NaN corners give LiteRT's result too)."""
    ymin, xmin, ymax, xmax, area = corners
    dy = _min(ymax[i], ymax[js]) - _max(ymin[i], ymin[js])
    dx = _min(xmax[i], xmax[js]) - _max(xmin[i], xmin[js])
    inter = _max(dy, F32(0)) * _max(dx, F32(0))
    union = (area[i] + area[js]) - inter
    degenerate = (area[i] <= 0) | (area[js] <= 0) | (union == 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        iou = inter / np.where(degenerate, F32(1), union)
    return np.where(degenerate, F32(0), iou).astype(F32)


class _Heap:
    """std::priority_queue<Candidate> (a max-heap on the score alone) as libstdc++ runs it:
    push = push_back + __push_heap; pop = __pop_heap (the last element sifted down from the
    root through the larger children, then up) + pop_back. Equal scores therefore leave in
    exactly LiteRT's order. Entries are [score, index, suppress_begin_index]."""

    def __init__(self) -> None:
        self.items: list[list] = []

    def __len__(self) -> int:
        return len(self.items)

    def push(self, value: list) -> None:
        self.items.append(value)
        self._up(len(self.items) - 1, 0, value)

    def _up(self, hole: int, top: int, value: list) -> None:
        a = self.items
        parent = (hole - 1) // 2
        while hole > top and a[parent][0] < value[0]:
            a[hole] = a[parent]
            hole = parent
            parent = (hole - 1) // 2
        a[hole] = value

    def pop(self) -> list:
        a = self.items
        best = a[0]
        value = a.pop()
        n = len(a)
        if n == 0:
            return best
        hole, child = 0, 0  # __adjust_heap(first, 0, n, value)
        while child < (n - 1) // 2:
            child = 2 * (child + 1)
            if a[child][0] < a[child - 1][0]:
                child -= 1
            a[hole] = a[child]
            hole = child
        if n % 2 == 0 and child == (n - 2) // 2:
            child = 2 * (child + 1)
            a[hole] = a[child - 1]
            hole = child - 1
        self._up(hole, 0, value)
        return best


OPS = (
    # Float only (kept float by the quantizer: DEQUANTIZE before it); selects boxes of one
    # image, so it never keeps batch samples apart.
    OpDef("NON_MAX_SUPPRESSION_V4", float=Kernel(prepare, eval)),
    OpDef("NON_MAX_SUPPRESSION_V5", float=Kernel(prepare, eval)),
)
