"""evaluate over shards: random shardings, shard order, worker processes and a local Ray
cluster all give the same report, bit for bit."""

import json

import numpy as np
import pytest

from edgelite.converter.accuracy import evaluate
from edgelite.converter.accuracy.report import dumps
from edgelite.errors import ShapeError
from tests.conftest import MODELS

from ..accuracy_models import PB, TEST, digits, float_model, int8_model
from ..shards.ray_session import ray_session  # noqa: F401 -- a fixture

UINT8 = MODELS / "keras_cnn.tf_uint8.tflite"


def _models():
    return [PB, UINT8]


def _text(report) -> str:
    return dumps(report.to_dict())


@pytest.fixture(scope="module")
def whole() -> str:
    x, y = digits()
    return _text(evaluate(_models(), x, y, top_k=3, shard_samples=len(y)))


def _random_batches(seed: int, order=None):
    x, y = digits()
    rng = np.random.default_rng(seed)
    cuts = np.unique(np.concatenate([[0, len(y)], rng.integers(1, len(y), rng.integers(1, 9))]))
    batches = [(x[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]
    return [batches[i] for i in rng.permutation(len(batches))] if order else batches


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_shardings_give_the_same_report(whole, seed, tmp_path):
    batches = _random_batches(seed)
    assert _text(evaluate(_models(), iter(batches), None, top_k=3)) == whole
    for i, (x, y) in enumerate(batches):  # the same shards as a folder pair
        (tmp_path / "x").mkdir(exist_ok=True)
        (tmp_path / "y").mkdir(exist_ok=True)
        np.save(tmp_path / "x" / f"{i:04d}.npy", x)
        np.save(tmp_path / "y" / f"{i:04d}.npy", y)
    assert _text(evaluate(_models(), tmp_path / "x", tmp_path / "y", top_k=3)) == whole


def test_shard_order_does_not_matter(whole):
    shuffled = _random_batches(3, order=True)
    assert _text(evaluate(_models(), shuffled, None, top_k=3)) == whole


def test_the_report_holds_real_values(whole):
    r = json.loads(whole)
    assert r["samples"] == 397
    assert [m["accuracy"] for m in r["models"]] == [382 / 397, 381 / 397]
    assert sum(c["n"] for c in r["models"][0]["per_class"].values()) == 397


def test_two_worker_processes(whole):
    x, y = digits()
    assert _text(evaluate(_models(), x, y, top_k=3, workers=2, shard_samples=50)) == whole


def test_an_error_in_a_worker_is_one_line():
    x, y = digits()
    batches = [(x[:10], y[:10]), (x[10:20], y[10:19])]
    with pytest.raises(ShapeError, match="^the data \\(batch 1\\) holds 10 samples but the "
                       "labels 9$"):
        evaluate([float_model()], batches, None, workers=2)


def test_ray_local_cluster(whole, ray_session):  # noqa: F811
    x, y = digits()
    done = []
    report = evaluate(_models(), x, y, top_k=3, ray="local", shard_samples=100,
                      progress=done.append)
    assert _text(report) == whole and sorted(done) == [97, 100, 100, 100]  # per shard, any order
    with pytest.raises(ShapeError, match="^the data \\(batch 1\\) holds 10 samples but the "
                       "labels 9$"):
        evaluate([float_model()], [(x[:10], y[:10]), (x[10:20], y[10:19])], None, ray="local")


# The table of the code before eval ran one batched interpreter per model (base 675b4f7,
# keras_cnn float and int8, 150 samples, top-2): printed numbers must not move.
BEFORE_EVAL = """\
150 samples, 10 classes

model    precision  accuracy    top-2  vs first
<bytes>  float        97.33%  100.00%
<bytes>  int8         97.33%  100.00%     +0.00

per-class accuracy:
  class   n      [1]      [2]
      0  15  100.00%  100.00%
      1  14   78.57%   78.57%
      2  17  100.00%  100.00%
      3  14  100.00%  100.00%
      4  16  100.00%  100.00%
      5  15  100.00%  100.00%
      6  13  100.00%  100.00%
      7  14  100.00%  100.00%
      8  17   94.12%   94.12%
      9  15  100.00%  100.00%
  [1] <bytes>, [2] <bytes>"""


def test_printed_report_is_that_of_the_code_before():
    ev = evaluate([float_model(), int8_model()], TEST, TEST, top_k=2, samples=150)
    assert ev.table() == BEFORE_EVAL
