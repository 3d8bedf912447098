"""Quantized SUM / MEAN / REDUCE_MAX / REDUCE_MIN / REDUCE_PROD (int8, uint8, int16 16x8)
bit-exact with both LiteRT kernel sets (reduce.cc; XNNPACK takes int8 / uint8 SUM, MEAN,
MAX and MIN in the default set)."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError

from ..quant_oracle import QuantModel, assert_bit_exact, full_range, run_ours

RATIOS = (0.5, 0.25, 0.125, 1.5, 3.0)  # s_in / s_out: many exact .5 ties to round


def reduce_q(op, shape, axes, keep, dtype, qin, qout):
    m = QuantModel()
    x = m.input("x", shape, dtype, *qin)
    a = m.const("axes", np.array(axes, np.int32), np.int32)
    norm = {ax % len(shape) for ax in axes}
    out = [1 if i in norm else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in norm]
    y = m.output("y", out, dtype, *qout)
    m.op(op, [x, a], [y], keep_dims=keep)
    return m.build()


def random_case(rng, dtype, symmetric=False):
    shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(2, 5))))
    axes = sorted({int(a) for a in rng.integers(-len(shape), len(shape), size=2)})
    s_out = float(np.float32(rng.uniform(0.01, 0.3)))
    ratio = float(rng.choice(RATIOS)) if rng.random() < 0.6 else float(rng.uniform(0.05, 2))
    s_in = float(np.float32(s_out * ratio))
    info = np.iinfo(dtype)
    if symmetric:
        zin = zout = 0
    else:
        zin, zout = (int(rng.integers(info.min // 2, info.max // 2)) for _ in range(2))
    return shape, axes, bool(rng.integers(2)), (s_in, zin), (s_out, zout)


@pytest.mark.parametrize("op", ["SUM", "MEAN"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(6))
def test_sum_mean_8bit(op, dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, dtype)
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q(op, shape, axes, keep, dtype, qin, qout), [x])


@pytest.mark.parametrize("seed", range(4))
def test_mean_int16(seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, np.int16, symmetric=True)
    x = full_range(rng, shape, np.int16)
    assert_bit_exact(reduce_q("MEAN", shape, axes, keep, np.int16, qin, qout), [x])


@pytest.mark.parametrize("seed", range(4))
def test_sum_int16_default(seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, qout = random_case(rng, np.int16, symmetric=True)
    x = (full_range(rng, shape, np.int16) // 64).astype(np.int16)
    assert_bit_exact(reduce_q("SUM", shape, axes, keep, np.int16, qin, qout), [x],
                     kernels=("default",))


def test_sum_int16_reference_is_refused():
    model = reduce_q("SUM", (2, 3), [1], False, np.int16, (0.1, 0), (0.2, 0))
    with pytest.raises(UnsupportedOpError, match="reads the int16 data as uint8"):
        run_ours(model, [np.zeros((2, 3), np.int16)], "reference")


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("seed", range(3))
def test_max_min(op, dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, qin, _ = random_case(rng, dtype, symmetric=dtype == np.int16)
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q(op, shape, axes, keep, dtype, qin, qin), [x])


def test_max_needs_equal_params():
    model = reduce_q("REDUCE_MAX", (2, 3), [1], False, np.int8, (0.1, 3), (0.1, 4))
    with pytest.raises(ShapeError, match="equal quantization parameters"):
        run_ours(model, [np.zeros((2, 3), np.int8)], "reference")


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
@pytest.mark.parametrize("seed", range(4))
def test_prod(dtype, seed):
    rng = np.random.default_rng(seed)
    shape, axes, keep, (s_in, zin), (s_out, zout) = random_case(
        rng, dtype, symmetric=dtype == np.int16)
    n = int(np.prod([shape[a] for a in axes]))
    # keep the true product in range: |r| <= ~1.5 per element, s_out ~ max / 127
    s_in = float(np.float32(1.5 / np.iinfo(dtype).max))
    s_out = float(np.float32(1.5 ** n / np.iinfo(dtype).max * rng.uniform(0.3, 1)))
    x = full_range(rng, shape, dtype)
    assert_bit_exact(reduce_q("REDUCE_PROD", shape, axes, keep, dtype, (s_in, zin),
                              (s_out, zout)), [x])


def test_prod_uint8_is_refused():
    model = reduce_q("REDUCE_PROD", (2, 3), [1], False, np.uint8, (0.1, 3), (0.1, 4))
    with pytest.raises(UnsupportedOpError, match="uint8"):
        run_ours(model, [np.zeros((2, 3), np.uint8)], "reference")


@pytest.mark.parametrize("op", ["SUM", "MEAN", "REDUCE_PROD", "REDUCE_MAX"])
def test_reduce_to_a_scalar(op, rng):
    x = full_range(rng, (2, 4), np.int8)
    qout = (0.1, 3) if op == "REDUCE_MAX" else (0.4, 5)
    assert_bit_exact(reduce_q(op, (2, 4), [0, 1], False, np.int8, (0.1, 3), qout), [x])
