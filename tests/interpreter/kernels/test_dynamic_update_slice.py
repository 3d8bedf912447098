"""DYNAMIC_UPDATE_SLICE (interpreter/kernels/dynamic_update_slice.py) bit-exact with both
LiteRT kernel sets: every element type LiteRT takes, quantized int8 / uint8 codes, int32 and
int64 start indices, computed and constant; clamping of out-of-range starts; an update as
large as the operand; and the refusals, each one line naming the tensor."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.versions import T, TensorSig

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams, run_litert

OP = "DYNAMIC_UPDATE_SLICE"
I32, I64, F32 = np.int32, np.int64, np.float32
DTYPES = [F32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16, I32,
          np.uint32, I64, np.uint64, np.bool_, np.complex64]


def values(rng, shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    info = np.iinfo(dtype)  # the full range (uint64 too)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def expected(operand, update, starts) -> np.ndarray:
    """XLA's DynamicUpdateSlice: each start clamped to [0, operand_dim - update_dim]."""
    out = operand.copy()
    begin = np.clip(starts, 0, np.subtract(operand.shape, update.shape))
    out[tuple(slice(b, b + n) for b, n in zip(begin, update.shape))] = update
    return out


def dus(operand, update, starts, constant=False) -> np.ndarray:
    """Both kernel sets against LiteRT's; edgelite's output, checked against numpy."""
    model, feeds = op_model(OP, [operand, update, const(starts) if constant else starts],
                            [(operand.shape, operand.dtype)])
    out = assert_bit_exact(model, feeds)["reference"][0]
    np.testing.assert_array_equal(out, expected(operand, update, starts))
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index_dtype", [I32, I64], ids=["int32", "int64"])
def test_every_element_type(rng, dtype, index_dtype):
    operand = values(rng, (3, 4, 5), dtype)
    update = values(rng, (2, 1, 3), dtype)
    out = dus(operand, update, np.array([1, 2, 1], index_dtype))
    np.testing.assert_array_equal(out[1:3, 2:3, 1:4], update)


@pytest.mark.parametrize("starts", [[-5, -1], [10, 10], [2, -3], [1, 1], [3, 2], [-1, 7]])
@pytest.mark.parametrize("constant", [False, True], ids=["computed", "constant"])
def test_out_of_range_starts_are_clamped(rng, starts, constant):
    operand = values(rng, (4, 5), F32)
    update = values(rng, (2, 3), F32)
    starts = np.array(starts, I32)
    out = dus(operand, update, starts, constant)
    # the update always lands whole: [-5, -1] writes at [0, 0], [10, 10] flush at [2, 2]
    begin = np.clip(starts, 0, [2, 2])
    np.testing.assert_array_equal(out[begin[0]:begin[0] + 2, begin[1]:begin[1] + 3], update)


def test_int64_starts_beyond_int32_are_clamped(rng):
    operand = values(rng, (4, 5), I32)
    update = values(rng, (1, 2), I32)
    out = dus(operand, update, np.array([2**40, -2**40], I64))
    np.testing.assert_array_equal(out[3, :2], update[0])


@pytest.mark.parametrize("starts", [[0, 0, 0], [2, -1, 9]])
def test_an_update_as_large_as_the_operand_replaces_it(rng, starts):
    operand = values(rng, (2, 3, 4), F32)
    update = values(rng, (2, 3, 4), F32)
    np.testing.assert_array_equal(dus(operand, update, np.array(starts, I32)), update)


@pytest.mark.parametrize("shape,update_shape", [((2, 1, 3, 2, 2), (1, 1, 2, 2, 1)),
                                                ((2, 2, 1, 2, 3, 2), (2, 1, 1, 1, 2, 2)),
                                                ((7,), (3,))])
def test_ranks(rng, shape, update_shape):
    operand, update = values(rng, shape, np.int8), values(rng, update_shape, np.int8)
    dus(operand, update, rng.integers(-2, 4, size=len(shape)).astype(I32))


def test_computed_starts_are_read_on_every_invoke(rng, litert):
    from edgelite.interpreter import Interpreter
    operand, update = values(rng, (5, 2), F32), values(rng, (2, 2), F32)
    model, _ = op_model(OP, [operand, update, np.zeros(2, I32)], [((5, 2), F32)])
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    for start in (0, 3, -1, 9, 2):
        feeds = [operand, update, np.array([start, 0], I32)]
        for d, v in zip(ours.get_input_details(), feeds):
            ours.set_tensor(d["index"], v)
        ours.invoke()
        out = ours.get_tensor(ours.get_output_details()[0]["index"])
        np.testing.assert_array_equal(out, run_litert(model, feeds, "reference")[0])
        np.testing.assert_array_equal(out, expected(*feeds))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("constant", [False, True], ids=["computed", "constant"])
def test_quantized_codes_are_copied(rng, dtype, constant):
    """int8 / uint8 with one set of parameters (as TF's converter and edgelite's quantizer
    write it): the codes move unchanged."""
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("operand", (3, 6), dtype, *q)
    u = m.input("update", (2, 2), dtype, *q)
    starts = np.array([1, 3], I32)
    s = m.const("starts", starts, I32) if constant else m.input("starts", (2,), I32)
    m.op(OP, [x, u, s], [m.output("y", (3, 6), dtype, *q)])
    feeds = [full_range(rng, (3, 6), dtype), full_range(rng, (2, 2), dtype)]
    feeds += [] if constant else [starts]
    (out,) = assert_bit_exact(m.build(), feeds)["default"]
    np.testing.assert_array_equal(out, expected(*feeds[:2], starts))


def test_quantized_parameters_are_not_checked_as_in_litert(rng):
    """LiteRT copies the codes even when operand, update and output disagree on scale and
    zero point (dynamic_update_slice.cc checks none): so does edgelite."""
    m = QuantModel()
    x = m.input("operand", (4,), np.int8, 0.5, 3)
    u = m.input("update", (2,), np.int8, 0.25, -7)
    s = m.input("starts", (1,), I32)
    m.op(OP, [x, u, s], [m.output("y", (4,), np.int8, 0.1, 0)])
    feeds = [np.array([1, 2, 3, 4], np.int8), np.array([-100, 100], np.int8),
             np.array([1], I32)]
    (out,) = assert_bit_exact(m.build(), feeds)["reference"]
    np.testing.assert_array_equal(out, [1, -100, 100, 4])


# ------------------------------------------------------------------------------ refusals

def refusal(rng, error, message, operand, update, starts, dtype=F32):
    """edgelite refuses at allocate_tensors() with one line naming the tensor; LiteRT
    refuses the model too (its Prepare)."""
    operand, update = values(rng, operand, dtype), values(rng, update, dtype)
    with pytest.raises(error, match=message) as raised:
        run_op(OP, [operand, update, starts], [(operand.shape, operand.dtype)])
    assert "\n" not in str(raised.value)
    model, feeds = op_model(OP, [operand, update, starts], [(operand.shape, operand.dtype)])
    with pytest.raises(RuntimeError):
        run_litert(model, feeds, "reference")


def test_start_indices_of_the_wrong_length(rng):
    refusal(rng, ShapeError, r"operator 0 \(DYNAMIC_UPDATE_SLICE, output 'output0'\): "
            r"start_indices 'input2' has shape \[3\]; it needs one entry per dimension of the "
            r"operand 'input0' \(\[2\]\)", (4, 5), (2, 2), np.zeros(3, I32))
    refusal(rng, ShapeError, r"start_indices 'input2' has shape \[1, 2\]", (4, 5), (2, 2),
            np.zeros((1, 2), I32))


def test_update_larger_than_the_operand(rng):
    refusal(rng, ShapeError, r"update 'input1' has shape \[2, 6\]; it must have the rank of "
            r"the operand 'input0' \[4, 5\] and fit inside it in every dimension", (4, 5),
            (2, 6), np.zeros(2, I32))


def test_update_of_another_rank(rng):
    refusal(rng, ShapeError, r"update 'input1' has shape \[2\]; it must have the rank of "
            r"the operand 'input0' \[4, 5\]", (4, 5), (2,), np.zeros(2, I32))


def test_other_types(rng):
    refusal(rng, UnsupportedOpError, r"start_indices tensor 'input2' has type int16; this "
            r"kernel supports int32, int64", (4, 5), (2, 2), np.zeros(2, np.int16))
    x = values(rng, (4, 5), F32)
    with pytest.raises(DTypeError, match=r"update 'input1' has type int32, the operand "
                       r"'input0' float32; they must be equal"):
        run_op(OP, [x, np.zeros((2, 2), I32), np.zeros(2, I32)], [((4, 5), F32)])


def test_more_than_eight_dimensions(rng):
    # LiteRT's Eval refuses rank > 8 (kMaxRank) at invoke; edgelite in allocate_tensors().
    shape = (1,) * 9
    x = values(rng, shape, F32)
    with pytest.raises(ShapeError, match=r"operand 'input0' has rank 9; DYNAMIC_UPDATE_SLICE "
                       r"takes at most 8 dimensions"):
        run_op(OP, [x, x, np.zeros(9, I32)], [(shape, F32)])


# Version cases (tests/interpreter/kernels/test_versions.py collects them): op_version.cc
# and op_version_test.cc, VersioningDynamicUpdateSliceTest.
_F32, _F16, _BF16, _I4, _I8, _I16, _I32, _I64, _BOOL = (
    TensorSig(t) for t in (T.FLOAT32, T.FLOAT16, T.BFLOAT16, T.INT4, T.INT8, T.INT16,
                           T.INT32, T.INT64, T.BOOL))
VERSION_CASES = [(OP, [_BF16], 6), (OP, [_I4, _I4, _I64], 5), (OP, [_I16, _I16, _I64], 4),
                 (OP, [_I16, _I16, _I32], 4), (OP, [_F16, _F16, _I32], 3),
                 (OP, [_F32, _F32, _I64], 2), (OP, [_I8, _I8, _I64], 2),
                 (OP, [_F32, _F32, _I32], 1), (OP, [_I8, _I8, _I32], 1),
                 (OP, [_BOOL, _BOOL, _I32], 1)]
