"""Fixtures shared by the command tests."""

import pytest

from tests.conftest import MODELS
from tests.support.cli import invoke


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """models/tf1_cnn.pb converted by `edgelite convert --verbose`: (path, its output)."""
    out = tmp_path_factory.mktemp("cli") / "tf1.tflite"
    result = invoke("convert", MODELS / "tf1_cnn.pb", "-o", out, "--verbose")
    assert result.exit_code == 0, result.output
    return out, result.output
