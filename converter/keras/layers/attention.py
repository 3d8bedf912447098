"""Attention layers: MultiHeadAttention and Attention (dot-product), written as MatMul /
BatchMatMulV2 / Softmax with Keras' mask arithmetic (a masked score gets -1e9 added, as
keras.layers.Softmax does), so the converter's batch_matmul_to_fully_connected and
fold_dense_reshapes passes give the same ops TF's converter writes."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx, static

I32 = np.dtype(np.int32)
BOOL = np.dtype(bool)
LARGE_NEGATIVE = -1e9   # keras.layers.Softmax's adder for masked positions (float32)


def _project(ctx: LayerCtx, x: KTensor, kernel: np.ndarray, bias, what: str) -> str:
    """x [B, T, D] @ kernel [D, ...] (+ bias): MatMul on [B*T, D], Reshape to [B, T, ...]."""
    t, d = static(ctx, x)
    if kernel.shape[0] != d:
        ctx.fail(f"{what} kernel {list(kernel.shape)} does not fit input {list(x.shape)}")
    flat = ctx.reshape(x, (None, d), f"{what}/Reshape")
    y = ctx.op(f"{what}/MatMul", "MatMul",
               [flat.ref, ctx.const(f"{what}/kernel", kernel.reshape(d, -1))],
               transpose_a=False, transpose_b=False)
    if bias is not None:
        y = ctx.op(f"{what}/BiasAdd", "BiasAdd", [y, ctx.const(f"{what}/bias", bias.reshape(-1))])
    return ctx.reshape(KTensor(y, (None, int(np.prod(kernel.shape[1:])))),
                       (None, t) + kernel.shape[1:], f"{what}/Reshape_1").ref


def _combined_mask(ctx: LayerCtx, q: KTensor, v: KTensor, k: KTensor, explicit,
                   causal: bool) -> str | None:
    """The [B, Tq, Tv] bool mask Keras attends with: the query's and value's (key's) masks,
    an explicit attention_mask, a causal mask; None when there is none."""
    tq, tv = q.shape[1], v.shape[1]
    parts = []
    if q.mask is not None:
        parts.append(ctx.op("query_mask", "ExpandDims", [q.mask.ref, ctx.int_const("qdim", -1)],
                            dtype=BOOL, Tdim=I32))
    for name, t in (("value_mask", v), ("key_mask", k)):
        if t.mask is not None:
            parts.append(ctx.op(name, "ExpandDims", [t.mask.ref, ctx.int_const(f"{name}_dim", 1)],
                                dtype=BOOL, Tdim=I32))
    if isinstance(explicit, KTensor):
        m = explicit.ref
        if explicit.dtype != BOOL:
            m = ctx.op("attention_mask/Cast", "Cast", [m], dtype=None, SrcT=explicit.dtype,
                       DstT=BOOL)
        parts.append(m)
    if causal:
        static(ctx, q, (1,))
        static(ctx, v, (1,))
        parts.append(ctx.g.const(f"{ctx.prefix}/causal_mask",
                                 np.tril(np.ones((tq, tv), bool))[None]))
    if not parts:
        return None
    mask = parts[0]
    for k_, m in enumerate(parts[1:]):
        mask = ctx.op(f"mask_and_{k_}", "LogicalAnd", [mask, m], dtype=None)
    return mask


def _masked_softmax(ctx: LayerCtx, scores: str, mask: str | None) -> str:
    if mask is not None:
        keep = ctx.op("mask/Cast", "Cast", [mask], dtype=None, SrcT=BOOL,
                      DstT=np.dtype(np.float32))
        drop = ctx.op("mask/sub", "Sub", [ctx.g.const(f"{ctx.prefix}/one", np.float32(1)), keep])
        adder = ctx.op("mask/mul", "Mul", [drop, ctx.g.const(f"{ctx.prefix}/large_negative",
                                                             np.float32(LARGE_NEGATIVE))])
        scores = ctx.op("mask/add", "AddV2", [scores, adder])
    return ctx.op("Softmax", "Softmax", [scores])


def _tensors(ctx: LayerCtx):
    """(query, value, key) from the call: args [query, value(, key)] or keyword ones."""
    args = [a for a in ctx.args if isinstance(a, KTensor)]
    if len(ctx.args) == 1 and isinstance(ctx.args[0], (list, tuple)):
        args = [a for a in ctx.args[0] if isinstance(a, KTensor)]
    q = args[0] if args else ctx.kwargs.get("query")
    v = args[1] if len(args) > 1 else ctx.kwargs.get("value")
    k = args[2] if len(args) > 2 else ctx.kwargs.get("key")
    if not isinstance(q, KTensor) or not isinstance(v, KTensor):
        ctx.fail("called without query and value tensors")
    return q, v, k if isinstance(k, KTensor) else v


def multi_head_attention(ctx: LayerCtx) -> KTensor:
    """softmax(q k^T / sqrt(key_dim) + mask) v per head, then the output projection
    (keras MultiHeadAttention with attention_axes over the sequence)."""
    q, v, k = _tensors(ctx)
    if q.rank != 3 or v.rank != 3 or k.rank != 3:
        ctx.fail("reads rank-3 [batch, steps, features] query / value / key only")
    axes = ctx.config.get("attention_axes")
    if axes not in (None, [1], 1, (1,)):
        ctx.fail(f"attention_axes {axes}: edgelite attends over the steps axis only")
    heads, key_dim = int(ctx.cfg("num_heads")), int(ctx.cfg("key_dim"))
    names = ["kernel", "bias"] if ctx.cfg("use_bias", True) else ["kernel"]
    w = {}
    for part, k3, legacy in (("query", "query_dense", "query"), ("key", "key_dense", "key"),
                             ("value", "value_dense", "value"),
                             ("output", "output_dense", "attention_output")):
        arrays = ctx.weights(names, (k3, legacy))
        w[part] = (arrays[0], arrays[1] if len(arrays) > 1 else None)
    tq, tv = q.shape[1], v.shape[1]
    qh = _project(ctx, q, *w["query"], "query")
    kh = _project(ctx, k, *w["key"], "key")
    vh = _project(ctx, v, *w["value"], "value")
    perm = ctx.int_const("perm", [0, 2, 1, 3])
    qh = ctx.op("query/transpose", "Transpose", [qh, perm], Tperm=I32)
    kh = ctx.op("key/transpose", "Transpose", [kh, perm], Tperm=I32)
    vh = ctx.op("value/transpose", "Transpose", [vh, perm], Tperm=I32)
    qh = ctx.op("query/scale", "Mul", [qh, ctx.g.const(f"{ctx.prefix}/scale",
                                                       np.float32(1 / np.sqrt(key_dim)))])
    scores = ctx.op("scores", "BatchMatMulV2", [qh, kh], adj_x=False, adj_y=True)
    mask = _combined_mask(ctx, q, v, k, ctx.kwargs.get("attention_mask"),
                          bool(ctx.kwargs.get("use_causal_mask", False)))
    if mask is not None:   # [B, Tq, Tv] -> [B, 1, Tq, Tv]: the same for every head
        mask = ctx.op("mask/heads", "ExpandDims", [mask, ctx.int_const("mask/dim", 1)],
                      dtype=BOOL, Tdim=I32)
    probs = _masked_softmax(ctx, scores, mask)
    out = ctx.op("context", "BatchMatMulV2", [probs, vh], adj_x=False, adj_y=False)
    out = ctx.op("context/transpose", "Transpose", [out, perm], Tperm=I32)
    value_dim = w["value"][0].shape[-1]
    out = KTensor(out, (None, tq, heads, value_dim))
    kernel, bias = w["output"]
    y = _project(ctx, ctx.reshape(out, (None, tq, heads * value_dim), "context/Reshape"),
                 kernel.reshape(heads * value_dim, *kernel.shape[2:]), bias, "attention_output")
    return KTensor(y, (q.shape[0], tq) + tuple(kernel.shape[2:]), q.dtype, q.mask)


def attention(ctx: LayerCtx) -> KTensor:
    """keras.layers.Attention (Luong, score_mode 'dot'): softmax(scale * q k^T + mask) v."""
    q, v, k = _tensors(ctx)
    if ctx.cfg("score_mode", "dot") != "dot":
        ctx.fail(f"score_mode {ctx.cfg('score_mode')!r}: edgelite writes 'dot'")
    if q.rank != 3:
        ctx.fail("reads rank-3 [batch, steps, features] query / value / key only")
    scores = ctx.op("scores", "BatchMatMulV2", [q.ref, k.ref], adj_x=False, adj_y=True)
    if ctx.cfg("use_scale", False):
        (scale,) = ctx.weights(["scale"])
        scores = ctx.op("scores/scale", "Mul", [scores, ctx.const("scale", scale)])
    masks = ctx.kwargs.get("mask")
    if isinstance(masks, (list, tuple)):   # [query_mask, value_mask] given explicitly
        q = q if len(masks) < 1 or not isinstance(masks[0], KTensor) else \
            KTensor(q.ref, q.shape, q.dtype, masks[0])
        v = v if len(masks) < 2 or not isinstance(masks[1], KTensor) else \
            KTensor(v.ref, v.shape, v.dtype, masks[1])
    causal = bool(ctx.kwargs.get("use_causal_mask", ctx.cfg("causal", False)))
    mask = _combined_mask(ctx, KTensor(q.ref, q.shape, q.dtype), v,
                          KTensor(k.ref, k.shape, k.dtype), None, causal)
    probs = _masked_softmax(ctx, scores, mask)
    y = ctx.op("context", "BatchMatMulV2", [probs, v.ref], adj_x=False, adj_y=False)
    if q.mask is not None:   # Keras zeroes the rows of masked queries
        keep = ctx.op("query_mask/Cast", "Cast", [q.mask.ref], dtype=None, SrcT=BOOL,
                      DstT=np.dtype(np.float32))
        keep = ctx.op("query_mask/ExpandDims", "ExpandDims",
                      [keep, ctx.int_const("query_mask/dim", -1)], Tdim=I32)
        y = ctx.op("query_mask/mul", "Mul", [y, keep])
    return KTensor(y, q.shape[:2] + (v.shape[-1],), q.dtype, q.mask)


RULES = {
    "MultiHeadAttention": multi_head_attention,
    "Attention": attention,
}
