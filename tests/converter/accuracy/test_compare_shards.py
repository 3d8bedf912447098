"""compare over shards: the same report bit for bit whatever the sharding, the shard order
or the number of processes (exact sums, accuracy/exact.py)."""

import math
import random

import numpy as np
import pytest

from edgelite.converter.accuracy import compare
from edgelite.converter.accuracy.exact import ExactSum
from edgelite.converter.accuracy import sqnr
from edgelite.converter.accuracy.report import compare_json
from edgelite.converter.runner import run_all
from tests.conftest import MODELS

from ..accuracy_models import PB, digits, float_model

UINT8 = MODELS / "keras_cnn.tf_uint8.tflite"


def test_exact_sum_does_not_depend_on_order_or_grouping():
    rng = np.random.default_rng(0)
    terms = list(rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000))
    whole = ExactSum()
    for t in terms:
        whole.add(t)
    assert whole.value == math.fsum(terms)  # the correctly rounded sum
    random.Random(1).shuffle(terms)
    left, right = ExactSum(), ExactSum()
    for t in terms[:700]:
        left.add(t)
    for t in terms[700:]:
        right.add(t)
    right.merge(left)
    assert right.value == whole.value
    odd = ExactSum()
    for t in (1.0, math.inf, 2.0):
        odd.add(t)
    assert odd.value == math.inf
    odd.add(-math.inf)
    assert math.isnan(odd.value)


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
