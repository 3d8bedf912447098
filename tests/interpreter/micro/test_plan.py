"""interpreter/micro/plan.py: TFLM's greedy memory planner (GreedyMemoryPlanner) and its
inputs -- buffer sizes, the offline plan's metadata, the subgraphs a control-flow op runs.
Whole plans against TFLM's own recording allocator: tests/interpreter/micro/test_arena.py."""

from types import SimpleNamespace

import numpy as np
import pytest

from edgelite.errors import ModelFormatError
from edgelite.interpreter.micro.plan import (OFFLINE_METADATA, PlannedBuffer, align_up,
                                             called_subgraphs, greedy_offsets, offline_offsets,
                                             peak, tensor_bytes)
from edgelite.interpreter.loader.model import load_model

from ..tflite_builder import ModelBuilder


def test_greedy_places_largest_first_in_the_lowest_gap():
    # sizes 32, 48, 16, 32 alive at [0,1], [1,2], [2,3], [0,3]. Order: 48 (id 1) at 0;
    # the two 32s, higher id first: id 3 at 48 (overlaps 1), id 0 at 80 (overlaps 1, 3);
    # 16 (id 2) overlaps 1 and 3 but not 0: the first gap above them is 80
    assert greedy_offsets([32, 48, 16, 32], [0, 1, 2, 0], [1, 2, 3, 3],
                          [-1, -1, -1, -1]) == [80, 0, 80, 48]


def test_greedy_keeps_offline_offsets_and_plans_around_them():
    # id 0 is offline at 64 (placed first); 64-byte id 1 overlapping it fits below it at 0,
    # 32-byte id 2 overlapping both goes above: 64 + 32 = 96
    assert greedy_offsets([32, 64, 32], [0, 0, 0], [1, 1, 1], [64, -1, -1]) == [64, 0, 96]


def test_buffers_that_never_overlap_in_time_share_offset_zero():
    assert greedy_offsets([64, 64, 64], [0, 1, 2], [0, 1, 2], [-1, -1, -1]) == [0, 0, 0]
    assert greedy_offsets([], [], [], []) == []


def test_align_up_and_peak():
    assert [align_up(n) for n in (0, 1, 16, 17, 33)] == [0, 16, 16, 32, 48]
    assert align_up(5, 4) == 8
    buffers = [PlannedBuffer(0, 0, -1, 32, 0, 1, 64), PlannedBuffer(0, 1, -1, 80, 0, 1, 0)]
    assert peak(buffers) == 96 and peak([]) == 0


def test_tensor_bytes_is_elements_times_tflms_type_size():
    b = ModelBuilder()
    x = b.tensor("x", (2, 3, 5), np.float32)
    q = b.tensor("q", (7,), np.int8)
    h = b.tensor("h", (4, 2), np.int16)
    y = b.tensor("y", (2, 3, 5), np.float32)
    b.op("ADD", [x, x], [y])
    tensors = load_model(b.build([x, q, h], [y])).subgraphs[0].tensors
    assert [tensor_bytes(tensors[i]) for i in (x, q, h)] == [120, 7, 16]


def test_offline_offsets_read_the_metadata():
    raw = np.array([1, 0, 3, 64, -1, 0], "<i4").tobytes()
    assert offline_offsets(SimpleNamespace(metadata={OFFLINE_METADATA: raw})) == [64, -1, 0]
    assert offline_offsets(SimpleNamespace(metadata={})) is None
    assert offline_offsets(SimpleNamespace(metadata={OFFLINE_METADATA: raw[:8]})) is None


def _while(cond, body):
    return SimpleNamespace(name="WHILE", index=2,
                           options={"cond_subgraph_index": cond, "body_subgraph_index": body})


def test_called_subgraphs_in_tflms_order_and_the_refusals():
    model = SimpleNamespace(subgraphs=[None] * 3)
    assert called_subgraphs(model, 0, _while(1, 2), (0,)) == [1, 2]
    assert called_subgraphs(model, 0, SimpleNamespace(name="ADD", options={}), (0,)) == []
    with pytest.raises(ModelFormatError, match=r"^WHILE op 2 of subgraph 0 runs subgraph 5; "
                                               r"the model has 3$"):
        called_subgraphs(model, 0, _while(1, 5), (0,))
    with pytest.raises(ModelFormatError, match=r"runs subgraph 0, which is already running"):
        called_subgraphs(model, 0, _while(1, 0), (0,))
