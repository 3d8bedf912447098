"""ModelRunner.run_many / run_all: several samples per invoke only where each sample's
outputs are exactly those of a run alone (integer models), one at a time elsewhere."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter import runner as runner_module
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.runner import ModelRunner, batch_exact, run_all
from edgelite.interpreter.errors import ShapeError
from tests.conftest import MODELS

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
    assert invokes == [16, 16, 5]


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
