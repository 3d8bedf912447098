"""converter/accuracy/sources.py: the models and data compare / eval take -- a .tflite as is,
a GraphDef converted, samples checked for NaN / inf, labels as indices or one-hot."""

import numpy as np
import pytest

from edgelite.converter.accuracy.sources import (load_inputs, load_labels, load_model,
                                                 sample_at)
from edgelite.errors import DTypeError, EdgeliteError
from tests.conftest import MODELS


def test_a_tflite_as_is_and_a_graphdef_converted(tmp_path):
    tflite = MODELS / "keras_cnn.tf_int8.tflite"
    loaded = load_model(tflite)
    assert (loaded.label, loaded.converted) == (str(tflite), False)
    assert loaded.content == tflite.read_bytes()
    assert load_model(tflite.read_bytes()).label == "<bytes>"
    converted = load_model(MODELS / "tf1_cnn.pb")
    assert converted.converted and converted.content[4:8] == b"TFL3"
    assert converted.runner().input_names == ["input"]
    junk = tmp_path / "m.bin"
    junk.write_bytes(b"\x00" * 16)
    with pytest.raises(EdgeliteError, match=r"m\.bin' is neither a \.tflite model"):
        load_model(junk)


def test_inputs_from_a_file_and_from_arrays(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    arrays = load_inputs(tmp_path / "x.npy", ["input"])
    np.testing.assert_array_equal(arrays["input"], x)
    np.testing.assert_array_equal(sample_at(arrays, 1)["input"], x[1])
    bad = x.copy()
    bad[2, 0] = np.nan
    with pytest.raises(EdgeliteError, match=r"^the data: 1 sample\(s\) for input 'input' hold "
                                            r"NaN or inf \(indices \[2\]\); remove them$"):
        load_inputs(bad, ["input"])


def test_labels_indices_one_hot_and_named(tmp_path):
    assert load_labels(np.array([2, 0, 1])).tolist() == [2, 0, 1]
    assert load_labels(np.eye(3)[[1, 2, 0]]).tolist() == [1, 2, 0]        # one-hot rows
    assert load_labels(np.float32([1.0, 3.0])).dtype == np.int64
    np.savez(tmp_path / "l.npz", x=np.zeros((2, 4)), y=np.array([3, 1]))
    assert load_labels(tmp_path / "l.npz").tolist() == [3, 1]
    np.savez(tmp_path / "two.npz", a=np.zeros(2), b=np.zeros(2))
    with pytest.raises(EdgeliteError, match=r"holds arrays .*; expected one named 'y' or "
                                            r"'labels'$"):
        load_labels(tmp_path / "two.npz")
    with pytest.raises(DTypeError, match=r"^the labels: expected class indices \(N,\) or "
                                         r"one-hot \(N, C\), got float64 \[2\]$"):
        load_labels(np.array([0.5, 1.0]))
