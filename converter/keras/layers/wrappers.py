"""The wrapper layers: Bidirectional (two RNNs of recurrent.py over the same input, the
backward one reversed in time, merged by merge_mode) and TimeDistributed (any layer of the
registry on the steps folded into the batch)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..context import KTensor, LayerCtx, static
from .recurrent import CELLS, F32, I32, run_rnn


def _inner(entry) -> tuple[str, dict]:
    entry = entry or {}
    return str(entry.get("class_name")), dict(entry.get("config") or {})


def bidirectional(ctx: LayerCtx):
    """The forward layer and the backward one (go_backwards) on the same input, the
    backward sequence flipped back in time, merged by merge_mode."""
    x = ctx.input()
    cls, fwd_cfg = _inner(ctx.config.get("layer"))
    if ctx.config.get("backward_layer"):   # its own config (Keras 3 always writes it)
        bcls, bwd_cfg = _inner(ctx.config.get("backward_layer"))
    else:                                   # Keras 2: the forward layer, reversed
        bcls, bwd_cfg = cls, {**fwd_cfg,
                              "go_backwards": not fwd_cfg.get("go_backwards", False)}
    if cls not in CELLS or bcls not in CELLS or "ConvLSTM2D" in (cls, bcls):
        ctx.fail(f"wraps a {cls}: edgelite reads LSTM, GRU and SimpleRNN")
    sequences = bool(fwd_cfg.get("return_sequences", False))
    zero_out = sequences
    halves = []
    for which, c, cfg in (("forward", cls, fwd_cfg), ("backward", bcls, bwd_cfg)):
        sub = replace(ctx, prefix=f"{ctx.prefix}/{which}", _consts={},
                      _weights=ctx._weights.scoped(f"{which}_layer", which))
        halves.append(run_rnn(sub, c, cfg, x, bool(cfg.get("go_backwards", False)), None,
                              zero_out))
    (fo, fs), (bo, bs) = halves
    if sequences:
        bo = KTensor(ctx.op("backward/ReverseV2", "ReverseV2",
                            [bo.ref, ctx.int_const("time_axis", [1])], Tidx=I32),
                     bo.shape, F32, bo.mask)
    mode = ctx.config.get("merge_mode", "concat")
    if mode is None:
        merged = [fo, bo]
    elif mode == "concat":
        merged = [KTensor(ctx.op("concat", "ConcatV2", [fo.ref, bo.ref,
                                                        ctx.int_const("axis", -1)],
                                 N=2, Tidx=I32),
                          fo.shape[:-1] + (fo.shape[-1] + bo.shape[-1],), F32, fo.mask)]
    elif mode in ("sum", "mul", "ave"):
        y = ctx.op(mode, "Mul" if mode == "mul" else "AddV2", [fo.ref, bo.ref])
        if mode == "ave":
            y = ctx.op("ave_half", "Mul", [y, ctx.g.const(f"{ctx.prefix}/half",
                                                          np.float32(0.5))])
        merged = [KTensor(y, fo.shape, F32, fo.mask)]
    else:
        ctx.fail(f"merge_mode {mode!r}")
    if fwd_cfg.get("return_state", False):
        return merged + fs + bs
    return merged if len(merged) > 1 else merged[0]


def time_distributed(ctx: LayerCtx) -> KTensor:
    """The wrapped layer on [B * T, ...]: Reshape, the layer, Reshape back."""
    from . import REGISTRY
    x = ctx.input()
    cls, cfg = _inner(ctx.config.get("layer"))
    rule = REGISTRY.get(cls)
    if rule is None or cls in RULES or cls in CELLS:
        ctx.fail(f"wraps a {cls}, not a layer edgelite reads inside TimeDistributed")
    dims = static(ctx, x)
    flat = ctx.reshape(x, (None,) + dims[1:], "Reshape_in")
    inner = replace(ctx, class_name=cls, config=cfg, args=[flat], kwargs={},
                    prefix=f"{ctx.prefix}/{cls.lower()}", _consts={},
                    _weights=ctx._weights.scoped("layer", ""))
    y = rule(inner)
    if not isinstance(y, KTensor):
        ctx.fail(f"the wrapped {cls} gives several outputs")
    out = ctx.reshape(y, (x.shape[0], dims[0]) + y.shape[1:], "Reshape_out")
    return replace(out, mask=x.mask)


RULES = {"Bidirectional": bidirectional, "TimeDistributed": time_distributed}
