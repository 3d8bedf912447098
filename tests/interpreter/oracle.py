"""Run a model in edgelite's interpreter and in LiteRT's reference kernels (the oracle)."""

from __future__ import annotations

import numpy as np

from edgelite.interpreter import Interpreter
from tests.conftest import litert_module


def litert_interpreter(model: bytes):
    """LiteRT's reference kernels on `model`; the calling test skips without LiteRT."""
    litert = litert_module()
    interp = litert.Interpreter(
        model_content=model, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF
    )
    interp.allocate_tensors()
    return interp


def _run(interp, inputs) -> list[np.ndarray]:
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def run_litert(model: bytes, inputs) -> list[np.ndarray]:
    return _run(litert_interpreter(model), inputs)


def run_edgelite(model: bytes, inputs, **kwargs) -> list[np.ndarray]:
    interp = Interpreter(model_content=model, **kwargs)
    interp.allocate_tensors()
    return _run(interp, inputs)


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol=1e-5, atol_factor=1e-6):
    """allclose with an absolute tolerance relative to the reference's magnitude."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol_factor * max(scale, 1e-30))


def assert_matches_litert(model: bytes, inputs, **tolerances) -> list[np.ndarray]:
    """Run both interpreters on the same inputs and compare every output."""
    ours = run_edgelite(model, inputs)
    ref = run_litert(model, inputs)
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert_close(a, b, **tolerances)
    return ours


def rand(rng: np.random.Generator, shape, dtype=np.float32, low=-1.0, high=1.0):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(low, high, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)
