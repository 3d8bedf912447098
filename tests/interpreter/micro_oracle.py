"""Bit-exactness checks against TensorFlow Lite Micro's reference kernels (helper).

    outputs = run_micro(model, [x])            # TFLM's results (the tflite-micro runtime)
    assert_micro_exact(model, [x])             # == edgelite Interpreter(kernels="micro")
    reason = micro_refusal(model)              # why TFLM will not load / run it, or None
    assert_micro_exact_samples(model, samples) # many inputs, one interpreter of each kind

TFLM is the oracle of kernels="micro" the way LiteRT is that of "reference" and
"default" (quant_oracle.py). TFLM reports failures on stderr from C++ and raises a bare
RuntimeError; ``micro_refusal`` captures fd 2 so the refusal can be asserted on.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.model import load_model
from tests.conftest import micro_module



def _interpreter(model: bytes):
    return micro_module().Interpreter.from_bytes(model)


def run_micro(model: bytes, feeds) -> list[np.ndarray]:
    """TFLM's outputs for ``feeds`` (one array per model input, in order)."""
    return run_micro_samples(model, [feeds])[0]


def run_micro_samples(model: bytes, samples) -> list[list[np.ndarray]]:
    """TFLM's outputs for each of ``samples`` (lists of input arrays), in turn on one
    interpreter (a streaming model's state carries over, as in run_ours_samples)."""
    interp = _interpreter(model)
    count = len(load_model(model).subgraphs[0].outputs)
    results = []
    for feeds in samples:
        for i, value in enumerate(feeds):
            interp.set_input(np.ascontiguousarray(value), i)
        interp.invoke()
        results.append([np.array(interp.get_output(i)) for i in range(count)])
    return results


def run_ours_samples(model: bytes, samples, kernels: str = "micro") -> list[list[np.ndarray]]:
    interp = Interpreter(model_content=model, kernels=kernels)
    interp.allocate_tensors()
    results = []
    for feeds in samples:
        for detail, value in zip(interp.get_input_details(), feeds):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        results.append([interp.get_tensor(d["index"]) for d in interp.get_output_details()])
    return results


def _captured_stderr(fn) -> tuple[BaseException | None, str]:
    """Run ``fn()`` with file descriptor 2 redirected; (the exception, the text)."""
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        error = None
        try:
            fn()
        except Exception as e:  # TFLM raises RuntimeError / ValueError
            error = e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return error, sink.read().decode("utf-8", "replace")


def micro_refusal(model: bytes, feeds=None) -> str | None:
    """TFLM's reason (its stderr and exception text) when it cannot load the model or, with
    ``feeds``, run it; None when it runs."""
    def attempt():
        if feeds is None:
            _interpreter(model)
        else:
            run_micro(model, feeds)

    error, text = _captured_stderr(attempt)
    if error is None:
        return None
    return f"{text.strip()}\n{error}"


def assert_micro_exact(model: bytes, feeds) -> list[np.ndarray]:
    """Every output of edgelite(kernels="micro") equals TFLM's, dtype and shape too."""
    return assert_micro_exact_samples(model, [feeds])[0]


def assert_micro_exact_samples(model: bytes, samples) -> list[list[np.ndarray]]:
    """assert_micro_exact on each of ``samples``, with one interpreter of each kind."""
    expected = run_micro_samples(model, samples)
    ours = run_ours_samples(model, samples)
    for n, (mine, theirs) in enumerate(zip(ours, expected)):
        _compare(n, mine, theirs)
    return ours


def _compare(sample: int, ours: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(ours) == len(expected)
    for i, (a, b) in enumerate(zip(ours, expected)):
        assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            diff = np.flatnonzero((a != b) & ~(np.isnan(a) & np.isnan(b))
                                  if a.dtype.kind == "f" else a != b)
            pytest.fail(
                f"kernels=micro sample {sample} output {i}: {diff.size} of {a.size} elements "
                f"differ; first at {diff[:5].tolist()}: ours {a.reshape(-1)[diff[:5]].tolist()}"
                f" vs TFLM {b.reshape(-1)[diff[:5]].tolist()}"
            )
