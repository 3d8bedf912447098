"""Fuse a WHILE loop that runs one LSTM step per time step into UNIDIRECTIONAL_SEQUENCE_LSTM.

A Keras LSTM (tf.keras.layers.LSTM, unroll=False) and a TF1 LSTMCell in `dynamic_rnn` freeze
to a loop (converter/lower/functional.py, tensor_lists.py) whose body is one cell step.
TensorFlow's converter fuses the cell only from a live Keras model (its "keras_lstm"
composite function, compiler/mlir/lite/utils/lstm_utils.cc); here the loop itself is read.
The loop must be exactly

  cond  counter < N  (LOGICAL_AND of such LESSes), every counter starting at 0, stepping 1
  body  x_t = GATHER(seq, t)                          seq [T, B, F], t a counter, N = T
        z   = FC(x_t, Wx) + FC(h, Wh) + b             (or FC(CONCAT([x_t, h]), W) + b:
                                                       TF1's LSTMCell), any association
        i, f, g, o = SPLIT(z, 4, axis=-1), each optionally plus a constant (TF1's forget_bias)
        c'  = sigmoid(f) * c + sigmoid(i) * tanh(g)   any operand order
        h'  = sigmoid(o) * tanh(c')
        out = DYNAMIC_UPDATE_SLICE(out, h'[None], [t, 0, 0])  out [T, B, U]: every step
           or DYNAMIC_UPDATE_SLICE(out, h'[None], [0, 0, 0])  out [1, B, U]: the last step
        counters + 1; every other loop variable passed through unchanged

The gates are told apart by the cell's arithmetic, not by their place in the split (Keras
orders them i, f, g, o; TF1 i, g, f, o). The initial h and c must be constant zeros: TFLite
starts the op's state tensors at zero (a variable tensor cannot hold data), and the final c
must be unused after the loop (the op does not output it). Any other activation (Keras
`activation=` / `recurrent_activation=`), a peephole, a clip or any extra loop variable
leaves the loop as it is.

The loop becomes one UNIDIRECTIONAL_SEQUENCE_LSTM laid out as TensorFlow's converter lays
it out (24 inputs: interpreter/kernels/lstm/operands.py; per-gate weights [U, F] / [U, U],
per-gate biases, h and c as variable tensors, no peephole, projection or layer norm). When
the sequence is TRANSPOSE(x, [1, 0, 2]) -- Keras' time-major view of its [B, T, F] input --
the op reads x with time_major=False and the transpose goes (a REVERSE_V2 over time in
between, Keras' go_backwards, becomes a REVERSE_V2 over axis 1 of x). What read the loop's
results reads the op's: the final h is the output's last step (a STRIDED_SLICE), the list of
every step is the output (transposed back when batch-major), a list of one step is the last
step; Keras' `outputs[-1]` and TF1's stacking GATHER + TRANSPOSE are absorbed.

The op keeps h and c in variable tensors from one invoke() to the next (TensorFlow's Keras-
path files do too); the loop starts from zero on every call. After quantization
reset_state.py writes zero into the state tensors in front of the op on every invoke, so
the model computes the graph's function; `--rnn-state keep` leaves them carried over (a
streaming model: call reset_all_variables() between independent sequences). With
--quantize int8 the op becomes TFLite's integer LSTM (quantize/lstm.py); with uint8 and
int16x8, which have no integer sequence-LSTM kernel, the converter leaves this pass off and
the loop itself quantizes to all-integer ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Activation, Graph, Op, Tensor
from ..shape_inference import infer_op_shapes
from .loops import counters as _counters, int_constant as _int_constant, ints as _ints
from .loops import takes_item, trip_count as _trip_count
from .patterns import other_input

GATES = ("input", "forget", "cell", "output")   # TFLite's operand order (lstm/operands.py)
SIGMOID, TANH = "LOGISTIC", "TANH"


def _producer(graph: Graph, t: Tensor | None, *types: str) -> Op | None:
    """The op of one of `types` producing `t` (read by anything: the whole body goes)."""
    op = None if t is None or t.is_const else graph.producer(t)
    if op is None or op.type not in types:
        return None
    if op.options.get("fused_activation_function", Activation.NONE) != Activation.NONE:
        return None
    return op


def _operands(graph: Graph, t: Tensor, type_: str, a: tuple, b: tuple):
    """(x, y) if t = type_(a0(x), b0(y)) in either operand order, where a = (a0, ...) and
    b = (b0, ...) name the producers' types (an empty tuple: the operand as it is)."""
    op = _producer(graph, t, type_)
    if op is None or len(op.inputs) != 2:
        return None
    for p, q in (op.inputs, op.inputs[::-1]):
        x = _through(graph, p, a)
        y = _through(graph, q, b)
        if x is not None and y is not None:
            return x, y
    return None


def _through(graph: Graph, t: Tensor, types: tuple) -> Tensor | None:
    """The input of the op of `types` producing `t`; `t` itself for an empty `types`."""
    if not types:
        return t
    op = _producer(graph, t, *types)
    return op.inputs[0] if op is not None else None


# -- the cell ---------------------------------------------------------------------------------
@dataclass
class _Cell:
    """One matched LSTM step: the gates' pre-activations, the c it reads and c'."""

    pre: dict[str, Tensor]   # gate -> its pre-activation
    c: Tensor                # the c the step reads (a body input)
    c_new: Tensor


def _match_cell(body: Graph, h_new: Tensor) -> _Cell | None:
    """h' = sigmoid(o) * tanh(c'), c' = sigmoid(f) * c + sigmoid(i) * tanh(g)."""
    out = _operands(body, h_new, "MUL", (SIGMOID,), (TANH,))
    if out is None:
        return None
    o, c_new = out
    add = _producer(body, c_new, "ADD")
    if add is None:
        return None
    for keep, update in (add.inputs, add.inputs[::-1]):
        ig = _operands(body, update, "MUL", (SIGMOID,), (TANH,))
        fc = _operands(body, keep, "MUL", (SIGMOID,), ())
        if ig is not None and fc is not None and body.is_input(fc[1]):
            return _Cell(dict(input=ig[0], forget=fc[0], cell=ig[1], output=o), fc[1], c_new)
    return None


def _gate_rows(body: Graph, cell: _Cell) -> tuple[Tensor, dict] | None:
    """z and, per gate, (its block of z's last axis, a constant added to it) when every
    pre-activation is a distinct output of one 4-way SPLIT of z on the last axis."""
    split, rows = None, {}
    for gate, t in cell.pre.items():
        extra = np.float32(0)
        add = _producer(body, t, "ADD")
        if add is not None:
            c = next((x for x in add.inputs if x.is_const), None)
            if c is None or c.data.dtype != np.float32 or t.shape is None or \
                    c.data.size not in (1, t.shape[-1]):
                return None
            extra, t = c.data.reshape(-1), other_input(add, c)
        op = _producer(body, t, "SPLIT")
        if op is None or (split is not None and op is not split):
            return None
        split = op
        rows[gate] = (list(op.outputs).index(t), extra)
    z, axis = split.inputs[1], _int_constant(split.inputs[0])
    if axis not in (1, -1) or z.shape is None or len(z.shape) != 2 or \
            split.options.get("num_splits") != 4 or len({r for r, _ in rows.values()}) != 4:
        return None
    return z, rows


@dataclass
class _Affine:
    """z = x_t Wx^T + h Wh^T + b as constants ([4U, F], [4U, U], [4U])."""

    wx: np.ndarray
    wh: np.ndarray
    b: np.ndarray
    gather: Op       # x_t = GATHER(seq, t)


def _match_affine(body: Graph, z: Tensor, h: Tensor) -> _Affine | None:
    """Sum the terms of z: FULLY_CONNECTEDs of x_t, of h or of CONCAT([x_t, h]) with
    constant weights (and biases), and constants, through ADDs."""
    rows = z.shape[-1]
    parts = {"x": [], "h": [], "b": [np.zeros(rows)]}
    gathers: list[Op] = []
    stack = [z]
    while stack:
        t = stack.pop()
        if t.is_const:
            if t.data.dtype != np.float32 or t.data.size not in (1, rows):
                return None
            parts["b"].append(np.broadcast_to(t.data.reshape(-1), (rows,)))
            continue
        add = _producer(body, t, "ADD")
        if add is not None:
            stack.extend(add.inputs)
            continue
        if not _fc_term(body, t, h, rows, parts, gathers):
            return None
    if len(gathers) != 1 or len(parts["x"]) != 1 or len(parts["h"]) != 1:
        return None
    return _Affine(parts["x"][0], parts["h"][0], sum(parts["b"]), gathers[0])


def _fc_term(body: Graph, t: Tensor, h: Tensor, rows: int, parts: dict, gathers: list) -> bool:
    fc = _producer(body, t, "FULLY_CONNECTED")
    if fc is None or fc.options.get("keep_num_dims") or fc.options.get("weights_format", 0):
        return False
    w = fc.inputs[1]
    bias = fc.inputs[2] if len(fc.inputs) > 2 else None
    if not w.is_const or w.data.dtype != np.float32 or w.data.ndim != 2 or \
            w.data.shape[0] != rows or (bias is not None and not bias.is_const):
        return False
    if bias is not None:
        parts["b"].append(bias.data.reshape(-1))
    x = fc.inputs[0]
    concat = _producer(body, x, "CONCATENATION")
    pieces = list(concat.inputs) if concat is not None and \
        concat.options.get("axis") in (1, -1) else [x]
    col = 0
    for piece in pieces:
        width = piece.shape[-1] if piece.shape is not None else None
        if width is None:
            return False
        block = w.data[:, col:col + width]
        col += width
        gather = _producer(body, piece, "GATHER")
        if piece is h:
            parts["h"].append(block)
        elif gather is not None and body.is_input(gather.inputs[0]) and \
                body.is_input(gather.inputs[1]) and gather.options.get("axis", 0) == 0 and \
                not gather.options.get("batch_dims"):
            parts["x"].append(block)
            gathers.append(gather)
        else:
            return False
    return col == w.data.shape[1]


# -- the loop ---------------------------------------------------------------------------------
@dataclass
class _Loop:
    """A WHILE matched as an LSTM over its whole sequence, by loop-variable position."""

    op: Op
    seq: int
    h: int
    c: int
    out: int | None          # the list of h written every step; None: only h is read
    every_step: bool         # out holds every step (else: a list of one, the last step)
    counters: frozenset[int]
    steps: int
    affine: _Affine
    rows: dict


def _written_at(body: Graph, start: Tensor, counters: frozenset[int]) -> bool | None:
    """True if `start` is [t, 0, 0] for a counter t, False if [0, 0, 0], else None."""
    if start.is_const:
        return False if not np.asarray(start.data).any() else None
    concat = _producer(body, start, "CONCATENATION")
    if concat is None or len(concat.inputs) != 2 or not concat.inputs[1].is_const or \
            np.asarray(concat.inputs[1].data).any():
        return None
    head = _through(body, concat.inputs[0], ("RESHAPE", "EXPAND_DIMS"))
    return True if head is not None and body.is_input(head) and \
        list(body.inputs).index(head) in counters else None


def _match_loop(graph: Graph, loop: Op) -> _Loop | None:
    """The loop as an LSTM: by the list it writes h' into (every step, or the last one), or,
    when nothing writes a list (prune_loop_vars dropped an unread one), by h' itself."""
    body, cond = loop.subgraphs["body"], loop.subgraphs["cond"]
    if any(OPS[op.type].stateful for g in (body, cond) for op in g.ops if op.type in OPS):
        return None
    counters = _counters(loop, body)
    steps = _trip_count(cond, counters) or 0
    for k, new in enumerate(body.outputs):
        dus = _producer(body, new, "DYNAMIC_UPDATE_SLICE")
        if dus is None or dus.inputs[0] is not body.inputs[k]:
            continue
        h_new = _through(body, dus.inputs[1], ("EXPAND_DIMS", "RESHAPE"))
        every_step = _written_at(body, dus.inputs[2], counters)
        row = (1, *h_new.shape) if h_new is not None and h_new.shape is not None else None
        if row != dus.inputs[1].shape or every_step is None:
            continue   # h' written as one [1, B, U] item, at [t, 0, 0] or [0, 0, 0]
        found = _match_step(body, h_new)
        if found is not None:
            h, c, affine, rows, t = found
            m = _Loop(loop, t[0], h, c, k, every_step, counters, steps, affine, rows)
            return m if _loop_fits(graph, m, t[1]) else None
    for h_new in body.outputs:
        found = _match_step(body, h_new)
        if found is not None:
            h, c, affine, rows, t = found
            m = _Loop(loop, t[0], h, c, None, False, counters, steps, affine, rows)
            return m if _loop_fits(graph, m, t[1]) else None
    return None


def _match_step(body: Graph, h_new: Tensor):
    """(h, c, affine, gate rows, (seq, t)) -- loop-variable positions -- when h_new is
    the h' of one LSTM step that the body also returns as a state."""
    cell = h_new is not None and _match_cell(body, h_new)
    gates = cell and _gate_rows(body, cell)
    if not gates or h_new not in body.outputs:
        return None
    position = {id(t): k for k, t in enumerate(body.inputs)}
    h = body.outputs.index(h_new)
    c = position[id(cell.c)]
    affine = _match_affine(body, gates[0], body.inputs[h])
    if affine is None or body.outputs[c] is not cell.c_new:
        return None
    return h, c, affine, gates[1], tuple(position[id(x)] for x in affine.gather.inputs)


def _loop_fits(graph: Graph, m: _Loop, t: int) -> bool:
    """The loop covers the whole sequence, starts from zero state, carries nothing else and
    leaves c unread; the shapes and types are a float LSTM's."""
    loop, body = m.op, m.op.subgraphs["body"]
    seq = loop.inputs[m.seq]
    listed = set() if m.out is None else {m.out}
    passed = {k for k, (i, o) in enumerate(zip(body.inputs, body.outputs)) if i is o}
    if t not in m.counters or m.seq not in passed or seq.shape is None or \
            len(seq.shape) != 3 or seq.dtype != np.float32 or m.steps != seq.shape[0] or \
            m.steps < 1 or graph.use_count(loop.outputs[m.c]):
        return False
    if set(range(len(body.outputs))) != passed | m.counters | {m.h, m.c} | listed:
        return False
    batch, units = seq.shape[1], m.affine.wh.shape[1]
    for k in (m.h, m.c):
        init = loop.inputs[k]
        if not init.is_const or init.data.dtype != np.float32 or init.data.any() or \
                tuple(init.shape) != (batch, units):
            return False
    if m.out is not None:
        out, length = loop.inputs[m.out], m.steps if m.every_step else 1
        if out.shape is None or tuple(out.shape) != (length, batch, units):
            return False
    return m.affine.wh.shape[0] == 4 * units and m.affine.wx.shape[1] == seq.shape[2]


# -- the rewrite ------------------------------------------------------------------------------
def _batch_major_source(graph: Graph, seq: Tensor, before: Op) -> Tensor | None:
    """The [B, T, F] tensor x when seq = TRANSPOSE(x, [1, 0, 2]) (a new REVERSE_V2 over
    axis 1 of x when seq = REVERSE_V2(that, [0])), else None."""
    rev = _producer(graph, seq, "REVERSE_V2")
    inner = rev.inputs[0] if rev is not None and _ints(rev.inputs[1]) == [0] else seq
    tr = _producer(graph, inner, "TRANSPOSE")
    if tr is None or _ints(tr.inputs[1]) != [1, 0, 2]:
        return None
    x = tr.inputs[0]
    if rev is None:
        return x
    out = graph.tensor(f"{rev.outputs[0].name}/batch_major", x.dtype, tuple(x.shape))
    graph.insert_op(Op("REVERSE_V2", [x, graph.const(f"{out.name}/axis", np.int32([1]))],
                       [out], {}, rev.name, origin=rev.origin), before)
    return out


def _lstm_operands(graph: Graph, m: _Loop, name: str) -> list[Tensor | None]:
    """Inputs 1-17 of the op: per-gate weights and biases (TFLite's [U, F] / [U, U]
    blocks of z's rows), no peephole or projection."""
    units = m.affine.wh.shape[1]
    blocks = {gate: slice(row * units, (row + 1) * units) for gate, (row, _) in m.rows.items()}

    def per_gate(what, data_of):
        return [graph.const(f"{name}/{what.format(g)}", data_of(g).astype(np.float32))
                for g in GATES]
    wx = per_gate("input_to_{}_weights", lambda g: m.affine.wx[blocks[g]])
    wh = per_gate("recurrent_to_{}_weights", lambda g: m.affine.wh[blocks[g]])
    bias = per_gate("{}_gate_bias",
                    lambda g: m.affine.b[blocks[g]] + np.broadcast_to(m.rows[g][1], (units,)))
    return [*wx, *wh, None, None, None, *bias, None, None]


def _fuse(graph: Graph, m: _Loop) -> None:
    """Put the op (and what stands for the loop's h and list outputs) in front of the loop,
    then remove the loop: its output tensors, names and readers pass to the new ops."""
    loop = m.op
    seq = loop.inputs[m.seq]
    steps, batch, units = seq.shape[0], seq.shape[1], m.affine.wh.shape[1]
    x = _batch_major_source(graph, seq, loop)
    time_major = x is None
    name = loop.name or loop.outputs[m.h].name
    states = []
    for role in ("output_state", "cell_state"):
        s = graph.tensor(f"{name}/{role}", np.float32, (batch, units))
        s.is_variable = True
        states.append(s)
    y = graph.tensor(f"{name}/sequence_lstm", np.float32,
                     (steps, batch, units) if time_major else (batch, steps, units))
    options = dict(fused_activation_function=Activation.TANH, cell_clip=0.0, proj_clip=0.0,
                   time_major=time_major, asymmetric_quantize_inputs=False,
                   diagonal_recurrent_tensors=False)
    inputs = [seq if time_major else x, *_lstm_operands(graph, m, name), *states,
              None, None, None, None]
    graph.insert_op(Op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], options, loop.name,
                       origin=loop.origin), loop)
    last = _emit(graph, loop, "STRIDED_SLICE", *_last_step(graph, y, time_major, name))
    if m.out is None:
        items = None
    elif m.every_step and time_major:
        items = y
    elif m.every_step:
        items = _emit(graph, loop, "TRANSPOSE", [y, graph.const(f"{name}/perm",
                                                                np.int32([1, 0, 2]))])
    else:
        items = _emit(graph, loop, "EXPAND_DIMS", [last, graph.const(f"{name}/axis",
                                                                     np.int32(0))])
    for k in m.counters:   # a counter leaves the loop equal to the number of steps
        if graph.use_count(loop.outputs[k]):
            graph.replace_uses(loop.outputs[k], graph.const(
                loop.outputs[k].name, np.asarray(steps, loop.outputs[k].dtype)))
    for k, (init, out) in enumerate(zip(loop.inputs, loop.outputs)):
        if k not in m.counters and k not in (m.h, m.c, m.out):   # (m.out may be None)
            graph.replace_uses(out, init)   # passed through unchanged
    graph.remove_op(loop)
    final_h = loop.outputs[m.h]
    _take_over(graph, last, final_h)
    if items is None:
        graph.remove_dead_ops([final_h, *loop.inputs])
        return
    listed = loop.outputs[m.out]
    _take_over(graph, items, listed)
    y = listed if items is y else y
    _absorb_readers(graph, listed, final_h, y, m.every_step, time_major)
    graph.remove_dead_ops([listed, final_h, *loop.inputs])


def _emit(graph: Graph, before: Op, type_: str, inputs, options=None) -> Tensor:
    """A new op in front of `before`; its one output, of the shape its kernel gives."""
    out = graph.tensor(f"{before.name}/{type_.lower()}", inputs[0].dtype)
    op = graph.insert_op(Op(type_, inputs, [out], dict(options or {}), before.name), before)
    infer_op_shapes(op)
    return out


def _take_over(graph: Graph, new: Tensor, old: Tensor) -> None:
    """The op producing `new` produces `old` instead (a removed op's output, which keeps
    its name, readers and place among the graph's outputs)."""
    graph.replace_uses(new, old)
    op = graph.producer(new)
    op.outputs = [old if t is new else t for t in op.outputs]
    old.shape = new.shape


def _last_step(graph: Graph, y: Tensor, time_major: bool, name: str):
    """STRIDED_SLICE inputs and options taking the op's output at the last step, the time
    axis shrunk (as TensorFlow's converter writes Keras' outputs[-1])."""
    axis = 0 if time_major else 1
    steps = y.shape[axis]
    begin, end = [0, 0, 0], [0, 0, 0]
    begin[axis], end[axis] = steps - 1, steps
    others = 0b111 & ~(1 << axis)   # begin / end masks: the other axes whole
    consts = [graph.const(f"{name}/{what}", np.int32(v))
              for what, v in (("begin", begin), ("end", end), ("strides", [1, 1, 1]))]
    return [y, *consts], dict(begin_mask=others, end_mask=others, ellipsis_mask=0,
                              new_axis_mask=0, shrink_axis_mask=1 << axis, offset=False)


def _absorb_readers(graph: Graph, listed: Tensor, final_h: Tensor, y: Tensor,
                    every_step: bool, time_major: bool) -> None:
    """Readers of the list that only undo its layout read the op's results instead: its
    last item -> final_h; GATHER of all items in order -> the list; TRANSPOSE back to
    batch-major -> y."""
    items = listed.shape[0]
    stack = [listed]
    while stack:
        t = stack.pop()
        for op in graph.consumers(t):
            if takes_item(op, items - 1, items):
                graph.bypass(op, final_h)
            elif every_step and op.type == "GATHER" and op.inputs[0] is t and \
                    op.options.get("axis", 0) == 0 and _ints(op.inputs[1]) == list(range(items)):
                graph.bypass(op, t)
                stack.append(t)
            elif every_step and not time_major and op.type == "TRANSPOSE" and \
                    _ints(op.inputs[1]) == [1, 0, 2]:
                graph.bypass(op, y)


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("WHILE"):
        m = _match_loop(graph, op)
        if m is not None:
            _fuse(graph, m)
            n += 1
    return n
