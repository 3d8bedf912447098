"""Batches split by sample over threads (batch_split.py): the same results as one sample
at a time, only for graphs that keep samples apart, and a switch."""

import numpy as np
import pytest

from edgelite.converter import convert
from edgelite.interpreter import Interpreter, batch_split
from tests.conftest import MODELS

from .kernels.test_reduce import reduce_model


def _interp(model: bytes, batch: int, threads: int = 2, **kw) -> Interpreter:
    interp = Interpreter(model_content=model, num_threads=threads, **kw)
    d = interp.get_input_details()[0]
    interp.resize_tensor_input(d["index"], [batch] + list(d["shape"][1:]))
    interp.allocate_tensors()
    return interp


def _run(interp: Interpreter, x: np.ndarray) -> np.ndarray:
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def _one_at_a_time(model: bytes, x: np.ndarray) -> np.ndarray:
    interp = _interp(model, 1, threads=1)
    return np.concatenate([_run(interp, x[i:i + 1]) for i in range(len(x))])


@pytest.fixture(scope="module")
def mobilenet():
    """The trained MobileNetV2 (64x64 inside): 246 KB of arena per sample, so split."""
    return convert(MODELS / "mobilenet_v2_digits.pb")


@pytest.fixture(scope="module")
def digits():
    return np.load(MODELS / "digits_test.npz")["x"][:7]


def test_mobilenet_batch_is_split_and_equals_one_sample_at_a_time(mobilenet, digits,
                                                                   monkeypatch):
    default = _interp(mobilenet, len(digits))._split
    assert default.chunk == 4                  # 16 samples fit CHUNK_BYTES: a worker's share
    assert default.ranges == [(0, 3), (3, 7)]
    assert [sorted(w) for w in default.workers] == [[3], [4]]
    monkeypatch.setattr(batch_split, "CHUNK_BYTES", 1)  # one sample per private invoke
    interp = _interp(mobilenet, len(digits))
    assert interp._split.chunk == 1
    np.testing.assert_array_equal(_run(interp, digits), _one_at_a_time(mobilenet, digits))
    # and with the switch off: the batched path, equal within float rounding
    batched = _interp(mobilenet, len(digits), split_batch=False)
    assert batched._split is None
    np.testing.assert_allclose(_run(batched, digits), _one_at_a_time(mobilenet, digits),
                               atol=1e-6)


def test_int8_chunks_with_a_tail_are_bit_exact_with_litert(monkeypatch, litert):
    """Chunks of 3 over 2 workers of 4 and 5 samples: private interpreters at batch 3, 1
    and 2; every sample bit-exact with LiteRT's default kernels."""
    model = (MODELS / "keras_cnn.tf_int8.tflite").read_bytes()
    monkeypatch.setattr(batch_split, "MIN_SAMPLE_BYTES", 0)
    monkeypatch.setattr(batch_split, "CHUNK_BYTES", 1)
    rng = np.random.default_rng(0)
    d = Interpreter(model_content=model).get_input_details()[0]
    x = rng.integers(-128, 128, (9, 8, 8, 1)).astype(d["dtype"])
    monkeypatch.setattr(batch_split, "CHUNK_BYTES", 3 * _arena_per_sample(model))
    interp = _interp(model, 9)
    assert interp._split.chunk == 3
    assert [sorted(w) for w in interp._split.workers] == [[1, 3], [2, 3]]
    ours = _run(interp, x)
    lite = litert.Interpreter(model_content=model)     # default kernels, as ours
    lite.allocate_tensors()
    theirs = []
    for i in range(len(x)):
        lite.set_tensor(lite.get_input_details()[0]["index"], x[i:i + 1])
        lite.invoke()
        theirs.append(lite.get_tensor(lite.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(ours, np.concatenate(theirs))


def _arena_per_sample(model: bytes) -> int:
    interp = _interp(model, 1, threads=1)
    return interp.arena_size


def test_small_networks_stay_batched(digits):
    model = (MODELS / "keras_cnn.tf_int8.tflite").read_bytes()
    assert _arena_per_sample(model) < batch_split.MIN_SAMPLE_BYTES
    assert _interp(model, 32)._split is None


@pytest.mark.parametrize("kw", [dict(threads=1), dict(preserve_all_tensors=True),
                                dict(split_batch=False)])
def test_switches(mobilenet, kw):
    assert _interp(mobilenet, 4, **kw)._split is None
    assert _interp(mobilenet, 1)._split is None          # nothing to split


def test_a_reduction_over_the_batch_is_not_split(monkeypatch, rng):
    monkeypatch.setattr(batch_split, "MIN_SAMPLE_BYTES", 0)
    over_batch = reduce_model("MEAN", (4, 6, 5), [0, 2], keep_dims=True)
    interp = _interp(over_batch, 4)
    assert interp._split is None
    x = rng.uniform(-1, 1, (4, 6, 5)).astype(np.float32)
    np.testing.assert_allclose(_run(interp, x), x.mean(axis=(0, 2), keepdims=True),
                               rtol=1e-6)
    per_sample = reduce_model("MEAN", (4, 6, 5), [-1], keep_dims=False)
    interp = _interp(per_sample, 4)
    assert interp._split is not None
    np.testing.assert_allclose(_run(interp, x), x.mean(axis=-1), rtol=1e-6)


def test_unsplittable_reasons(mobilenet):
    interp = _interp(mobilenet, 4)
    a, sg = interp._alloc, interp._subgraph
    assert batch_split.unsplittable(sg, a.shapes, a.arrays, a.constants, 4) is None
    # the batch is not what every tensor leads with
    assert "does not lead with the batch" in batch_split.unsplittable(
        sg, a.shapes, a.arrays, a.constants, 5)


def test_softmax_over_the_batch_axis_is_not_split():
    # A rank-1 SOFTMAX normalises across the samples themselves (OpDef.last_axis).
    from .op_models import op_model

    for shape, reason in (((4,), "works along the batch axis"), ((4, 3), None)):
        model, _ = op_model("SOFTMAX", [np.zeros(shape, np.float32)],
                            [(shape, np.float32)], beta=1.0)
        interp = Interpreter(model_content=model, num_threads=2)
        interp.allocate_tensors()
        a, sg = interp._alloc, interp._subgraph
        found = batch_split.unsplittable(sg, a.shapes, a.arrays, a.constants, 4)
        assert (found is None) if reason is None else (reason in found)
