"""gemmlowp's int16 logistic / tanh tables and TFLite's fixed-point 1/sqrt
(interpreter/kernels/common/fixed_point16.py): the tables against LiteRT on all 65536 inputs
(its optimized int16 LOGISTIC / TANH kernels run the same gemmlowp functions), their
symmetries, and the inverse square root's accuracy. The integer LSTM tests
(test_lstm.py) show the whole cell bit-exact."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter.kernels.common import fixed_point16 as fp
from tests.conftest import litert_module
from tests.interpreter.tflite_builder import ModelBuilder

X = np.arange(-32768, 32768)


def test_logistic_table_is_symmetric_monotone_and_close():
    table = fp.logistic_table(3).astype(np.int64)  # Q3.12 in, Q0.15 out
    assert table[32768] == 16384  # logistic(0) = 1/2
    positive = np.arange(1, 32768)
    # gemmlowp computes negative inputs as One - f(-x): exact symmetry around 1/2
    np.testing.assert_array_equal(table[32768 - positive], 32767 - table[32768 + positive])
    assert np.max(np.abs(table - 32768 / (1 + np.exp(-X / 4096)))) < 7


@pytest.mark.parametrize("bits", range(7))
def test_tanh_tables_are_odd_and_close(bits):
    table = fp.tanh_table(bits).astype(np.int64)
    positive = np.arange(1, 32768)
    assert table[32768] == 0
    np.testing.assert_array_equal(table[32768 - positive], -table[32768 + positive])
    assert np.max(np.abs(table - 32768 * np.tanh(X * 2.0**(bits - 15)))) < 13


@pytest.mark.parametrize("value", [2, 3, 100, 12345, 2**20 + 7, 2**28, 2**30, 2**31 - 1])
def test_inv_sqrt_multiplier(value):
    multiplier, shift = fp.inv_sqrt_multiplier(value)
    assert 0 < multiplier < 2**31
    assert multiplier * 2.0**(shift - 31) == pytest.approx(1 / np.sqrt(value), rel=1e-5)


def test_inv_sqrt_of_zero_and_one_is_the_largest_multiplier():
    assert fp.inv_sqrt_multiplier(0) == fp.inv_sqrt_multiplier(1) == (2**31 - 1, 0)


@pytest.mark.parametrize("op, bits", [("LOGISTIC", 3), ("TANH", 3), ("TANH", 4)])
def test_tables_equal_litert_int16_activations(op, bits):
    """LiteRT's default (optimized) int16 LOGISTIC / TANH with input scale 2^(bits - 15)
    and output scale 2^-15 evaluate gemmlowp::logistic / tanh on FixedPoint<int16, bits>
    (optimized_ops::Logistic / Tanh): the LSTM's tables, every input."""
    litert = litert_module()
    b = ModelBuilder()
    x = b.tensor("x", [65536], np.int16, scale=2.0**(bits - 15), zero_point=0)
    y = b.tensor("y", [65536], np.int16, scale=2.0**-15, zero_point=0)
    b.op(op, [x], [y], version=3)
    interp = litert.Interpreter(model_content=b.build([x], [y]),
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], X.astype(np.int16))
    interp.invoke()
    table = fp.logistic_table(bits) if op == "LOGISTIC" else fp.tanh_table(bits)
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]),
                                  table)
