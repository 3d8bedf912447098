"""NON_MAX_SUPPRESSION_V4 / V5 (interpreter/kernels/non_max_suppression.py) exact against
LiteRT: random boxes with tied scores (LiteRT's heap order), flipped corners, zero-area boxes,
thresholds at the edges (IoU 0 and above 1, score thresholds equal to scores), Soft-NMS,
max_output_size 0 and larger than the box count, computed (dynamic) max_output_size; hostile
values refused in one line."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.non_max_suppression import suppress
from tests.support import run_edgelite, run_litert

from ..op_models import const, op_model

F32 = np.float32
LEVELS = F32([0.1, 0.2, 0.5, 0.7, 0.9])


def nms_model(boxes, scores, size, iou, score, sigma=None, *, size_const=True):
    ops = [boxes, scores, const(np.array(size, np.int32)) if size_const
           else np.array(size, np.int32), const(np.array(iou, F32)),
           const(np.array(score, F32))]
    declared = (min(max(size, 0), 64),)  # the kernels recompute it
    outs = [(declared, np.int32)]
    if sigma is not None:
        ops.append(const(np.array(sigma, F32)))
        outs.append((declared, F32))
    outs.append(((), np.int32))
    op = "NON_MAX_SUPPRESSION_V4" if sigma is None else "NON_MAX_SUPPRESSION_V5"
    return op_model(op, ops, outs)


def exact(model, feeds):
    ours, ref = run_edgelite(model, feeds), run_litert(model, feeds)
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape)
        np.testing.assert_array_equal(a, b)
    return ours


def random_boxes(rng, n, *, flip=False, zero_area=False):
    corner = rng.uniform(0, 1, (n, 2)).astype(F32)
    boxes = np.concatenate([corner, corner + rng.uniform(0, 0.5, (n, 2)).astype(F32)], 1)
    if flip:  # y1 > y2, x2 < x1: corners in any diagonal order
        boxes = boxes[:, [2, 1, 0, 3]]
    if zero_area:
        boxes[::3, 2] = boxes[::3, 0]
    return boxes


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("soft", [False, True], ids=["v4", "v5"])
def test_random_cases_match_litert(seed, soft):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    boxes = random_boxes(rng, n, flip=seed % 3 == 0, zero_area=seed % 4 == 1)
    scores = rng.choice(LEVELS, n) if seed % 2 else rng.uniform(0, 1, n).astype(F32)
    size = int(rng.integers(0, n + 3))
    iou = F32(rng.choice([0.0, 0.3, 0.5, 1.0, 1.5]))
    score = F32(rng.choice([-np.inf, 0.1, 0.5]))
    sigma = F32(rng.choice([0.0, 0.3, 1.0])) if soft else None
    exact(*nms_model(boxes, scores, size, iou, score, sigma))


@pytest.mark.parametrize("seed", range(4))
def test_nan_and_inf_corners_and_scores(seed):
    rng = np.random.default_rng(seed)
    boxes, scores = random_boxes(rng, 20), rng.uniform(0, 1, 20).astype(F32)
    boxes.reshape(-1)[rng.choice(80, 12, replace=False)] = F32(np.nan)
    boxes.reshape(-1)[rng.choice(80, 4, replace=False)] = F32(np.inf)
    scores[rng.choice(20, 3, replace=False)] = F32(np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        exact(*nms_model(boxes, scores, 12, 0.3, 0.1, 0.5 if seed % 2 else None))


def test_ties_leave_in_litert_heap_order():
    """Seven equal scores, no overlap: LiteRT's std::priority_queue pops them in its heap's
    order, not by index."""
    boxes = np.array([[2 * i, 2 * i, 2 * i + 1, 2 * i + 1] for i in range(7)], F32)
    indices, count = exact(*nms_model(boxes, np.full(7, 0.5, F32), 7, 0.5, 0.0))
    assert count == 7
    np.testing.assert_array_equal(indices, [0, 2, 5, 6, 4, 1, 3])


def test_score_threshold_is_strict_and_iou_threshold_inclusive():
    boxes = F32([[0, 0, 1, 1], [0, 0, 1, 2], [5, 5, 6, 6]])  # IoU(0, 1) = 0.5
    scores = F32([0.9, 0.8, 0.3])
    indices, count = exact(*nms_model(boxes, scores, 3, 0.5, 0.3))
    assert count == 1 and indices.tolist() == [0, 0, 0]  # 1 suppressed at IoU == 0.5
    indices, count = exact(*nms_model(boxes, scores, 3, 0.51, 0.29))
    assert count == 3 and indices.tolist() == [0, 1, 2]


def test_zero_area_box_is_selected_again():
    """LiteRT pushes a selected candidate back into its queue: a zero-area box (IoU 0 with
    itself) is selected twice -- reproduced, not fixed."""
    boxes = F32([[0, 0, 0, 1], [3, 3, 4, 4]])
    indices, count = exact(*nms_model(boxes, F32([0.9, 0.2]), 4, 0.5, 0.0))
    assert count == 2 and indices.tolist() == [0, 0, 0, 0]  # at most 2: the candidates


def test_soft_nms_decays_scores():
    boxes = F32([[0, 0, 1, 1], [0, 0, 1, 1.5], [3, 3, 4, 4]])
    indices, scores, count = exact(*nms_model(boxes, F32([0.9, 0.8, 0.5]), 3, 1.0, 0.0, 0.5))
    iou = F32(1) / F32(1.5)  # box 1 decays to 0.8 exp(-iou^2 / (2 sigma)) = 0.512 > 0.5
    assert count == 3 and indices.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(scores, F32([0.9, F32(0.8) * np.exp(F32(-1) * iou * iou), 0.5]))


@pytest.mark.parametrize("size", [1, 2, 9])  # LiteRT's Python API cannot read size 0
def test_computed_max_output_size_gives_dynamic_outputs(rng, size):
    boxes = random_boxes(rng, 6)
    scores = rng.uniform(0, 1, 6).astype(F32)
    ours = exact(*nms_model(boxes, scores, size, 0.4, 0.2, 0.5, size_const=False))
    assert ours[0].shape == (size,)


def test_matches_reference_selection(rng):
    """suppress() directly: the same as the op."""
    boxes = random_boxes(rng, 20)
    scores = rng.uniform(0, 1, 20).astype(F32)
    indices, _, count = exact(*nms_model(boxes, scores, 20, 0.3, 0.1, 0.0))
    selected, _ = suppress(boxes, scores, 20, F32(0.3), F32(0.1), F32(0))
    assert indices[:count].tolist() == selected


@pytest.mark.parametrize("size", [-1, 2**31 - 1])
def test_hostile_max_output_size_is_refused(rng, size):
    model, _ = nms_model(random_boxes(rng, 3), F32([1, 2, 3]), size, 0.5, 0.0)
    with pytest.raises(ShapeError, match="max_output_size"):
        Interpreter(model_content=model).allocate_tensors()


def test_negative_computed_max_output_size_is_refused_at_invoke(rng):
    model, feeds = nms_model(random_boxes(rng, 3), F32([1, 2, 3]), 2, 0.5, 0.0,
                             size_const=False)
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), feeds[:2] + [np.int32(-3)]):
        interp.set_tensor(detail["index"], np.asarray(value))
    with pytest.raises(ShapeError, match="max_output_size -3 must lie in"):
        interp.invoke()


def test_negative_sigma_is_refused(rng):
    model, _ = nms_model(random_boxes(rng, 3), F32([1, 2, 3]), 2, 0.5, 0.0, -1.0)
    with pytest.raises(ShapeError, match="soft_nms_sigma -1.0 must be >= 0"):
        Interpreter(model_content=model).allocate_tensors()


def test_bad_shapes_and_types_are_refused(rng):
    model, _ = nms_model(rng.uniform(0, 1, (3, 5)).astype(F32), F32([1, 2, 3]), 2, 0.5, 0.0)
    with pytest.raises(ShapeError, match=r"must have shape \[num_boxes, 4\]"):
        Interpreter(model_content=model).allocate_tensors()
    model, _ = nms_model(random_boxes(rng, 3), F32([1, 2]), 2, 0.5, 0.0)
    with pytest.raises(ShapeError, match="one per box"):
        Interpreter(model_content=model).allocate_tensors()
    model, _ = nms_model(random_boxes(rng, 3).astype(np.int8), np.int8([1, 2, 3]), 2, 0.5, 0.0)
    with pytest.raises(UnsupportedOpError, match="boxes tensor 'input0' has type int8"):
        Interpreter(model_content=model).allocate_tensors()
