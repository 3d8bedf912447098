"""converter/runner.py: the converter's one model runner -- feeding real values to float,
quantized and plain integer inputs, one clear line for a wrong sample, reading any tensor."""

import numpy as np
import pytest

from edgelite.converter.runner import ModelRunner, as_input, run_all
from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from tests.interpreter.tflite_builder import ModelBuilder


def _detail(dtype, scale=0.0, zero_point=0, name="x"):
    return {"name": name, "dtype": dtype, "quantization": (scale, zero_point)}


def test_as_input_float_quantized_and_plain_integers():
    f = as_input([1, 2], _detail(np.float32))
    assert f.dtype == np.float32 and f.tolist() == [1.0, 2.0]
    # q = clamp(round_half_away(x / s) + zp): 0.25 / 0.5 = 0.5 -> 1; -0.25 -> -1; 100 -> 127
    q = as_input(np.float32([0.25, -0.25, 1.0, 100.0, -100.0]), _detail(np.int8, 0.5, 3))
    assert q.dtype == np.int8 and q.tolist() == [4, 2, 5, 127, -128]
    kept = np.int8([7, -7])
    assert as_input(kept, _detail(np.int8, 0.5, 3)).tolist() == [7, -7]  # already stored
    assert as_input(np.float32([3.0, 4.0]), _detail(np.int32)).tolist() == [3, 4]
    with pytest.raises(DTypeError, match=r"^input 'ids' is int32 without quantization "
                                         r"parameters; give int32 data \(integral values\), "
                                         r"not float32 fractions$"):
        as_input(np.float32([0.5]), _detail(np.int32, name="ids"))


def _model() -> bytes:
    """x float32 [1, 3] -> RELU -> h -> ADD(h, h) -> y."""
    b = ModelBuilder()
    x, h, y = b.tensor("x", (1, 3)), b.tensor("h", (1, 3)), b.tensor("y", (1, 3))
    b.op("RELU", [x], [h])
    b.op("ADD", [h, h], [y])
    return b.build([x], [y])


def test_run_a_sample_and_read_intermediates():
    runner = ModelRunner(_model(), keep_all=True)
    assert runner.input_names == ["x"]
    (y,) = runner.run({"x": np.float32([-1, 2, 3])})  # the batch dim of 1 is added
    assert y.dtype == np.float32 and y.tolist() == [[0, 4, 6]]
    assert runner.tensor("h").tolist() == [[0, 2, 3]]
    assert runner.stored(runner.details["y"]["index"]).tolist() == [[0, 4, 6]]
    assert [o[0].tolist() for o in run_all(_model(), [{"x": np.ones(3)}, {"x": -np.ones(3)}])] \
        == [[[2, 2, 2]], [[0, 0, 0]]]


def test_a_wrong_sample_is_one_line_naming_the_model_and_input():
    runner = ModelRunner(_model(), label="m.tflite")
    with pytest.raises(ShapeError, match=r"^m\.tflite: input 'x' expects one sample of "
                                         r"shape \[1, 3\], the data holds samples of shape "
                                         r"\[4\]$"):
        runner.run({"x": np.zeros(4, np.float32)})
    with pytest.raises(EdgeliteError, match=r"^m\.tflite: the sample has no value for input "
                                            r"'x' \(it has \['z'\]\)$"):
        runner.run({"z": np.zeros(3, np.float32)})
