"""Bit-exactness checks against TensorFlow Lite Micro's reference kernels (helper).

    outputs = run_micro(model, [x])            # TFLM's results (the tflite-micro runtime)
    assert_micro_exact(model, [x])             # == edgelite Interpreter(kernels="micro")
    reason = micro_refusal(model)              # why TFLM will not load / run it, or None

TFLM is the oracle of kernels="micro" the way LiteRT is that of "reference" and
"default" (quant_oracle.py). TFLM reports failures on stderr from C++ and raises a bare
RuntimeError; ``micro_refusal`` captures fd 2 so the refusal can be asserted on.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

from edgelite.interpreter.model import load_model
from tests.conftest import micro_module

from .quant_oracle import run_ours


def _interpreter(model: bytes):
    return micro_module().Interpreter.from_bytes(model)


def run_micro(model: bytes, feeds) -> list[np.ndarray]:
    """TFLM's outputs for ``feeds`` (one array per model input, in order)."""
    interp = _interpreter(model)
    for i, value in enumerate(feeds):
        interp.set_input(np.ascontiguousarray(value), i)
    interp.invoke()
    count = len(load_model(model).subgraphs[0].outputs)
    return [np.array(interp.get_output(i)) for i in range(count)]


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
    expected = run_micro(model, feeds)
    ours = run_ours(model, feeds, "micro")
    assert len(ours) == len(expected)
    for i, (a, b) in enumerate(zip(ours, expected)):
        assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
        if not np.array_equal(a, b):
            diff = np.flatnonzero(a.astype(np.int64) != b.astype(np.int64))
            pytest.fail(
                f"kernels=micro output {i}: {diff.size} of {a.size} elements differ; first "
                f"at {diff[:5].tolist()}: ours {a.reshape(-1)[diff[:5]].tolist()} vs "
                f"TFLM {b.reshape(-1)[diff[:5]].tolist()}"
            )
    return ours
