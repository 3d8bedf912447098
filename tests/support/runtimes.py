"""Run a .tflite in edgelite's interpreter, in LiteRT, or in TFLite Micro (test helper).

Every runner takes the model's bytes and ``feeds``: a list of arrays (the model's inputs in
order) or a dict {input name: value} (each value cast to the input's dtype), and returns
the outputs as a list of arrays in the model's output order.

Kernel sets: edgelite's ``Interpreter(kernels=...)`` reproduces one runtime's integer
arithmetic; LITERT_RESOLVER names the LiteRT op resolver it is compared with:
"reference" -> BUILTIN_REF, "default" -> AUTO (optimized kernels + the XNNPACK delegate),
"optimized" -> BUILTIN_WITHOUT_DEFAULT_DELEGATES (optimized kernels, no XNNPACK).
The runtime of kernels="micro" is TFLite Micro (run_micro*).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import litert_module, micro_module

KERNEL_SETS = ("reference", "default")
LITERT_RESOLVER = {"reference": "BUILTIN_REF", "default": "AUTO",
                   "optimized": "BUILTIN_WITHOUT_DEFAULT_DELEGATES"}


def litert_interpreter(model: bytes, kernels: str = "reference", **kwargs):
    """An allocated LiteRT Interpreter on ``model`` with the resolver of ``kernels``; the
    calling test skips without LiteRT (fails under CI)."""
    litert = litert_module()
    resolver = getattr(litert.OpResolverType, LITERT_RESOLVER[kernels])
    interp = litert.Interpreter(model_content=model, experimental_op_resolver_type=resolver,
                                **kwargs)
    interp.allocate_tensors()
    return interp


def edgelite_interpreter(model: bytes, kernels: str = "default", **kwargs) -> Interpreter:
    """An allocated edgelite Interpreter (``kwargs``: rounding, num_threads, ...)."""
    interp = Interpreter(model_content=model, kernels=kernels, **kwargs)
    interp.allocate_tensors()
    return interp


def invoke(interp, feeds) -> list[np.ndarray]:
    """Set ``feeds`` on an allocated interpreter (edgelite's or LiteRT's), invoke, and
    return copies of every output."""
    details = interp.get_input_details()
    if isinstance(feeds, dict):
        for d in details:
            interp.set_tensor(d["index"], np.asarray(feeds[d["name"]], d["dtype"]))
    else:
        for d, value in zip(details, feeds):
            interp.set_tensor(d["index"], value)
    interp.invoke()
    return [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]


def run_edgelite(model: bytes, feeds, kernels: str = "default", **kwargs) -> list[np.ndarray]:
    return invoke(edgelite_interpreter(model, kernels, **kwargs), feeds)


def run_litert(model: bytes, feeds, kernels: str = "reference") -> list[np.ndarray]:
    return invoke(litert_interpreter(model, kernels), feeds)


def run_sequence(interp, feeds, reset_after: int | None = None) -> list[list[np.ndarray]]:
    """Invoke once per entry of ``feeds`` (a list of feeds) on one interpreter, so state
    carries over; every output of every invoke. ``reset_after``: call
    reset_all_variables() before invoke number ``reset_after``."""
    results = []
    for n, feed in enumerate(feeds):
        if n == reset_after:
            interp.reset_all_variables()
        results.append(invoke(interp, feed))
    return results


def run_edgelite_samples(model: bytes, samples, kernels: str = "micro") -> list[list[np.ndarray]]:
    """run_sequence on one edgelite Interpreter (kernels="micro" by default, for TFLM)."""
    return run_sequence(edgelite_interpreter(model, kernels), samples)


def litert_delegates(model: bytes) -> bool:
    """Whether LiteRT's default resolver hands an op of ``model`` to XNNPACK."""
    interp = litert_interpreter(model, "default")
    return any(op["op_name"] == "DELEGATE" for op in interp._get_ops_details())


# --------------------------------------------------------------------------- TFLite Micro


def micro_interpreter(model: bytes):
    return micro_module().Interpreter.from_bytes(model)


def run_micro(model: bytes, feeds) -> list[np.ndarray]:
    """TFLM's outputs for ``feeds`` (one array per model input, in order)."""
    return run_micro_samples(model, [feeds])[0]


def run_micro_samples(model: bytes, samples) -> list[list[np.ndarray]]:
    """TFLM's outputs for each of ``samples`` (lists of input arrays), in turn on one
    interpreter (a streaming model's state carries over, as in run_edgelite_samples)."""
    interp = micro_interpreter(model)
    count = len(load_model(model).subgraphs[0].outputs)
    results = []
    for feeds in samples:
        for i, value in enumerate(feeds):
            interp.set_input(np.ascontiguousarray(value), i)
        interp.invoke()
        results.append([np.array(interp.get_output(i)) for i in range(count)])
    return results


def _captured_stderr(fn) -> tuple[BaseException | None, str]:
    """Run ``fn()`` with file descriptor 2 redirected; (the exception, the text). TFLM
    reports failures on stderr from C++ and raises a bare RuntimeError."""
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
            micro_interpreter(model)
        else:
            run_micro(model, feeds)

    error, text = _captured_stderr(attempt)
    if error is None:
        return None
    return f"{text.strip()}\n{error}"
