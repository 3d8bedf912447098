"""converter/keras/weights.py: a layer's variables by position (Keras 3) or by name
(legacy .h5), and one line when the file does not hold what the config needs."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.converter import convert
from edgelite.errors import ModelFormatError
from tests.converter.keras.kfiles import convert_config, dense_model, legacy_bytes
from tests.support import run_edgelite

X = np.array([[0.5, -1.0, 2.0, 0.25]], np.float32)


def test_legacy_weights_are_found_by_name_in_any_order(tmp_path):
    config, weights = dense_model()
    kernel, bias = weights["dense"]
    path = tmp_path / "m.h5"   # bias listed first: names, not positions, decide
    path.write_bytes(legacy_bytes(config, {"dense": {"dense/bias:0": bias,
                                                     "dense/kernel:0": kernel}}))
    (y,) = run_edgelite(convert(str(path)), [X])
    np.testing.assert_allclose(y, X @ kernel + bias, rtol=1e-6)


def test_a_missing_legacy_weight_is_named(tmp_path):
    config, weights = dense_model()
    path = tmp_path / "m.h5"
    path.write_bytes(legacy_bytes(config, {"dense": {"dense/kernel:0": weights["dense"][0]}}))
    with pytest.raises(ModelFormatError, match=r"layer 'dense' \(Dense\): the weights file has "
                                               r"no bias"):
        convert(str(path))


def test_a_keras3_variable_count_mismatch_is_named(tmp_path):
    config, weights = dense_model()
    with pytest.raises(ModelFormatError, match=r"layer 'dense' \(Dense\): the weights file "
                                               r"holds 1 variables where the config needs 2 "
                                               r"\(kernel, bias\)"):
        convert_config(tmp_path, config, {"dense": weights["dense"][:1]})


def test_a_kernel_that_does_not_fit_is_named(tmp_path):
    config, _ = dense_model()
    bad = {"dense": [np.zeros((5, 3), np.float32), np.zeros(3, np.float32)]}
    with pytest.raises(Exception, match=r"layer 'dense' \(Dense\): kernel \[5, 3\] does not "
                                        r"fit an input of shape"):
        convert_config(tmp_path, config, bad)
