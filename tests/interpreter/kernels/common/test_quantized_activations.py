"""interpreter/kernels/common/quantized_activations.py: the GELU and ELU tables, entry for entry
equal to what LiteRT computes for every int8 input (GELU in its reference kernels; ELU in
its builtin kernel for kernels="reference" and in XNNPACK for "default")."""

from types import SimpleNamespace

import numpy as np
import pytest

from edgelite.interpreter.kernels.common.quantized_activations import (elu_table, gelu_fn,
                                                                       gelu_table)
from edgelite.interpreter.kernels.common.requantize import QParams
from tests.interpreter.tflite_builder import QuantModel
from tests.support import run_litert

Q_IN, Q_OUT = QParams(0.05, -3), QParams(0.03, -90)
ALL = np.arange(-128, 128, dtype=np.int8)


def _ctx(reference: bool = True, **options):
    return SimpleNamespace(option=lambda name, default=None: options.get(name, default),
                           quant=SimpleNamespace(reference=reference))


def _litert(op: str, kernels: str, version: int = 2, **options) -> np.ndarray:
    """LiteRT's output for every int8 input of a one-op model (``kernels``: a LiteRT
    resolver of tests.support.runtimes)."""
    m = QuantModel()
    x = m.input("x", ALL.shape, np.int8, Q_IN.scale, Q_IN.zero_point)
    y = m.output("y", ALL.shape, np.int8, Q_OUT.scale, Q_OUT.zero_point)
    m.op(op, [x], [y], version=version, **options)
    return run_litert(m.build(), [ALL], kernels)[0]


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_function_is_the_float_formula(approximate):
    x = np.linspace(-6, 6, 601, dtype=np.float32)
    wide = x.astype(np.float64)
    if approximate:
        want = 0.5 * wide * (1 + np.tanh(np.sqrt(2 / np.pi) * (wide + 0.044715 * wide ** 3)))
    else:
        want = wide * 0.5 * (1 + np.vectorize(__import__("math").erf)(wide / np.sqrt(2)))
    got = gelu_fn(approximate)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_table_is_litert_s(approximate):
    table = gelu_table(_ctx(approximate=approximate), np.int8, Q_IN, Q_OUT)
    np.testing.assert_array_equal(table[ALL.view(np.uint8)],
                                  _litert("GELU", "reference", approximate=approximate))


# LiteRT's reference resolver has no ELU: kernels="reference" reproduces its builtin kernel
# (the optimized resolver without XNNPACK), "default" the XNNPACK delegate's table
@pytest.mark.parametrize("reference, resolver", [(True, "optimized"), (False, "default")])
def test_elu_table_is_the_kernel_set_s(reference, resolver):
    table = elu_table(_ctx(reference=reference), np.int8, Q_IN, Q_OUT)
    np.testing.assert_array_equal(table[ALL.view(np.uint8)],
                                  _litert("ELU", resolver, version=1))
