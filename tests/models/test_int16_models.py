"""The 16x8 files TensorFlow's converter wrote (models/builders/zoo_int16.py: int16
activations, int8 weights, int64 conv bias): bit-exact with both LiteRT kernel sets on
several inputs, and the facts that make them 16x8."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.support import assert_bit_exact

FILES = ["int16_cnn.tflite", "int16_audio.tflite"]  # (the GraphDefs': test_tf_modes.py)


def _inputs(path, seed):
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    rng = np.random.default_rng(seed)
    feeds = []
    for d in interp.get_input_details():
        if d["dtype"] == np.int16:
            feeds.append(rng.integers(-32768, 32768, d["shape"]).astype(np.int16))
        else:
            feeds.append(rng.normal(0.0, 1.5, d["shape"]).astype(np.float32))
    return feeds


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("seed", range(3))
def test_int16_file_bit_exact(name, seed):
    path = MODELS / name
    assert_bit_exact(path.read_bytes(), _inputs(path, seed))


@pytest.mark.parametrize("name", FILES)
def test_int16_files_are_16x8(name):
    """Every activation the integer ops read or write is int16; weights int8."""
    interp = Interpreter(model_path=str(MODELS / name))
    interp.allocate_tensors()
    types = {d["dtype"] for d in interp.get_tensor_details()}
    assert np.int16 in types and np.int8 in types
