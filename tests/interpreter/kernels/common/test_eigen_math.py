"""eigen_math.py: Eigen's float32 tanh and logistic, bit for bit as LiteRT's optimized
float TANH / LOGISTIC kernels compute them (the same Eigen functions its recurrent
kernels apply), including the single-value lanes of a vector's unaligned tail."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter.kernels.common import eigen_math
from tests.conftest import litert_module
from tests.interpreter.tflite_builder import ModelBuilder

N = 4099  # 1024 four-lane packets and a tail of 3 single values


def _litert(op: str, x: np.ndarray) -> np.ndarray:
    b = ModelBuilder()
    i, o = b.tensor("x", [x.size]), b.tensor("y", [x.size])
    b.op(op, [i], [o])
    litert = litert_module()
    interp = litert.Interpreter(model_content=b.build([i], [o]),
                                experimental_op_resolver_type=(
                                    litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def _inputs(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0, 3, N - 200), rng.uniform(-120, 20, 150),
                        rng.normal(0, 1e-3, 50)]).astype(np.float32)
    return rng.permutation(x)


@pytest.mark.parametrize("seed", [0, 1])
def test_tanh_is_litert_bit_for_bit(seed):
    x = _inputs(seed)
    np.testing.assert_array_equal(eigen_math.tanh(x), _litert("TANH", x))
    assert not np.array_equal(np.tanh(x), _litert("TANH", x))  # numpy's is not


@pytest.mark.parametrize("seed", [0, 1])
def test_logistic_is_litert_bit_for_bit(seed):
    x = _inputs(seed)
    y = x.copy()
    lanes = eigen_math.scalar_lanes(0, N)
    assert lanes.sum() == 3 and lanes[-3:].all()
    eigen_math.logistic(y, lanes)
    np.testing.assert_array_equal(y, _litert("LOGISTIC", x))


def test_scalar_lanes_cover_head_and_tail():
    np.testing.assert_array_equal(eigen_math.scalar_lanes(5, 10),
                                  [1, 1, 1, 0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(eigen_math.scalar_lanes(2, 2), [1, 1])
    np.testing.assert_array_equal(eigen_math.scalar_lanes(8, 4), [0, 0, 0, 0])
