"""interpreter/split_plan.py: the by-sample plan of an allocation -- made for a batched
network whose samples stay apart and whose arena per sample is worth splitting, not made
for one sample, a small network, or a graph that mixes the samples (the split's results:
test_batch_split.py)."""

import numpy as np

from edgelite.interpreter.allocation import allocate
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.settings import Settings
from edgelite.interpreter.split_plan import plan_split

from .tflite_builder import ModelBuilder

SIDE = 64  # [64, 64, 16] float32 activations: 256 KB per sample, over batch_split's minimum


def _model(mix: bool = False, channels: int = 16) -> bytes:
    """x[1, SIDE, SIDE, C] -> RELU -> h -> ADD(h, h) -> y; ``mix``: y = SUM over the batch."""
    b = ModelBuilder()
    shape = (1, SIDE, SIDE, channels)
    x, h = b.tensor("x", shape), b.tensor("h", shape)
    b.op("RELU", [x], [h])
    if mix:
        y = b.tensor("y", shape[1:])
        b.op("SUM", [h, b.const("axis", np.int32([0]))], [y], keep_dims=False)
    else:
        y = b.tensor("y", shape)
        b.op("ADD", [h, h], [y])
    return b.build([x], [y])


def _plan(model: bytes, batch: int, threads: int = 2):
    sg = load_model(model).subgraphs[0]
    shapes = {sg.inputs[0]: (batch,) + tuple(sg.tensors[sg.inputs[0]].shape[1:])}
    settings = Settings(threads=threads)
    alloc = allocate(sg, shapes, settings)
    return sg, plan_split(alloc, sg, shapes, set(), settings)


def test_a_batched_network_is_split_over_the_threads():
    sg, plan = _plan(_model(), batch=8, threads=3)
    assert plan is not None
    assert plan.inputs == list(sg.inputs) and plan.outputs == list(sg.outputs)
    assert plan.ranges == [(0, 2), (2, 5), (5, 8)]   # batch * i // threads
    assert 1 <= plan.chunk <= 3


def test_no_plan_for_one_sample_a_small_network_or_mixed_samples():
    assert _plan(_model(), batch=1)[1] is None
    assert _plan(_model(channels=1), batch=8)[1] is None     # 16 KB per sample: not worth it
    assert _plan(_model(mix=True), batch=8)[1] is None       # SUM over the batch axis
