"""converter/runner.py: the converter's one model runner -- feeding real values to float,
quantized and plain integer inputs, one clear line for a wrong sample, reading any tensor;
run_many / run_all run several samples per invoke only where each sample's outputs are
exactly those of a run alone (integer models), one at a time elsewhere."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter import runner as runner_module
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.runner import ModelRunner, as_input, batch_exact, run_all
from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from tests.conftest import MODELS
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


CALIB = MODELS / "digits_calib.npy"


def model(quantize: QuantMode | None, io: str = "float") -> bytes:
    q = QuantizeOptions(mode=quantize, calib=str(CALIB), calib_samples=20,
                        io_type=io) if quantize else None
    return convert_detailed(MODELS / "keras_cnn.pb", ConvertOptions(quantize=q)).model


@pytest.fixture(scope="module")
def samples():
    x = np.load(CALIB)[:37]
    return [{"input": x[i]} for i in range(len(x))]


def one_at_a_time(content, samples):
    r = ModelRunner(content)
    return [r.run(s) for s in samples]


def same(a, b) -> bool:
    return len(a) == len(b) and all(
        u.dtype == v.dtype and u.shape == v.shape and np.array_equal(u, v)
        for x, y in zip(a, b) for u, v in zip(x, y))


@pytest.mark.parametrize("io", ["float", "int8"])
def test_an_integer_model_runs_batched_with_the_same_outputs(samples, io, monkeypatch):
    content = model(QuantMode.INT8, io)
    invokes = []
    real = ModelRunner.run_batch
    monkeypatch.setattr(ModelRunner, "run_batch",
                        lambda self, chunk: invokes.append(len(chunk)) or real(self, chunk))
    expected = one_at_a_time(content, samples)
    assert same(run_all(content, samples), expected)
    assert invokes == [13, 13, 13]      # 37 samples: 3 equal batches, the last one padded
    invokes.clear()
    assert same(ModelRunner(content).run_many(samples), expected)
    assert invokes == [16, 16, 16]      # the last batch padded: one batched interpreter
    invokes.clear()
    batched = ModelRunner(content, batch=16)   # (what eval builds): runs its own batches
    assert batched.batch == 16
    assert same(batched.run_many(samples), expected) and invokes == [16, 16, 16]
    assert same(batched.run_many(samples[:1]), expected[:1]) and invokes[-1] == 16
    assert "_batch_runners" not in batched.__dict__


def test_a_batch_mixing_sample_layouts_is_converted_as_one_by_one(samples):
    """run_batch converts the chunk's inputs together; samples given flat, with or without
    the batch dim, or already quantized give what each gives alone."""
    content = model(QuantMode.INT8, "int8")
    expected = one_at_a_time(content, samples[:16])
    r = ModelRunner(content)
    q = r.inputs[0]["quantization"]
    mixed = [{"input": s["input"].reshape(-1)} if i % 3 == 0 else
             {"input": s["input"][None]} if i % 3 == 1 else s for i, s in enumerate(samples[:16])]
    assert same(ModelRunner(content, batch=16).run_many(mixed), expected)
    stored = [{"input": as_input(s["input"][None], r.inputs[0])} if i % 2 else s
              for i, s in enumerate(samples[:16])]
    assert q[0] > 0 and same(ModelRunner(content, batch=16).run_many(stored), expected)


def test_a_float_model_runs_one_sample_at_a_time(samples, monkeypatch):
    content = model(None)
    assert not batch_exact(ModelRunner(content).interp.model)
    monkeypatch.setattr(runner_module, "_batch_runner",
                        lambda *a: pytest.fail("a float model is not batched"))
    assert same(run_all(content, samples), one_at_a_time(content, samples))
    assert same(ModelRunner(content).run_many(samples[:5]), one_at_a_time(content, samples[:5]))


def test_a_bad_sample_in_a_batch_is_one_line(samples):
    content = model(QuantMode.INT8)
    bad = [*samples[:3], {"input": np.zeros(5, np.float32)}]
    with pytest.raises(ShapeError, match="input 'input' expects one sample of shape"):
        run_all(content, bad)
