"""The classifier head of an int8 sequence model runs 16x8 by default.

A sequence model (one with a fused sequence LSTM) that ends in a SOFTMAX gives
probabilities whose error the int8 head sets: the logits are int8 within their calibrated
range and a held-out window whose top logit goes past it is clipped there (text_lstm: 3 of
64 held-out windows past the 64 calibration windows' max, 23.8 dB at the output with every
LSTM float; its SQNR on the calibration windows themselves: 34.2 dB). Run 16x8 (int16
activations, the same int8 weights, int64 biases; QUANTIZE int8 -> int16 in front, LiteRT
and TFLite Micro have the kernels) the logits are 256x finer and the range symmetric:
37.9 dB there, for two QUANTIZE ops and a few hundred bytes. ``head_ops`` names the ops:
each SOFTMAX giving a model output, the ops between it and the op computing its logits
(reshapes, which take the logits' parameters) and that op, as far as each has a 16x8 kernel.
``QuantizeOptions.sequence_head`` ("int8") keeps TensorFlow's all-int8 head.
"""

from __future__ import annotations

from ..ir import Graph, Op
from .rules import INT16_OPS, RECURRENT, SAME_AS_INPUT


def is_sequence_model(graph: Graph) -> bool:
    return any(op.type in RECURRENT for op in graph.ops)


def head_ops(graph: Graph) -> frozenset[str]:
    """Output names of the ops to run 16x8 (see the module docstring); none outside
    sequence models."""
    if not is_sequence_model(graph):
        return frozenset()
    names: set[str] = set()
    for out in graph.outputs:
        op: Op | None = graph.producer(out)
        if op is None or op.type != "SOFTMAX" or op.type not in INT16_OPS:
            continue
        names.add(op.outputs[0].name)
        op = graph.producer(op.inputs[0])
        while op is not None and op.type in SAME_AS_INPUT and op.type in INT16_OPS:
            names.add(op.outputs[0].name)
            op = graph.producer(op.inputs[0])
        if op is not None and op.type in INT16_OPS and op.type not in RECURRENT:
            names.add(op.outputs[0].name)
    return frozenset(names)
