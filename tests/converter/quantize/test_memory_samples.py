"""Calibration data in memory (quantize/memory_samples.py): every accepted form reads as the
same samples, tagged samples go to their signature, bad data gets one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite import EdgeliteError
from edgelite.converter.quantize.calibrate import Preprocess, load_samples
from edgelite.converter.quantize.memory_samples import memory_samples, once_iterable

A = np.arange(12, dtype=np.float32).reshape(3, 4)
B = -np.arange(6, dtype=np.float32).reshape(3, 2)


def read(data, names=("a", "b"), aliases=None, signature=None):
    return list(memory_samples(data, list(names), Preprocess(), aliases, signature))


def test_every_form_gives_the_same_samples():
    expected = read({"a": A, "b": B})
    assert len(expected) == 3
    forms = [
        [[a, b] for a, b in zip(A, B)],                          # lists in input order
        lambda: ((a[None], b[None]) for a, b in zip(A, B)),      # TF's generator, batch dim 1
        [{"b": b, "a": a} for a, b in zip(A, B)],                # dicts by name
        [{"sig_a": a, "sig_b": b} for a, b in zip(A, B)],        # by signature name
    ]
    for data in forms:
        got = read(data, aliases={"sig_a": "a", "sig_b": "b"})
        assert len(got) == 3
        for g, e in zip(got, expected):
            assert set(g) == {"a", "b"}
            for k in g:
                np.testing.assert_array_equal(g[k].reshape(e[k].shape), e[k])
    assert [s["a"].tolist() for s in read(A, names=["a"])] == A.tolist()


def test_a_one_shot_generator_is_kept_for_several_reads():
    kept = once_iterable(x for x in A)
    assert len(read(kept, names=["a"])) == len(read(kept, names=["a"])) == 3
    assert once_iterable(A) is A


def test_tagged_samples_go_to_their_signature():
    data = [("enc", {"a": A[0]}), ("dec", {"a": A[1]}), ("enc", {"a": A[2]})]
    got = read(data, names=["a"], signature="enc")
    assert [s["a"].tolist() for s in got] == [A[0].tolist(), A[2].tolist()]


def test_load_samples_reads_memory_data_through_the_same_path():
    got = list(load_samples(A, ["a"], Preprocess(1.0, 2.0)))
    np.testing.assert_array_equal(got[1]["a"], (A[1] - 1.0) * 2.0)


@pytest.mark.parametrize("data, message", [
    ([[A[0]]], r"sample 0 has 1 array\(s\); the model has 2 input\(s\) \['a', 'b'\]"),
    ([{"a": A[0]}], r"sample 0 has keys \['a'\]; it needs one array per model input"),
    ([A[0]], "sample 0 is one array; the model has 2 inputs"),
    ([["x", "y"]], r"input .a. holds text \(<U1\), not numbers"),
    (lambda: 3, "the function gave int, not an iterable"),
])
def test_bad_samples_name_the_problem(data, message):
    with pytest.raises(EdgeliteError, match=message):
        read(data)


def test_not_data_at_all():
    with pytest.raises(EdgeliteError, match="not int"):
        once_iterable(7)
