"""converter/lower/math_ops.py: binary arithmetic, MatMul / BatchMatMul, reductions, ArgMax,
Cumsum, Cast, IsFinite and comparisons, one node each; references from TF's op docs
(math_ops.cc)."""

import numpy as np
import pytest

from edgelite.errors import DTypeError, ShapeError

from .lowering import BOOL, F32, I32, I64, NONE, check, floats, graph, rng, run

COVERED = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
           "Minimum", "SquaredDifference", "Pow", "MatMul", "BatchMatMul", "BatchMatMulV2",
           "BatchMatMulV3", "Mean", "Sum", "Max", "Min", "Prod", "ArgMax", "ArgMin", "Cumsum",
           "Cast", "IsFinite", "Greater", "GreaterEqual", "Less", "LessEqual", "Equal",
           "NotEqual", "LogicalAnd", "LogicalOr", "Any", "All", "BitwiseXor"}


def tf_floor_mod(x, y):
    """FloorMod (math_ops.cc; cwise_ops.h google_floor_fmod): t = fmod(x, y), plus y where
    t != 0 and its sign is not y's -- the remainder takes the divisor's sign."""
    t = np.fmod(x, y)
    return np.where((t != 0) & ((y < 0) != (t < 0)), t + y, t)


FLOAT_BINARY = {
    "Add": ("ADD", np.add), "AddV2": ("ADD", np.add), "Sub": ("SUB", np.subtract),
    "Mul": ("MUL", np.multiply), "RealDiv": ("DIV", np.divide), "Div": ("DIV", np.divide),
    # FloorDiv: floor(x / y) (math_ops.cc "FloorDiv", "floor division like Python's //").
    "FloorDiv": ("FLOOR_DIV", lambda x, y: np.floor(x / y)),
    "FloorMod": ("FLOOR_MOD", tf_floor_mod),
    "Maximum": ("MAXIMUM", np.maximum), "Minimum": ("MINIMUM", np.minimum),
    "SquaredDifference": ("SQUARED_DIFFERENCE", lambda x, y: (x - y) * (x - y)),
}

# Broadcasting as NumPy does (TF's BCast): equal shapes, a row vector, a scalar, both sides.
SHAPES = [((2, 3), (2, 3)), ((2, 3, 4), (4,)), ((2, 3), ()), ((3, 1), (1, 4))]


def _away_from_zero(r, shape):
    v = floats(r, *shape, lo=0.5, hi=3.0)
    return np.where(r.random(shape) < 0.5, -v, v).astype(np.float32)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(FLOAT_BINARY))
def test_float_binary(op, shapes):
    tfl, ref = FLOAT_BINARY[op]
    r = rng()
    x, y = floats(r, *shapes[0], lo=-3, hi=3), _away_from_zero(r, shapes[1])
    g = graph(x=x.shape, y_in=y.shape)
    g.node("y", op, ["x", "y_in"], T=F32)
    check(g, {"x": x, "y_in": y}, ref(x.astype(np.float64), y).astype(np.float32), [tfl],
          rtol=2e-6)


def test_binary_with_a_constant_operand():
    """The constant side stays a constant tensor of the one op (no extra ops)."""
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.const("c", np.array([1.0, -2.0, 0.5], np.float32))
    g.node("y", "Mul", ["c", "x"], T=F32)
    check(g, {"x": x}, x * np.array([1.0, -2.0, 0.5], np.float32), ["MUL"])


# Integer division: Div on integers truncates toward zero (C++ '/': cwise_ops.h safe_div,
# "Div" in math_ops.cc), FloorDiv rounds toward -infinity ("FloorDiv": Python's //).
INT_X = np.array([7, -7, 7, -7, 6, -6, 0, 9], np.int32)
INT_Y = np.array([2, 2, -2, -2, 3, 4, -5, 4], np.int32)
INT_BINARY = {
    "Add": ("ADD", np.add), "Sub": ("SUB", np.subtract), "Mul": ("MUL", np.multiply),
    "Div": ("DIV", lambda x, y: (np.abs(x) // np.abs(y)) * np.sign(x) * np.sign(y)),
    "FloorDiv": ("FLOOR_DIV", np.floor_divide),
    "FloorMod": ("FLOOR_MOD", np.mod),  # Python's %: the divisor's sign (for integers)
    "Maximum": ("MAXIMUM", np.maximum), "Minimum": ("MINIMUM", np.minimum),
    "SquaredDifference": ("SQUARED_DIFFERENCE", lambda x, y: (x - y) ** 2),
    "Pow": ("POW", lambda x, y: np.power(x, np.abs(y))),
}


@pytest.mark.parametrize("op", sorted(INT_BINARY))
def test_int32_binary(op):
    tfl, ref = INT_BINARY[op]
    y = np.abs(INT_Y) if op == "Pow" else INT_Y   # integer pow: non-negative exponents
    g = graph(x=(INT_X.shape, I32), y_in=(y.shape, I32))
    g.node("y", op, ["x", "y_in"], T=I32)
    check(g, {"x": INT_X, "y_in": y}, ref(INT_X, y).astype(np.int32), [tfl])


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), I64])
def test_floor_mod_integer_types(dtype):
    """TFLite's FLOOR_MOD also takes int8 / int16 / int64 (raw values, floor_mod.cc)."""
    x, y = INT_X.astype(dtype), INT_Y.astype(dtype)
    g = graph(x=(x.shape, dtype), y_in=(y.shape, dtype))
    g.node("y", "FloorMod", ["x", "y_in"], T=dtype)
    check(g, {"x": x, "y_in": y}, np.array([1, 1, -1, -1, 0, 2, 0, 1], dtype), ["FLOOR_MOD"])


def test_float_pow():
    r = rng()
    x, y = floats(r, 2, 4, lo=0.1, hi=3.0), floats(r, 2, 4, lo=-2.0, hi=2.0)
    g = graph(x=x.shape, y_in=y.shape)
    g.node("y", "Pow", ["x", "y_in"], T=F32)
    check(g, {"x": x, "y_in": y}, np.power(x.astype(np.float64), y).astype(np.float32),
          ["POW"], rtol=1e-5)


# -- MatMul / BatchMatMul -----------------------------------------------------------------------
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("const_b", [True, False])
def test_matmul(transpose_a, transpose_b, const_b):
    """MatMul: a * b after transposing a / b when transpose_a / transpose_b (math_ops.cc).
    A constant b becomes FULLY_CONNECTED's [out, in] weights, transposed at conversion."""
    r = rng()
    a, b = floats(r, 3, 4), floats(r, 4, 5)
    a_in = a.T.copy() if transpose_a else a
    b_in = b.T.copy() if transpose_b else b
    g = graph(a=a_in.shape) if const_b else graph(a=a_in.shape, b=b_in.shape)
    if const_b:
        g.const("b", b_in)
    g.node("y", "MatMul", ["a", "b"], T=F32, transpose_a=transpose_a, transpose_b=transpose_b)
    feeds = {"a": a_in} if const_b else {"a": a_in, "b": b_in}
    # A computed b makes a BATCH_MATMUL, which takes both transposes as adj_x / adj_y.
    ops = (["TRANSPOSE"] if transpose_a else []) + ["FULLY_CONNECTED"] if const_b else \
        ["BATCH_MATMUL"]
    check(g, feeds, a @ b, ops, rtol=1e-5, lowered={"MATMUL": 1})


@pytest.mark.parametrize("op", ["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"])
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul(op, adj_x, adj_y):
    """BatchMatMul*: out[..., :, :] = matmul(x[..., :, :], y[..., :, :]), adj_x / adj_y
    transposing (adjoint = transpose for real numbers) the last two dimensions of x / y."""
    r = rng()
    x, y = floats(r, 2, 3, 4), floats(r, 2, 4, 5)
    x_in = np.swapaxes(x, -1, -2).copy() if adj_x else x
    y_in = np.swapaxes(y, -1, -2).copy() if adj_y else y
    g = graph(x=x_in.shape, y_in=y_in.shape)
    types = dict(Ta=F32, Tb=F32, Tout=F32) if op == "BatchMatMulV3" else dict(T=F32)
    g.node("y", op, ["x", "y_in"], adj_x=adj_x, adj_y=adj_y, **types)
    check(g, {"x": x_in, "y_in": y_in}, x @ y, ["BATCH_MATMUL"], rtol=1e-5)


def test_batch_matmul_v2_broadcasts_batch_dimensions():
    """BatchMatMulV2 broadcasts the batch dimensions (math_ops.cc, "supports broadcasting")."""
    r = rng()
    x, y = floats(r, 2, 1, 3, 4), floats(r, 3, 4, 2)
    g = graph(x=x.shape, y_in=y.shape)
    g.node("y", "BatchMatMulV2", ["x", "y_in"], T=F32)
    check(g, {"x": x, "y_in": y}, np.matmul(x, y), ["BATCH_MATMUL"], rtol=1e-5)


# -- reductions ---------------------------------------------------------------------------------
REDUCE = {"Mean": ("MEAN", np.mean), "Sum": ("SUM", np.sum), "Max": ("REDUCE_MAX", np.max),
          "Min": ("REDUCE_MIN", np.min), "Prod": ("REDUCE_PROD", np.prod)}
AXES = [np.int32(1), np.int32(-1), np.array([0, 2], np.int32), np.array([-3, 1], np.int64),
        np.array([1], np.int32)]


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes", AXES, ids=lambda a: f"axes{np.atleast_1d(a).tolist()}")
@pytest.mark.parametrize("op", sorted(REDUCE))
def test_reduction(op, axes, keep_dims):
    """Reductions over `reduction_indices` (a scalar or a vector, negative counting from the
    end), keeping reduced dimensions as 1 when keep_dims (math_ops.cc "Sum")."""
    tfl, ref = REDUCE[op]
    x = floats(rng(), 2, 3, 4, lo=0.5, hi=1.5)
    g = graph(x=x.shape)
    g.const("axes", axes)
    g.node("y", op, ["x", "axes"], T=F32, Tidx=np.asarray(axes).dtype, keep_dims=keep_dims)
    want = ref(x.astype(np.float64), axis=tuple(np.atleast_1d(axes).tolist()),
               keepdims=keep_dims)
    check(g, {"x": x}, np.asarray(want, np.float32), [tfl], rtol=2e-6)


def _truncated_mean(x, axis):
    """Mean of integers divides the integer sum by the count, truncating toward zero (Eigen's
    MeanReducer on an integer type: sum / count in C++)."""
    s, n = x.sum(axis=axis), x.shape[axis]
    return (np.abs(s) // n * np.sign(s)).astype(x.dtype)


@pytest.mark.parametrize("op, tfl, ref", [
    ("Sum", "SUM", lambda x: x.sum(axis=0)), ("Mean", "MEAN", lambda x: _truncated_mean(x, 0)),
    ("Prod", "REDUCE_PROD", lambda x: x.prod(axis=0)), ("Max", "REDUCE_MAX", lambda x: x.max(0)),
    ("Min", "REDUCE_MIN", lambda x: x.min(axis=0))])
def test_int32_reduction(op, tfl, ref):
    x = np.array([[-7, -3, 5, 2], [4, -1, 2, -2], [1, 2, -6, 3]], np.int32)
    g = graph(x=(x.shape, I32))
    g.const("axes", np.int32(0))
    g.node("y", op, ["x", "axes"], T=I32, Tidx=I32)
    check(g, {"x": x}, ref(x).astype(np.int32), [tfl])


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("op, tfl, ref", [("Any", "REDUCE_ANY", np.any),
                                          ("All", "REDUCE_ALL", np.all)])
def test_logical_reduction(op, tfl, ref, keep_dims):
    """Any / All over bool data (math_ops.cc), e.g. in tf.image.non_max_suppression_padded."""
    x = rng().random((3, 4, 2)) < 0.6
    g = graph(x=(x.shape, BOOL))
    g.const("axes", np.array([0, 2], np.int32))
    g.node("y", op, ["x", "axes"], Tidx=I32, keep_dims=keep_dims)
    check(g, {"x": x}, ref(x, axis=(0, 2), keepdims=keep_dims), [tfl])


def test_reduction_over_no_axes_is_the_identity():
    """An empty reduction_indices reduces nothing: the output is the input."""
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.const("axes", np.array([], np.int32))
    g.node("y", "Sum", ["x", "axes"], T=F32, Tidx=I32)
    check(g, {"x": x}, x, ["SUM"])


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("output_type", [None, I32, I64])
def test_arg_min_max(op, axis, output_type):
    """ArgMax / ArgMin along a scalar axis; output_type defaults to int64 (math_ops.cc).
    Ties are not used: TF leaves which index wins unspecified."""
    x = rng().permutation(24).astype(np.float32).reshape(2, 3, 4)
    g = graph(x=x.shape)
    g.const("axis", np.int32(axis))
    attrs = {} if output_type is None else {"output_type": output_type}
    g.node("y", op, ["x", "axis"], T=F32, Tidx=I32, **attrs)
    ref = np.argmax if op == "ArgMax" else np.argmin
    check(g, {"x": x}, ref(x, axis=axis).astype(output_type or I64),
          ["ARG_MAX" if op == "ArgMax" else "ARG_MIN"])


# -- Cumsum -------------------------------------------------------------------------------------
def tf_cumsum(x, axis, exclusive=False, reverse=False):
    """tf.math.cumsum: y[i] = x[0] + ... + x[i] along the axis; exclusive leaves x[i] out
    (y[0] = 0); reverse sums from the end (math_ops.cc "Cumsum")."""
    x = np.flip(x, axis) if reverse else x
    y = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        y = np.concatenate([np.zeros_like(np.take(y, [0], axis)),
                            np.take(y, range(y.shape[axis] - 1), axis)], axis)
    return np.flip(y, axis) if reverse else y


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [np.int32(1), np.int64(-1), np.int32(0)], ids=repr)
def test_cumsum(axis, exclusive, reverse):
    x = floats(rng(), 3, 5)
    g = graph(x=x.shape)
    g.const("axis", axis)
    g.node("y", "Cumsum", ["x", "axis"], T=F32, Tidx=axis.dtype, exclusive=exclusive,
           reverse=reverse)
    check(g, {"x": x}, tf_cumsum(x, int(axis), exclusive, reverse), ["CUMSUM"])


@pytest.mark.parametrize("dtype", [I32, I64])
def test_cumsum_of_integers_wraps(dtype):
    """Integer sums wrap around like TF's (two's complement)."""
    big = np.iinfo(dtype).max
    x = np.array([[big, 1, 5], [-3, 4, big]], dtype)
    g = graph(x=(x.shape, dtype))
    g.const("axis", np.int32(1))
    g.node("y", "Cumsum", ["x", "axis"], T=dtype, Tidx=I32, exclusive=True)
    want = np.array([[0, big, np.iinfo(dtype).min], [0, -3, 1]], dtype)
    np.testing.assert_array_equal(tf_cumsum(x, 1, exclusive=True), want)
    check(g, {"x": x}, want, ["CUMSUM"])


def test_cumsum_refuses_what_tflite_cannot_run():
    g = graph(x=((2, 3), np.dtype(np.float64)))
    g.const("axis", np.int32(0))
    g.node("y", "Cumsum", ["x", "axis"], T=np.dtype(np.float64), Tidx=I32)
    with pytest.raises(DTypeError, match=r"^node 'y' \(Cumsum\): input 0 \('x', the input\) is "
                       r"float64; Cumsum takes float32/int32/int64 there"):
        run(g, {"x": np.zeros((2, 3))}, ["y"])
    g = graph(x=(2, 3))
    g.const("axis", np.int32(2))
    g.node("y", "Cumsum", ["x", "axis"], T=F32, Tidx=I32)
    with pytest.raises(ShapeError, match=r"^node 'y' \(Cumsum\): axis 2 is out of range for "
                       r"rank 2"):
        run(g, {"x": np.zeros((2, 3), np.float32)}, ["y"])


# -- Cast ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("src, dst, values, want", [
    # float -> int truncates toward zero (static_cast, cast_op_impl.h).
    (F32, I32, [-2.7, -0.5, 0.0, 0.5, 2.7, 100.9], [-2, 0, 0, 0, 2, 100]),
    (I32, F32, [-3, 0, 7, 1 << 20, 5, 1], [-3.0, 0.0, 7.0, float(1 << 20), 5.0, 1.0]),
    (BOOL, F32, [True, False, True, True, False, False], [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]),
    # to bool: non-zero is true.
    (F32, BOOL, [0.0, -0.5, 2.0, 0.0, 1e-3, -7.0], [False, True, True, False, True, True]),
    (I32, I64, [-3, 0, 7, 2**31 - 1, -2**31, 1], [-3, 0, 7, 2**31 - 1, -2**31, 1]),
])
def test_cast(src, dst, values, want):
    x = np.array(values, src).reshape(2, 3)
    g = graph(x=(x.shape, src))
    g.node("y", "Cast", ["x"], SrcT=src, DstT=dst)
    check(g, {"x": x}, np.array(want, dst).reshape(2, 3), ["CAST"])


def test_cast_to_the_same_type_adds_no_op():
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.node("c", "Cast", ["x"], SrcT=F32, DstT=F32)
    g.node("y", "Relu", ["c"], T=F32)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"], lowered={"RELU": 1})


# -- IsFinite ------------------------------------------------------------------------------------
# (inf - inf is the IEEE NaN, computed without numpy's RuntimeWarning.)
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_is_finite():
    """tf.math.is_finite: true except for +-inf and NaN (the largest floats, subnormals and
    -0.0 are finite), written with builtins as TF's converter does: SUB(x, x), EQUAL(., 0)."""
    big = np.finfo(np.float32).max
    x = np.array([[1.0, np.inf, -np.inf, np.nan, 0.0, -0.0],
                  [big, -big, 1e-45, -1e-45, np.nan, 5.0]], np.float32)
    g = graph(x=x.shape)
    g.node("y", "IsFinite", ["x"], T=F32)
    r = check(g, {"x": x}, np.isfinite(x), ["SUB", "EQUAL"], passes=NONE,
              lowered={"SUB": 1, "EQUAL": 1})
    equal = next(op for op in r.graph.ops if op.type == "EQUAL")
    assert equal.inputs[1].data.shape == () and equal.inputs[1].data == 0  # a scalar 0.0
    check(g, {"x": x}, np.isfinite(x), ["SUB", "EQUAL"])  # no pass folds x - x to 0


def test_is_finite_takes_float32_only():
    g = graph(x=((2,), I32))
    g.node("y", "IsFinite", ["x"], T=I32)
    with pytest.raises(DTypeError, match=r"^node 'y' \(IsFinite\): input 0 \('x', the input\) "
                       "is int32; IsFinite takes float32 there"):
        run(g, {"x": np.zeros(2, np.int32)}, ["y"])


# -- comparisons and logical ops -------------------------------------------------------------
COMPARE = {"Greater": ("GREATER", np.greater), "GreaterEqual": ("GREATER_EQUAL", np.greater_equal),
           "Less": ("LESS", np.less), "LessEqual": ("LESS_EQUAL", np.less_equal),
           "Equal": ("EQUAL", np.equal), "NotEqual": ("NOT_EQUAL", np.not_equal)}


@pytest.mark.parametrize("dtype", [F32, I32])
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_comparison(op, dtype):
    tfl, ref = COMPARE[op]
    x = np.array([[-1, 0, 2, 3], [4, 2, -5, 0]], dtype)
    y = np.array([0, 0, 2, 4], dtype)    # broadcast over the rows; equal values included
    g = graph(x=(x.shape, dtype), y_in=(y.shape, dtype))
    g.node("y", op, ["x", "y_in"], T=dtype)
    check(g, {"x": x, "y_in": y}, ref(x, y), [tfl])


@pytest.mark.parametrize("op, tfl, ref", [("LogicalAnd", "LOGICAL_AND", np.logical_and),
                                          ("LogicalOr", "LOGICAL_OR", np.logical_or),
                                          ("Equal", "EQUAL", np.equal),
                                          ("NotEqual", "NOT_EQUAL", np.not_equal)])
def test_logical_binary(op, tfl, ref):
    x = np.array([[True, True, False, False]] * 2)
    y = np.array([True, False, True, False])
    g = graph(x=(x.shape, BOOL), y_in=(y.shape, BOOL))
    attrs = {"T": BOOL} if op in ("Equal", "NotEqual") else {}
    g.node("y", op, ["x", "y_in"], **attrs)
    check(g, {"x": x, "y_in": y}, ref(x, y), [tfl])


def test_binary_lowering_without_passes():
    """With every optional pass off the rule's op is what is exported."""
    r = rng()
    x, y = floats(r, 2, 3), _away_from_zero(r, (2, 3))
    g = graph(x=x.shape, y_in=y.shape)
    g.node("y", "RealDiv", ["x", "y_in"], T=F32)
    check(g, {"x": x, "y_in": y}, x / y, ["DIV"], passes=NONE, lowered={"DIV": 1})


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32])
def test_bitwise_xor(dtype):
    x = np.array([0, 1, 5, 127, -1 if np.iinfo(dtype).min < 0 else 255], dtype)
    y = np.array([3], dtype)
    g = graph(x=(x.shape, np.dtype(dtype)), y_in=(y.shape, np.dtype(dtype)))
    g.node("y", "BitwiseXor", ["x", "y_in"], T=np.dtype(dtype))
    check(g, {"x": x, "y_in": y}, x ^ y, ["BITWISE_XOR"])


def test_bitwise_xor_takes_no_int64():
    """TFLite's BITWISE_XOR has no 64-bit kernel: one line naming the node."""
    g = graph(x=((2,), I64), y_in=((2,), I64))
    g.node("y", "BitwiseXor", ["x", "y_in"], T=I64)
    with pytest.raises(DTypeError, match="'y'"):
        run(g, {"x": np.array([1, 2], I64), "y_in": np.array([3, 4], I64)}, ["y"])
