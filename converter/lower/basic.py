"""Const, Identity and friends: nodes that become tensors or aliases, not kernels."""

from __future__ import annotations

from edgelite.errors import DTypeError
from .context import LowerCtx, attr_dtype, attr_tensor, fail
from .spec import ANY, FLOAT, Attr, In, Lowering, dtype_name, spec


def const(ctx: LowerCtx, node) -> None:
    data = attr_tensor(node, "value")
    declared = attr_dtype(node, "dtype")
    if declared != data.dtype:
        raise fail(DTypeError, node, f"attribute dtype is {dtype_name(declared)} but its value "
                   f"holds {dtype_name(data.dtype)}; the GraphDef is malformed")
    t = ctx.graph.tensor(node.name, data.dtype, data=data)
    ctx.tensors[node.name] = t


def identity(ctx: LowerCtx, node) -> None:
    """Identity-like nodes become IDENTITY pseudo-ops; the remove_identities pass drops them."""
    for k, t in enumerate(ctx.inputs(node)):
        out = ctx.output(node, t.dtype, k)
        ctx.graph.add_op("IDENTITY", [t], [out], name=node.name)


def placeholder_with_default(ctx: LowerCtx, node) -> None:
    """A PlaceholderWithDefault that is not a chosen input is its default value."""
    src = ctx.input(node, 0)
    out = ctx.output(node, attr_dtype(node, "dtype", src.dtype))
    ctx.graph.add_op("IDENTITY", [src], [out], name=node.name)


_ONE = spec(In("the input", ANY))
# Identity also passes TensorLists (T=variant) and TensorArray handles (T=resource) through
# loops: its T is not read (list_ops lower to plain tensors: tensor_lists.py).
_PASS = spec(In("the input", ANY, typed=None))
RULES = {
    "Const": Lowering(const, spec(attrs=(Attr("value", "tensor", True),
                                         Attr("dtype", "type", True)))),
    "Identity": Lowering(identity, _PASS),
    "IdentityN": Lowering(identity, spec(variadic=In("the input", ANY, typed=None))),
    "StopGradient": Lowering(identity, _ONE),
    "Snapshot": Lowering(identity, _ONE),
    "CheckNumerics": Lowering(identity, spec(In("the input", FLOAT))),
    "EnsureShape": Lowering(identity, _ONE),
    "PlaceholderWithDefault": Lowering(placeholder_with_default, spec(
        In("the default value", ANY, typed="dtype"), attrs=(Attr("dtype", "type", True),))),
}
