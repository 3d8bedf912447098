"""Start every op that keeps state in variable tensors from zero state on every invoke.

TFLite's sequence LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM, as fuse_lstm_loop writes it) keeps h
and c in variable tensors: LiteRT and TFLite Micro zero them at allocate_tensors() /
reset_all_variables() and the op leaves its final state in them, so the next invoke() goes
on from where the last one stopped. The TensorFlow graph it came from starts every call
from zero state. To compute the graph's function on every invoke, each state tensor is
written with real zero just before the op reads it:

    state = SUB(z, z)        z: a variable tensor of the state's dtype, shape and
                             quantization that no op writes

z is zero (its zero point) from allocation on, and as a variable (not a constant) LiteRT
never folds the SUB at prepare time, so it runs on every invoke and gives exactly 0.0 in
float and exactly the state's zero point in int8 / int16 (x - x requantizes to 0: both
inputs are scaled by the same multiplier before the subtraction; add.cc / sub.cc, TFLM
sub.cc). Not ZEROS_LIKE: LiteRT has it for float32 / int32 / int64 only. Not
SUB(state, state) -> state: LiteRT refuses a tensor that is an op's input and output.

It runs once, after quantization (the states' final types are known then); convert's
`rnn_state=RnnState.KEEP` (`--rnn-state keep`) leaves it out for a streaming model that
carries its state from one invoke to the next, as TensorFlow's own Keras-path files do.
"""

from __future__ import annotations

import copy

import numpy as np

from ..ir import Activation, Graph, Op, Tensor, all_graphs


def _unwritten_variables(g: Graph, op: Op) -> list[Tensor]:
    """The variable tensors `op` reads that no op of its graph writes: its state (none for
    an op that writes a variable tensor itself, as the resets do)."""
    seen, out = set(), []
    if any(t.is_variable for t in op.outputs):
        return out
    for t in op.inputs:
        if t is not None and t.is_variable and g.producer(t) is None and id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def stateful_ops(graph: Graph) -> list[Op]:
    """The ops, in every graph, that keep state in variable tensors."""
    return [op for g in all_graphs(graph) for op in g.ops if _unwritten_variables(g, op)]


def run(graph: Graph) -> int:
    """Insert the resets; return how many state tensors are reset."""
    n = 0
    for g in all_graphs(graph):
        for op in [op for op in g.ops if _unwritten_variables(g, op)]:
            for state in _unwritten_variables(g, op):
                z = g.tensor(f"{state.name}/zero", np.dtype(state.dtype), tuple(state.shape))
                z.is_variable = True
                z.quant = copy.deepcopy(state.quant)
                g.insert_op(Op("SUB", [z, z], [state],
                               {"fused_activation_function": Activation.NONE},
                               f"{op.name}/reset_state", origin=op.origin), op)
                n += 1
    return n
