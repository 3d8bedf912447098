"""pair_table.py: quantized DIV, SQUARED_DIFFERENCE and PRELU bit-exact with both LiteRT
kernel sets: every pair of input values (a (256, 1) input against a (1, 256) one), random
parameters over several seeds, broadcasting shapes, fused activations, and int16 DIV."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams

VERSION = {"DIV": 1, "SQUARED_DIFFERENCE": 2, "PRELU": 1}


def all_pairs(dtype):
    info = np.iinfo(dtype)
    q = np.arange(info.min, info.max + 1).astype(dtype)
    return q.reshape(256, 1), q.reshape(1, 256)


def pair_model(op, dtype, a, b, qa, qb, qo, b_const=False, **options):
    m = QuantModel()
    ta = m.input("a", a.shape, dtype, *qa)
    tb = m.const("b", b, dtype, *qb) if b_const else m.input("b", b.shape, dtype, *qb)
    y = m.output("y", np.broadcast_shapes(a.shape, b.shape), dtype, *qo)
    m.op(op, [ta, tb], [y], version=VERSION[op], **options)
    return m.build(), [a] if b_const else [a, b]


def seeded_params(seed, dtype, out_low=0.01, out_high=0.3):
    rng = np.random.default_rng(seed)
    return (random_qparams(rng, dtype, 0.01, 0.1), random_qparams(rng, dtype, 0.01, 0.1),
            random_qparams(rng, dtype, out_low, out_high))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(4))
def test_div_all_pairs(dtype, seed):
    # every numerator against every divisor but 0 (its zero point: fails, below),
    # numerators near their zero point among them, where the final shift passes 31
    qa, qb, qo = seeded_params(seed, dtype)
    a, b = all_pairs(dtype)
    b = b[b != qb[1]].reshape(1, -1)
    assert_bit_exact(*pair_model("DIV", dtype, a, b, qa, qb, qo))


def test_div_by_zero_fails():
    a, b = np.arange(4, dtype=np.int8), np.array([3, 4, 5, 6], np.int8)
    model, feeds = pair_model("DIV", np.int8, a, b, (0.1, 0), (0.1, 5), (0.1, 0))
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), feeds):
        interp.set_tensor(detail["index"], value)
    with pytest.raises(EdgeliteError, match=r"DIV.*division by zero.*zero point 5"):
        interp.invoke()


@pytest.mark.parametrize("act", [1, 3])  # RELU, RELU6
@pytest.mark.parametrize("shapes", [((2, 3, 5), (5,)), ((4, 1, 3), (1, 6, 1))])
def test_div_activation_broadcast(rng, act, shapes):
    qa, qb, qo = seeded_params(7, np.int8, 0.01, 0.05)
    a, b = (full_range(rng, s, np.int8) for s in shapes)
    b[b == qb[1]] += 1
    assert_bit_exact(*pair_model("DIV", np.int8, a, b, qa, qb, qo,
                                 fused_activation_function=act))


@pytest.mark.parametrize("seed", range(4))
def test_squared_difference_all_pairs(seed):
    qa, qb, qo = seeded_params(seed, np.int8, 0.05, 0.5)
    a, b = all_pairs(np.int8)
    assert_bit_exact(*pair_model("SQUARED_DIFFERENCE", np.int8, a, b, qa, qb, qo))


def test_squared_difference_output_scale_too_small():
    a, b = all_pairs(np.int8)
    model, _ = pair_model("SQUARED_DIFFERENCE", np.int8, a, b, (0.5, 0), (0.5, 0), (1e-5, 0))
    with pytest.raises(EdgeliteError, match="output scale .* is too small"):
        Interpreter(model_content=model).allocate_tensors()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(3))
def test_prelu_all_pairs(dtype, seed):
    # LiteRT's quantized PRELU needs the output shaped as the input: x repeats its values
    # along the rows, alpha takes every value along the columns
    qa, qb, qo = seeded_params(seed, dtype, 0.01, 0.1)
    a, b = all_pairs(dtype)
    assert_bit_exact(*pair_model("PRELU", dtype, np.repeat(a, 256, 1), b, qa, qb, qo))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("alpha_shape", [(3,), (1, 1, 3)])
def test_prelu_constant_alpha(rng, dtype, alpha_shape):
    qa, qb, qo = seeded_params(11, dtype, 0.01, 0.1)
    x = full_range(rng, (1, 4, 5, 3), dtype)
    alpha = full_range(rng, alpha_shape, dtype)
    model, feeds = pair_model("PRELU", dtype, x, alpha, qa, qb, qo, b_const=True)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("seed", range(3))
def test_div_int16(seed):
    rng = np.random.default_rng(seed)
    qa, qb, qo = ((float(np.float32(rng.uniform(1e-4, 1e-3))), 0) for _ in range(3))
    a = rng.integers(-32768, 32768, (64, 1)).astype(np.int16)
    a[:8, 0] = [0, 1, -1, 2, -2, 100, 32767, -32768]  # near zero: shifts past 31
    b = rng.integers(-32768, 32768, (1, 64)).astype(np.int16)
    b[b == 0] = 1
    b[0, :4] = [1, -1, 32767, -32768]
    assert_bit_exact(*pair_model("DIV", np.int16, a, b, qa, qb, qo))


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
def test_floor_ops_take_int8_raw(op):
    # LiteRT's FLOOR_DIV / FLOOR_MOD divide int8 values as integers, whatever their
    # quantization parameters: so does edgelite (no quantized kernel involved)
    a, b = all_pairs(np.int8)
    b = b[b != 0].reshape(1, -1)
    m = QuantModel()
    ta, tb = m.input("a", a.shape, np.int8, 0.1, 3), m.input("b", b.shape, np.int8, 0.2, -4)
    y = m.output("y", (256, 255), np.int8, 0.3, 1)
    m.op(op, [ta, tb], [y], version=1)
    out = assert_bit_exact(m.build(), [a, b])["reference"][0]
    if op == "FLOOR_DIV":
        np.testing.assert_array_equal(out, (a.astype(int) // b).astype(np.int8))
