"""Dynamic-range (hybrid) FULLY_CONNECTED (interpreter/kernels/hybrid/fully_connected.py): float32 input,
int8 weights per tensor or per unit, symmetric or asymmetric input rows, bit-identical with
LiteRT's two kernel sets (BUILTIN_REF; XNNPACK's dynamically quantized fully connected)."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError
from tests.interpreter.tflite_builder import QuantModel
from tests.support import run_edgelite

from ...hybrid_models import RELU, RELU6, RELU_N1_TO_1, SEEDS, check, feed, weights


FC_CASES = [  # (input shape, units, per_channel, asymmetric, activation, bias, keep_num_dims)
    ((1, 16), 4, False, False, 0, True, False),
    ((3, 40), 30, True, False, RELU, True, False),
    ((5, 33), 7, False, True, RELU6, False, False),
    ((8, 64), 64, True, True, 0, True, False),
    ((2, 3, 24), 9, True, False, RELU_N1_TO_1, True, True),
    ((4, 300), 5, False, False, 0, True, False),
]


@pytest.mark.parametrize("case", FC_CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_fully_connected(case, seed):
    shape, units, per_channel, asym, act, with_bias, keep = case
    rng = np.random.default_rng(seed)
    depth = shape[-1]
    rows = int(np.prod(shape)) // depth
    m = QuantModel()
    x = m.input("x", shape, np.float32)
    w, scale, q = weights(rng, (units, depth), units, per_channel)
    operands = [x, m.const("w", w, np.int8, scale=scale, **q)]
    operands.append(m.const("b", rng.standard_normal(units), np.float32) if with_bias else -1)
    y = m.output("y", tuple(shape[:-1]) + (units,) if keep else (rows, units), np.float32)
    m.op("FULLY_CONNECTED", operands, [y], version=12 if per_channel else 9 if asym else 3,
         fused_activation_function=act, asymmetric_quantize_inputs=asym, keep_num_dims=keep)
    model = m.build()
    for kind in ("normal", "positive", "zeros"):
        check(model, [feed(rng, shape, kind)])


def _fc_model(w_dtype=np.int8, constant=True, scale=0.01, zp=0):
    m = QuantModel()
    x = m.input("x", (2, 8), np.float32)
    w = np.ones((3, 8), w_dtype)
    wt = m.const("w", w, w_dtype, scale=scale, zp=zp) if constant else \
        m.input("w", (3, 8), w_dtype, scale=scale, zp=zp)
    m.op("FULLY_CONNECTED", [x, wt, -1], [m.output("y", (2, 3), np.float32)], version=3)
    return m.build(), [np.ones((2, 8), np.float32)] + ([] if constant else [w])


@pytest.mark.parametrize("kind, message", [
    (dict(w_dtype=np.uint8), r"type uint8: dynamic-range \(hybrid\) kernels support int8"),
    (dict(constant=False), r"of a dynamic-range \(hybrid\) op must be a constant"),
    (dict(zp=3), r"dynamic-range \(hybrid\) weights .* must have zero point 0"),
])
def test_refusals_name_the_kind(kind, message):
    model, feeds = _fc_model(**kind)
    with pytest.raises(UnsupportedOpError, match=r"FULLY_CONNECTED.*" + message):
        run_edgelite(model, feeds, "reference")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_fully_connected(seed):
    rng = np.random.default_rng(200 + seed)
    rows, depth = int(rng.integers(1, 9)), int(rng.integers(1, 400))
    units = int(rng.integers(1, 70))
    per_channel, asym = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    m = QuantModel()
    x = m.input("x", (rows, depth), np.float32)
    w, scale, q = weights(rng, (units, depth), units, per_channel)
    bias = m.const("b", rng.standard_normal(units), np.float32) if rng.integers(0, 2) else -1
    y = m.output("y", (rows, units), np.float32)
    m.op("FULLY_CONNECTED", [x, m.const("w", w, np.int8, scale=scale, **q), bias], [y],
         version=12 if per_channel else 9 if asym else 3, asymmetric_quantize_inputs=asym,
         fused_activation_function=int(rng.choice([0, RELU, RELU6, RELU_N1_TO_1])))
    check(m.build(), [feed(rng, (rows, depth))])
