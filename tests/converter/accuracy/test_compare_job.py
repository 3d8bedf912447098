"""compare over shards: the same report bit for bit whatever the sharding, the shard order
or the number of processes (exact sums, accuracy/exact.py)."""

import numpy as np
import pytest

from edgelite.converter.accuracy import compare, sqnr
from edgelite.converter.accuracy.report import compare_json
from edgelite.converter.runner import run_all
from tests.conftest import MODELS

from ..accuracy_models import PB, digits, float_model

UINT8 = MODELS / "keras_cnn.tf_uint8.tflite"


@pytest.fixture(scope="module")
def whole() -> str:
    x, _ = digits()
    return compare_json(compare(PB, UINT8, x[:120], shard_samples=120), None, "graph")


def test_random_shardings_and_orders_give_the_same_report(whole):
    x, _ = digits()
    x = x[:120]
    rng = np.random.default_rng(5)
    for _ in range(2):
        cuts = np.unique(np.concatenate([[0, 120], rng.integers(1, 120, 6)]))
        batches = [x[a:b] for a, b in zip(cuts, cuts[1:])]
        batches = [batches[i] for i in rng.permutation(len(batches))]
        assert compare_json(compare(PB, UINT8, iter(batches)), None, "graph") == whole


def test_two_worker_processes(whole):
    x, _ = digits()
    report = compare(PB, UINT8, x[:120], workers=2, shard_samples=25)
    assert compare_json(report, None, "graph") == whole
    ref = np.stack([o[0] for o in run_all(float_model(), [{"input": s} for s in x[:120]])])
    quant = np.stack([o[0] for o in run_all(UINT8.read_bytes(), [{"input": s} for s in x[:120]])])
    assert report.samples == 120
    assert report.output_sqnr_db == pytest.approx(sqnr(ref, quant), rel=1e-12)
