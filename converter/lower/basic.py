"""Const, Identity and friends: nodes that become tensors or aliases, not kernels."""

from __future__ import annotations

from .context import LowerCtx, attr_dtype, attr_tensor


def const(ctx: LowerCtx, node) -> None:
    data = attr_tensor(node, "value")
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


RULES = {
    "Const": const,
    "Identity": identity,
    "IdentityN": identity,
    "StopGradient": identity,
    "Snapshot": identity,
    "CheckNumerics": identity,
    "EnsureShape": identity,
    "PlaceholderWithDefault": placeholder_with_default,
}
