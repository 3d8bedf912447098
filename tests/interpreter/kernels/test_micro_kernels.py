"""kernels="micro": the ops where TensorFlow Lite Micro's reference kernels differ from
LiteRT's, on random single-op models, bit-exact with TFLM (the tflite-micro runtime).

Each case also shows the difference is real: over its seeds, kernels="reference" (LiteRT's
arithmetic) gives other results than TFLM somewhere (``differs_from_reference``), except
where noted.

* FULLY_CONNECTED int8: MultiplyByQuantizedMultiplier (LiteRT: double rescale);
* FULLY_CONNECTED 16x8: MultiplyByQuantizedMultiplier, int64 overload;
* RELU6: clamped in the input's quantization, not rescaled;
* SUM int8 / int16: the data read as its own type (LiteRT's reference reads uint8);
* SOFTMAX 16x8: tables in float32;
* MUL int8 / 16x8: the multiplier in double.
"""

import numpy as np
import pytest

from tests.interpreter.micro_oracle import assert_micro_exact, run_micro
from tests.interpreter.quant_oracle import (QuantModel, full_range, random_qparams,
                                            run_ours)

I8, I16 = np.int8, np.int16
SEEDS = range(6)
DIFF_SEEDS = range(40)  # a softmax table entry 1 LSB apart shows on few inputs


def _scale16(rng) -> float:
    return float(np.float32(rng.uniform(1e-4, 1e-3)))


def fully_connected(rng, dtype=I8, per_channel=False, units=32, depth=48, rows=16):
    m = QuantModel()
    if dtype == I8:
        x = m.input("x", (rows, depth), I8, *random_qparams(rng, I8, 0.01, 0.1))
        y = m.output("y", (rows, units), I8, *random_qparams(rng, I8, 0.05, 0.5))
        bias_dtype, feed = np.int32, full_range(rng, (rows, depth), I8)
    else:
        x = m.input("x", (rows, depth), I16, _scale16(rng), 0)
        y = m.output("y", (rows, units), I16, _scale16(rng) * 8, 0)
        bias_dtype, feed = np.int64, full_range(rng, (rows, depth), I16)
    w = rng.integers(-127, 128, (units, depth)).astype(I8)
    scales = (rng.uniform(0.002, 0.02, units) if per_channel else
              rng.uniform(0.002, 0.02, 1)).astype(np.float32)
    wt = m.b.tensor("w", w.shape, I8, data=w, scale=scales,
                    zero_point=np.zeros(scales.size, np.int64))
    b = m.const("b", rng.integers(-3000, 3000, units), bias_dtype)
    m.op("FULLY_CONNECTED", [x, wt, b], [y], version=4 if dtype == I8 else 7)
    return m.build(), [feed]


def relu6(rng):
    m = QuantModel()
    x = m.input("x", (1, 8, 8, 4), I8, *random_qparams(rng, I8, 0.01, 0.1))
    y = m.output("y", (1, 8, 8, 4), I8, *random_qparams(rng, I8, 0.01, 0.1))
    m.op("RELU6", [x], [y], version=2)
    return m.build(), [full_range(rng, (1, 8, 8, 4), I8)]


def reduce_sum(rng, dtype=I8):
    m = QuantModel()
    shape = (1, 4, 5, 8)
    qp = (lambda: random_qparams(rng, I8, 0.01, 0.2)) if dtype == I8 else \
        (lambda: (_scale16(rng), 0))
    x = m.input("x", shape, dtype, *qp())
    s_out, z_out = qp()
    axes = m.const("axes", [1, 2], np.int32)
    y = m.output("y", (1, 1, 1, 8), dtype, s_out * 8, z_out)
    m.op("SUM", [x, axes], [y], keep_dims=True)
    return m.build(), [full_range(rng, shape, dtype)]


def softmax16(rng):
    m = QuantModel()
    shape = (4, 40)
    x = m.input("x", shape, I16, _scale16(rng), 0)
    y = m.output("y", shape, I16, 1 / 32768, 0)
    m.op("SOFTMAX", [x], [y], version=3, beta=1.0)
    return m.build(), [full_range(rng, shape, I16)]


def mul(rng, dtype=I8):
    m = QuantModel()
    shape = (1, 8, 8, 8)
    qp = (lambda: random_qparams(rng, I8, 0.01, 0.2)) if dtype == I8 else \
        (lambda: (_scale16(rng), 0))
    a = m.input("a", shape, dtype, *qp())
    b = m.input("b", shape, dtype, *qp())
    y = m.output("y", shape, dtype, *qp())
    m.op("MUL", [a, b], [y], version=2 if dtype == I8 else 4)
    return m.build(), [full_range(rng, shape, dtype), full_range(rng, shape, dtype)]


CASES = {
    "fc_int8_per_tensor": (fully_connected, {}),
    "fc_int8_per_channel": (fully_connected, dict(per_channel=True)),
    "fc_16x8": (fully_connected, dict(dtype=I16)),
    "fc_16x8_per_channel": (fully_connected, dict(dtype=I16, per_channel=True)),
    "relu6": (relu6, {}),
    "sum_int8": (reduce_sum, {}),
    "sum_int16": (reduce_sum, dict(dtype=I16)),
    "softmax_16x8": (softmax16, {}),
    "mul_int8": (mul, {}),
    "mul_16x8": (mul, dict(dtype=I16)),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES)
def test_micro_bit_exact_with_tflm(case, seed):
    make, options = CASES[case]
    model, feeds = make(np.random.default_rng(seed), **options)
    assert_micro_exact(model, feeds)


def _differs_from_reference(make, options) -> bool:
    for seed in DIFF_SEEDS:
        model, feeds = make(np.random.default_rng(seed), **options)
        try:
            ours = run_ours(model, feeds, "reference")
        except Exception:  # LiteRT's reference has no such kernel (int16 SUM)
            return True
        if any(not np.array_equal(a, b) for a, b in zip(ours, run_micro(model, feeds))):
            return True
    return False


@pytest.mark.parametrize("case", [c for c in CASES if c not in ("mul_int8", "mul_16x8")])
def test_tflm_differs_from_litert_reference(case):
    """The case exercises a real difference (MUL's double multiplier differs from the
    float32 one only on rare scales: TF's 16x8 EfficientNet-like file,
    tests/models/test_micro_models.py, is its evidence)."""
    assert _differs_from_reference(*CASES[case])


def test_micro_kernel_set_is_reference_plus_its_differences():
    from edgelite.interpreter.kernel_set import KernelSet, QuantConfig
    micro = QuantConfig.make("micro")
    assert micro.kernels is KernelSet.MICRO and micro.micro and micro.reference
    assert not QuantConfig.make("reference").micro and not QuantConfig.make("default").micro
    with pytest.raises(ValueError, match="'micro'"):
        QuantConfig.make("tflm")
