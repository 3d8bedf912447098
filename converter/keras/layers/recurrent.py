"""Recurrent layers: LSTM, GRU (both reset_after forms), SimpleRNN, ConvLSTM2D (the
wrappers Bidirectional and TimeDistributed: wrappers.py).

An RNN becomes the loop tf.keras itself freezes to, written as TF1 frame nodes (Enter /
Merge / Switch / NextIteration / Exit / LoopCond, converter/control_flow/functionalize_while
.py): the sequence time-major, one cell step per iteration (GatherV2 of step t, MatMuls,
Split into gates, the activations), the outputs in a TensorList. From there the GraphDef
path applies unchanged: an LSTM with Keras' default activations and no mask fuses into one
UNIDIRECTIONAL_SEQUENCE_LSTM (passes/fuse_lstm_loop.py); the others stay a WHILE loop, as
in TensorFlow's own files. A mask (Embedding mask_zero, Masking) keeps the states and
output of masked steps (Keras' `zero_output_for_mask` writes zeros instead), `go_backwards`
reverses time, `return_sequences` / `return_state` pick the outputs; a `stateful` layer
starts from zero state here (convert with --rnn-state keep to carry it between invokes).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..context import KTensor, LayerCtx, static
from ..graph import VARIANT, FrameWriter
from .activations import activate
from .conv import _Spec, batch_of

I32 = np.dtype(np.int32)
F32 = np.dtype(np.float32)
BOOL = np.dtype(bool)


class Frame:
    """A TF1 while loop `for t in range(steps)` being written: loop variables, invariants,
    and the counter t whose body value is the frame's pivot."""

    def __init__(self, ctx: LayerCtx, steps: int) -> None:
        self.g = ctx.g
        self.name = self.g.unique(f"{ctx.prefix}/while")
        self.cond = self.g.unique(f"{self.name}/LoopCond")
        self._vars: list[tuple[str, str, object]] = []   # (switch, next name, dtype)
        zero = self.g.const(f"{self.name}/t0", np.int32(0))
        self.t, t_merge = self._var(zero, I32, "t")
        limit = self.invariant(self.g.const(f"{self.name}/steps", np.int32(steps)), I32)
        less = self.g.op(f"{self.name}/Less", "Less", [t_merge, limit], dtype=I32)
        self.g.op(self.cond, "LoopCond", [less], dtype=None, exact=True)
        self.body = FrameWriter(self.g, self.t)

    def _var(self, init: str, dtype, what: str):
        n = f"{self.name}/{what}"
        enter = self.g.op(f"{n}/Enter", "Enter", [init], dtype=dtype, frame_name=self.name,
                          is_constant=False, parallel_iterations=1)
        nxt = self.g.unique(f"{n}/NextIteration")
        merge = self.g.op(f"{n}/Merge", "Merge", [enter, nxt], dtype=dtype, N=2)
        switch = self.g.op(f"{n}/Switch", "Switch", [merge, self.cond], dtype=dtype)
        body = self.g.op(f"{n}/Identity", "Identity", [f"{switch}:1"], dtype=dtype)
        self._vars.append((switch, nxt, dtype))
        return body, merge

    def var(self, init: str, dtype=F32, what="state") -> str:
        """A loop variable starting at `init`; returns its value in the body."""
        return self._var(init, dtype, what)[0]

    def invariant(self, ref: str, dtype=F32) -> str:
        return self.g.op(f"{self.name}/Enter_const", "Enter", [ref], dtype=dtype,
                         frame_name=self.name, is_constant=True, parallel_iterations=1)

    def close(self, nexts: list[str]) -> list[str]:
        """Each loop variable's next value (after the counter's, added here); returns the
        values after the loop, in the order the variables were made (counter first)."""
        one = self.body.const(f"{self.name}/one", np.int32(1))
        nexts = [self.g.op(f"{self.name}/t_next", "AddV2", [self.t, one], dtype=I32)] + nexts
        exits = []
        for (switch, nxt, dtype), ref in zip(self._vars, nexts):
            self.g.op(nxt, "NextIteration", [ref], dtype=dtype, exact=True)
            exits.append(self.g.op(f"{self.name}/Exit", "Exit", [switch], dtype=dtype))
        return exits


# the cells: one step, on body refs -------------------------------------------------------
def _act(b: LayerCtx, ref: str, spec, units: int) -> str:
    return activate(b, KTensor(ref, (None, units)), spec).ref


def _matmul(b: LayerCtx, a: str, w: str, name="MatMul") -> str:
    return b.op(name, "MatMul", [a, w], transpose_a=False, transpose_b=False)


def _split(b: LayerCtx, z: str, n: int, axis: int = 1) -> list[str]:
    s = b.op("split", "Split", [b.g.const(f"{b.prefix}/split_dim", np.int32(axis)), z],
             num_split=n)
    return [s if k == 0 else f"{s}:{k}" for k in range(n)]


def _lstm_gates(b, parts, c, cfg, units):
    """Keras' LSTM cell from its four gate sums (i, f, g, o): c' = f c + i act(g),
    h' = o act(c')."""
    zi, zf, zg, zo = parts
    rec, act = cfg.get("recurrent_activation", "sigmoid"), cfg.get("activation", "tanh")
    i, f, o = (_act(b, r, rec, units) for r in (zi, zf, zo))
    c2 = b.op("add_1", "AddV2", [b.op("mul", "Mul", [f, c]),
                                 b.op("mul_1", "Mul", [i, _act(b, zg, act, units)])])
    h2 = b.op("mul_2", "Mul", [o, _act(b, c2, act, units)])
    return h2, [h2, c2]


def lstm_step(b, x, states, w, cfg, units):
    h, c = states
    z = b.op("add", "AddV2", [_matmul(b, x, w["kernel"]),
                              _matmul(b, h, w["recurrent_kernel"], "MatMul_1")])
    if "bias" in w:
        z = b.op("BiasAdd", "BiasAdd", [z, w["bias"]])
    return _lstm_gates(b, _split(b, z, 4), c, cfg, units)


def gru_step(b, x, states, w, cfg, units):
    (h,) = states
    rec, act = cfg.get("recurrent_activation", "sigmoid"), cfg.get("activation", "tanh")
    xz = _matmul(b, x, w["kernel"])
    if cfg.get("reset_after", True):
        hz = _matmul(b, h, w["recurrent_kernel"], "MatMul_1")
        if "bias" in w:
            xz = b.op("BiasAdd", "BiasAdd", [xz, w["bias"]])
            hz = b.op("BiasAdd_1", "BiasAdd", [hz, w["recurrent_bias"]])
        x_z, x_r, x_h = _split(b, xz, 3)
        h_z, h_r, h_h = _split(b, hz, 3)
        z = _act(b, b.op("add", "AddV2", [x_z, h_z]), rec, units)
        r = _act(b, b.op("add_1", "AddV2", [x_r, h_r]), rec, units)
        hh = _act(b, b.op("add_2", "AddV2", [x_h, b.op("mul", "Mul", [r, h_h])]), act, units)
    else:
        if "bias" in w:
            xz = b.op("BiasAdd", "BiasAdd", [xz, w["bias"]])
        x_z, x_r, x_h = _split(b, xz, 3)
        u_z, u_r, u_h = w["recurrent_parts"]
        z = _act(b, b.op("add", "AddV2", [x_z, _matmul(b, h, u_z, "MatMul_z")]), rec, units)
        r = _act(b, b.op("add_1", "AddV2", [x_r, _matmul(b, h, u_r, "MatMul_r")]), rec, units)
        rh = b.op("mul", "Mul", [r, h])
        hh = _act(b, b.op("add_2", "AddV2", [x_h, _matmul(b, rh, u_h, "MatMul_h")]), act, units)
    one = b.g.const(f"{b.prefix}/one", np.float32(1.0))
    h2 = b.op("add_3", "AddV2", [b.op("mul_1", "Mul", [z, h]),
                                 b.op("mul_2", "Mul", [b.op("sub", "Sub", [one, z]), hh])])
    return h2, [h2]


def simple_step(b, x, states, w, cfg, units):
    (h,) = states
    z = _matmul(b, x, w["kernel"])
    if "bias" in w:
        z = b.op("BiasAdd", "BiasAdd", [z, w["bias"]])
    z = b.op("add", "AddV2", [z, _matmul(b, h, w["recurrent_kernel"], "MatMul_1")])
    h2 = _act(b, z, cfg.get("activation", "tanh"), units)
    return h2, [h2]


def conv_lstm_step(b, x, states, w, cfg, units):
    """ConvLSTM2D: the LSTM gates from conv(x, kernel) + conv(h, recurrent_kernel) (the
    recurrent conv 'same', stride 1), split on the channel axis."""
    h, c = states
    spec = w["spec"]
    zx = b.op("conv", "Conv2D", [x, w["kernel"]], **spec.attrs())
    zh = b.op("conv_recurrent", "Conv2D", [h, w["recurrent_kernel"]], strides=[1, 1, 1, 1],
              dilations=[1, 1, 1, 1], padding="SAME", data_format="NHWC")
    z = b.op("add", "AddV2", [zx, zh])
    if "bias" in w:
        z = b.op("BiasAdd", "BiasAdd", [z, w["bias"]], data_format="NHWC")
    return _lstm_gates(b, _split(b, z, 4, axis=3), c, cfg, units)


# class -> (step, number of states, gates, input rank)
CELLS = {"LSTM": (lstm_step, 2, 4, 3), "GRU": (gru_step, 1, 3, 3),
         "SimpleRNN": (simple_step, 1, 1, 3), "ConvLSTM2D": (conv_lstm_step, 2, 4, 5)}


def _weights(ctx: LayerCtx, cls: str, cfg: dict, x: KTensor):
    """The cell's weights by name, and the shape of its state (without the batch)."""
    names = ["kernel", "recurrent_kernel"] + (["bias"] if cfg.get("use_bias", True) else [])
    arrays = dict(zip(names, ctx.weights(names, ("cell", ""))))
    gates = CELLS[cls][2]
    if cls == "ConvLSTM2D":
        return arrays, _conv_state(ctx, cfg, x, arrays)
    units, features = int(cfg.get("units")), x.shape[-1]
    if arrays["kernel"].shape != (features, gates * units) or \
            arrays["recurrent_kernel"].shape != (units, gates * units):
        ctx.fail(f"kernels {list(arrays['kernel'].shape)} / "
                 f"{list(arrays['recurrent_kernel'].shape)} do not fit {units} units on "
                 f"{features} features")
    if cls == "GRU" and "bias" in arrays:
        bias = arrays["bias"]
        if cfg.get("reset_after", True):
            if bias.shape != (2, 3 * units):
                ctx.fail(f"bias {list(bias.shape)}: reset_after GRU keeps [2, {3 * units}]")
            arrays["bias"], arrays["recurrent_bias"] = bias[0], bias[1]
    if cls == "GRU" and not cfg.get("reset_after", True):
        u = arrays.pop("recurrent_kernel")
        arrays["recurrent_parts"] = [u[:, k * units:(k + 1) * units] for k in range(3)]
    return arrays, (units,)


def _conv_state(ctx: LayerCtx, cfg: dict, x: KTensor, arrays: dict) -> tuple:
    step = KTensor(x.ref, (x.shape[0],) + x.shape[2:], x.dtype)
    spec = _Spec(replace(ctx, config=cfg), step, 2)
    if spec.padding == "causal":
        ctx.fail("causal padding is for 1-D convolutions")
    filters = int(cfg.get("filters"))
    k, rk = arrays["kernel"], arrays["recurrent_kernel"]
    if k.ndim != 4 or k.shape[2:] != (x.shape[-1], 4 * filters) or \
            rk.shape[2:] != (filters, 4 * filters):
        ctx.fail(f"kernels {list(k.shape)} / {list(rk.shape)} do not fit {filters} filters on "
                 f"{x.shape[-1]} channels")
    arrays["spec"] = spec
    return spec.out_shape(step.shape, filters)[1:]


def run_rnn(ctx: LayerCtx, cls: str, cfg: dict, x: KTensor, go_backwards: bool,
            initial: list | None = None, zero_masked_output: bool = False):
    """The layer's outputs: (every step [B, T, *S] or the last [B, *S], S the state's
    shape) and the final states."""
    step, n_states, _, rank = CELLS[cls]
    if x.rank != rank:
        ctx.fail(f"expects a rank-{rank} [batch, steps, ...] input, got {list(x.shape)}")
    steps = static(ctx, x)[0]
    w, state = _weights(ctx, cls, cfg, x)
    units = state[-1]
    perm = [1, 0] + list(range(2, rank))
    g = ctx.g
    seq = ctx.op("transpose", "Transpose", [x.ref, ctx.int_const("perm", perm)], Tperm=I32)
    mask = None
    if x.mask is not None:
        mask = ctx.op("mask_transpose", "Transpose",
                      [x.mask.ref, ctx.int_const("mask_perm", [1, 0])], dtype=BOOL, Tperm=I32)
    if go_backwards:
        seq = ctx.op("ReverseV2", "ReverseV2", [seq, ctx.int_const("time_axis", [0])],
                     Tidx=I32)
        if mask is not None:
            mask = ctx.op("mask_ReverseV2", "ReverseV2",
                          [mask, ctx.int_const("mask_time_axis", [0])], dtype=BOOL, Tidx=I32)
    dims = ctx.op("zeros/shape", "ConcatV2", [batch_of(ctx, x), ctx.int_const("units", state),
                                              ctx.int_const("zeros/axis", 0)],
                  dtype=I32, N=2, Tidx=I32)
    zeros = ctx.op("zeros", "Fill", [dims, g.const(f"{ctx.prefix}/zero", np.float32(0))],
                   index_type=I32)
    sequences = bool(cfg.get("return_sequences", False))
    element = ctx.int_const("element_shape", [-1, *state])
    if sequences:
        out_list = ctx.op("TensorListReserve", "TensorListReserve",
                          [element, ctx.g.const(f"{ctx.prefix}/num", np.int32(steps))],
                          dtype=None, element_dtype=F32, shape_type=I32)
    consts = {k: ctx.const(f"cell/{k}", v) for k, v in w.items()
              if k not in ("recurrent_parts", "spec")}
    if "recurrent_parts" in w:
        for k, part in enumerate(w["recurrent_parts"]):
            consts[f"recurrent_part_{k}"] = ctx.const(f"cell/recurrent_kernel_{'zrh'[k]}", part)

    loop = Frame(ctx, steps)
    states = [loop.var(initial[k] if initial else zeros, F32, f"state_{k}")
              for k in range(n_states)]
    lst = loop.var(out_list, VARIANT, "outputs") if sequences else None
    seq_in = loop.invariant(seq)
    mask_in = loop.invariant(mask, BOOL) if mask is not None else None
    inv = {k: loop.invariant(v) for k, v in consts.items()}
    if "recurrent_part_0" in inv:
        inv["recurrent_parts"] = [inv.pop(f"recurrent_part_{k}") for k in range(3)]
    inv["spec"] = w.get("spec")
    b = replace(ctx, g=loop.body, prefix=f"{loop.name}/body", _consts={})
    axis0 = b.g.const(f"{b.prefix}/axis", np.int32(0))
    x_t = b.op("GatherV2", "GatherV2", [seq_in, loop.t, axis0], dtype=None, Tparams=F32,
               Tindices=I32, Taxis=I32, batch_dims=0)
    out, new_states = step(b, x_t, states, inv, cfg, units)
    if mask_in is not None:
        m = b.op("mask_t", "GatherV2", [mask_in, loop.t, axis0], dtype=None, Tparams=BOOL,
                 Tindices=I32, Taxis=I32, batch_dims=0)
        m = b.op("mask_t/Reshape", "Reshape",   # [B] -> [B, 1, ...]: broadcast on the state
                 [m, b.g.const(f"{b.prefix}/mask_shape", np.array([-1] + [1] * len(state),
                                                                  np.int32))],
                 dtype=BOOL, Tshape=I32)
        new_states = [b.op("select_state", "SelectV2", [m, new, old])
                      for new, old in zip(new_states, states)]
        held = b.op("zeros_like", "ZerosLike", [out]) if zero_masked_output else states[0]
        out = b.op("select_output", "SelectV2", [m, out, held])
    nexts = list(new_states)
    if sequences:
        nexts.append(b.op("TensorListSetItem", "TensorListSetItem", [lst, loop.t, out],
                          dtype=None, element_dtype=F32))
    exits = loop.close(nexts)
    finals = exits[1:1 + n_states]
    if sequences:
        stacked = ctx.op("TensorListStack", "TensorListStack", [exits[-1], element],
                         dtype=None, element_dtype=F32, num_elements=steps)
        y = ctx.op("transpose_1", "Transpose", [stacked, ctx.int_const("perm_1", perm)],
                   Tperm=I32)
        output = KTensor(y, (x.shape[0], steps, *state), F32, x.mask)
    else:
        output = KTensor(finals[0], (x.shape[0], *state), F32)
    return output, [KTensor(s, (x.shape[0], *state), F32) for s in finals]


def _initial(ctx: LayerCtx) -> list | None:
    init = ctx.kwargs.get("initial_state")
    if init is None and len(ctx.inputs()) > 1:
        init = ctx.inputs()[1:]
    if init is None:
        return None
    init = init if isinstance(init, (list, tuple)) else [init]
    return [t.ref for t in init if isinstance(t, KTensor)]


def rnn(cls: str):
    def rule(ctx: LayerCtx):
        x = ctx.input()
        init = _initial(ctx)
        if init is not None and len(init) != CELLS[cls][1]:
            ctx.fail(f"given {len(init)} initial states, the cell has {CELLS[cls][1]}")
        output, states = run_rnn(ctx, cls, ctx.config, x, bool(ctx.cfg("go_backwards", False)),
                                 init, bool(ctx.cfg("zero_output_for_mask", False)))
        return [output] + states if ctx.cfg("return_state", False) else output
    return rule


RULES = {
    "LSTM": rnn("LSTM"), "GRU": rnn("GRU"), "SimpleRNN": rnn("SimpleRNN"),
    "ConvLSTM2D": rnn("ConvLSTM2D"),
}
