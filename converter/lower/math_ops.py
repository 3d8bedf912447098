"""Arithmetic: binary ops, MatMul/BatchMatMul, reductions (Any / All too), ArgMax, Cumsum, Cast,
IsFinite."""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError
from ..ir import Activation
from .context import LowerCtx, attr_bool, attr_dtype, axis_in_rank, fail
from .spec import ANY, BOOL, INDEX, REAL, Attr, In, Lowering, NodeSpec, scalar_input, spec


def _binary(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node),
                 dict(fused_activation_function=Activation.NONE))
    rule.__name__ = tfl_type.lower()
    return rule


def matmul(ctx: LowerCtx, node) -> None:
    """MATMUL is converter-only; matmul_to_fully_connected turns it into FULLY_CONNECTED."""
    ctx.emit("MATMUL", node, ctx.inputs(node), dict(
        transpose_a=attr_bool(node, "transpose_a", False),
        transpose_b=attr_bool(node, "transpose_b", False)))


def _plain_binary(tfl_type: str):
    """Binary ops whose TFLite options carry no fused activation."""
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node))
    rule.__name__ = tfl_type.lower()
    return rule


def _comparison(tfl_type: str):
    """Comparisons and logical binary ops: bool outputs, no options."""
    def rule(ctx: LowerCtx, node) -> None:
        ctx.emit(tfl_type, node, ctx.inputs(node), dtype=np.bool_)
    rule.__name__ = tfl_type.lower()
    return rule


def batch_matmul(ctx: LowerCtx, node) -> None:
    ctx.emit("BATCH_MATMUL", node, ctx.inputs(node), dict(
        adj_x=attr_bool(node, "adj_x", False), adj_y=attr_bool(node, "adj_y", False)))


def _reduce(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        axes = ctx.const_input(node, 1, "the reduction axes")
        ctx.emit(tfl_type, node, [ctx.input(node, 0),
                                  ctx.const(node, "axes", np.atleast_1d(axes).astype(np.int32))],
                 dict(keep_dims=attr_bool(node, "keep_dims", False)))
    rule.__name__ = tfl_type.lower()
    return rule


def _arg(tfl_type: str):
    def rule(ctx: LowerCtx, node) -> None:
        out_type = attr_dtype(node, "output_type", np.dtype(np.int64))
        axis = ctx.const_input(node, 1, "the axis").astype(np.int32).reshape(1)  # spec: scalar
        ctx.emit(tfl_type, node, [ctx.input(node, 0), ctx.const(node, "axis", axis)],
                 dict(output_type=_TFL_TYPE[out_type]), dtype=out_type)
    rule.__name__ = tfl_type.lower()
    return rule


_TFL_TYPE = {np.dtype(np.int32): 2, np.dtype(np.int64): 4}  # tflite TensorType INT32, INT64


def cumsum(ctx: LowerCtx, node) -> None:
    """Cumsum(x, axis) -> CUMSUM with the axis as an int32 scalar and TF's exclusive /
    reverse attributes as its options (the same semantics: math_ops.cc "Cumsum")."""
    x = ctx.input(node, 0)
    axis = int(np.asarray(ctx.const_input(node, 1, "the axis")).reshape(-1)[0])  # spec: scalar
    if x.shape is not None and not x.shape:
        raise fail(ShapeError, node, "the input is a scalar; Cumsum needs at least one "
                   "dimension")
    axis_in_rank(node, axis, None if x.shape is None else len(x.shape))
    ctx.emit("CUMSUM", node, [x, ctx.const(node, "axis", np.int32(axis))],
             dict(exclusive=attr_bool(node, "exclusive", False),
                  reverse=attr_bool(node, "reverse", False)))


def cast(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    dst = attr_dtype(node, "DstT")
    if dst == x.dtype:
        ctx.alias(node, x)
        return
    ctx.emit("CAST", node, [x], dtype=dst)


def is_finite(ctx: LowerCtx, node) -> None:
    """IsFinite has no TFLite builtin: x - x is 0 for a finite x and NaN for +-inf and NaN,
    so the result is EQUAL(SUB(x, x), 0.0) -- the builtins TF's converter writes
    (tflite_legalize_hlo_patterns.td: IsFinite(F32Tensor:$x) -> Equal(Sub($x, $x), 0.0f))."""
    x = ctx.input(node, 0)
    diff = ctx.graph.tensor(f"{node.name}/sub", x.dtype)
    ctx.graph.add_op("SUB", [x, x], [diff], dict(fused_activation_function=Activation.NONE),
                     name=node.name)
    ctx.emit("EQUAL", node, [diff, ctx.const(node, "zero", np.zeros((), x.dtype))],
             dtype=np.bool_)


# -- specs (TF op definitions: math_ops.cc) ----------------------------------------------------
def _pair(dtypes=REAL, attrs=()):
    return spec(In("operand x", dtypes), In("operand y", dtypes), attrs=attrs)


_BINARY = _pair()
_TRANSPOSES = tuple(Attr(a, "b") for a in ("transpose_a", "transpose_b"))
_ADJOINTS = tuple(Attr(a, "b") for a in ("adj_x", "adj_y"))
_REDUCE = spec(In("the input", REAL), In("the reduction axes", INDEX, "Tidx", const=True,
                                          ranks=(0, 1)), attrs=(Attr("keep_dims", "b"),))
# Any / All: bool input, no type attribute (math_ops.cc)
_LOGICAL_REDUCE = spec(In("the input", BOOL, None),
                       In("the reduction axes", INDEX, "Tidx", const=True, ranks=(0, 1)),
                       attrs=(Attr("keep_dims", "b"),))
_ARG = spec(In("the input", REAL), scalar_input("the axis", typed="Tidx"),
            attrs=(Attr("output_type", "type", dtypes=INDEX),))
# TFLite's CUMSUM takes float32, int32 and int64 (kernels/cumsum.cc).
_CUMSUM = spec(In("the input", frozenset(map(np.dtype, (np.float32, np.int32, np.int64)))),
               scalar_input("the axis", typed="Tidx"),
               attrs=(Attr("exclusive", "b"), Attr("reverse", "b")))
_CAST = spec(In("the input", ANY, "SrcT"), attrs=(Attr("DstT", "type", True, dtypes=ANY),))


def _family(make, node_spec: NodeSpec, pairs) -> dict:
    """{TF op: Lowering(make(TFLite op), node_spec)} for (TF op, TFLite op) pairs."""
    return {tf_op: Lowering(make(tfl), node_spec) for tf_op, tfl in pairs}


RULES = {
    **_family(_binary, _BINARY, (("Add", "ADD"), ("AddV2", "ADD"), ("Sub", "SUB"),
                                 ("Mul", "MUL"), ("RealDiv", "DIV"), ("Div", "DIV"))),
    **_family(_plain_binary, _BINARY, (
        ("FloorDiv", "FLOOR_DIV"), ("FloorMod", "FLOOR_MOD"), ("Maximum", "MAXIMUM"),
        ("Minimum", "MINIMUM"),
        ("SquaredDifference", "SQUARED_DIFFERENCE"), ("Pow", "POW"))),
    # TF's BitwiseXor takes every integer type; TFLite's (bitwise_xor.cc) these six
    "BitwiseXor": Lowering(_plain_binary("BITWISE_XOR"), _pair(frozenset(map(np.dtype, (
        np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32))))),
    "MatMul": Lowering(matmul, _pair(attrs=_TRANSPOSES)),
    "BatchMatMul": Lowering(batch_matmul, _pair(attrs=_ADJOINTS)),
    "BatchMatMulV2": Lowering(batch_matmul, _pair(attrs=_ADJOINTS)),
    # V3 types its operands separately (Ta, Tb) and the product as Tout.
    "BatchMatMulV3": Lowering(batch_matmul, spec(In("operand x", REAL, "Ta"),
                                                 In("operand y", REAL, "Tb"), attrs=_ADJOINTS)),
    **_family(_reduce, _REDUCE, (("Mean", "MEAN"), ("Sum", "SUM"), ("Max", "REDUCE_MAX"),
                                 ("Min", "REDUCE_MIN"), ("Prod", "REDUCE_PROD"))),
    **_family(_reduce, _LOGICAL_REDUCE, (("Any", "REDUCE_ANY"), ("All", "REDUCE_ALL"))),
    **_family(_arg, _ARG, (("ArgMax", "ARG_MAX"), ("ArgMin", "ARG_MIN"))),
    "Cumsum": Lowering(cumsum, _CUMSUM),
    "Cast": Lowering(cast, _CAST),
    # TF takes half types too; TFLite's SUB has float32 only (the pattern is F32Tensor).
    "IsFinite": Lowering(is_finite, spec(In("the input", frozenset({np.dtype(np.float32)})))),
    **_family(_comparison, _BINARY, (("Greater", "GREATER"), ("GreaterEqual", "GREATER_EQUAL"),
                                     ("Less", "LESS"), ("LessEqual", "LESS_EQUAL"))),
    **_family(_comparison, _pair(ANY), (("Equal", "EQUAL"), ("NotEqual", "NOT_EQUAL"))),
    **_family(_comparison, _pair(BOOL), (("LogicalAnd", "LOGICAL_AND"),
                                         ("LogicalOr", "LOGICAL_OR"))),
}
