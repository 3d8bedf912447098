"""Bit-exactness checks of int8 / uint8 models against LiteRT's two kernel sets (helper).

    model = ...  # bytes, e.g. from QuantModel below
    assert_bit_exact(model, [x])                      # both kernel sets
    assert_bit_exact(model, [x], kernels=("reference",))

"reference" compares edgelite(kernels="reference") with LiteRT's BUILTIN_REF resolver;
"default" compares edgelite(kernels="default") with LiteRT's default AUTO resolver
(optimized kernels + the XNNPACK delegate). Every output must be np.array_equal.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.conftest import litert_module

from .tflite_builder import ModelBuilder

KERNEL_SETS = ("reference", "default")


def _resolver(kernels: str):
    litert = litert_module()
    return {"reference": litert.OpResolverType.BUILTIN_REF,
            "default": litert.OpResolverType.AUTO}[kernels]


def _run(interp, feeds) -> list[np.ndarray]:
    for detail, value in zip(interp.get_input_details(), feeds):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def run_litert(model: bytes, feeds, kernels: str) -> list[np.ndarray]:
    interp = litert_module().Interpreter(model_content=model,
                                         experimental_op_resolver_type=_resolver(kernels))
    interp.allocate_tensors()
    return _run(interp, feeds)


def run_ours(model: bytes, feeds, kernels: str, rounding: str = "double") -> list[np.ndarray]:
    interp = Interpreter(model_content=model, kernels=kernels, rounding=rounding)
    interp.allocate_tensors()
    return _run(interp, feeds)


def litert_delegates(model: bytes) -> bool:
    """Whether LiteRT's default resolver hands an op of ``model`` to XNNPACK."""
    interp = litert_module().Interpreter(model_content=model,
                                         experimental_op_resolver_type=_resolver("default"))
    interp.allocate_tensors()
    return any(op["op_name"] == "DELEGATE" for op in interp._get_ops_details())


def assert_bit_exact(model: bytes, feeds, kernels=KERNEL_SETS) -> dict[str, list[np.ndarray]]:
    results = {}
    for k in kernels:
        expected = run_litert(model, feeds, k)
        ours = run_ours(model, feeds, k)
        assert len(ours) == len(expected)
        for i, (a, b) in enumerate(zip(ours, expected)):
            assert a.dtype == b.dtype and a.shape == b.shape, (k, i, a.dtype, b.dtype,
                                                                a.shape, b.shape)
            if not np.array_equal(a, b):
                diff = np.flatnonzero(a.astype(np.int64) != b.astype(np.int64))
                pytest.fail(
                    f"kernels={k} output {i}: {diff.size} of {a.size} elements differ; first "
                    f"at {diff[:5].tolist()}: ours {a.reshape(-1)[diff[:5]].tolist()} vs "
                    f"LiteRT {b.reshape(-1)[diff[:5]].tolist()}"
                )
        results[k] = ours
    return results


# --------------------------------------------------------------------------- builders


def full_range(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def random_qparams(rng: np.random.Generator, dtype, low=0.005, high=0.1):
    """(scale, zero point) with the zero point anywhere in the middle of the range."""
    info = np.iinfo(dtype)
    span = info.max - info.min
    zp = int(rng.integers(info.min + span // 4, info.max - span // 4))
    return float(np.float32(rng.uniform(low, high))), zp


class QuantModel:
    """ModelBuilder with shorthands for quantized operands."""

    def __init__(self) -> None:
        self.b = ModelBuilder()
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def input(self, name, shape, dtype, scale=None, zp=None) -> int:
        t = self.b.tensor(name, shape, dtype, scale=scale, zero_point=zp)
        self.inputs.append(t)
        return t

    def const(self, name, value, dtype, scale=None, zp=None, axis=0) -> int:
        value = np.asarray(value, dtype)
        return self.b.tensor(name, value.shape, dtype, data=value, scale=scale,
                             zero_point=zp, quantized_dimension=axis)

    def output(self, name, shape, dtype, scale=None, zp=None) -> int:
        t = self.b.tensor(name, shape, dtype, scale=scale, zero_point=zp)
        self.outputs.append(t)
        return t

    def op(self, name, inputs, outputs, version=1, **options) -> None:
        self.b.op(name, inputs, outputs, version=version, **options)

    def build(self) -> bytes:
        return self.b.build(self.inputs, self.outputs)
