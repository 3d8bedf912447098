"""Fuse a standalone RELU / RELU6 / RELU_N1_TO_1 into the op before it.

Pattern: op with a fused_activation_function of NONE -> activation, where the op's output feeds
only the activation. TANH is not fused: LiteRT's float kernels ignore a fused TANH (their
CalculateActivationRange only clamps for the RELU family), so fusing it would change results.
"""

from __future__ import annotations

from ...interpreter.kernels import OPS
from ..ir import Activation, Graph
from .patterns import sole_producer

# Ops that are a fused activation (OpDef.activation): RELU, RELU6, RELU_N1_TO_1.
FUSABLE_ACTIVATIONS = {n: Activation(op.activation) for n, op in OPS.items()
                       if op.activation is not None}
# Ops whose TFLite kernels apply fused_activation_function.
TAKES_ACTIVATION = frozenset(n for n, op in OPS.items() if op.fused_activation)


def run(graph: Graph) -> int:
    n = 0
    for act in graph.ops_of(*FUSABLE_ACTIVATIONS):
        prev = sole_producer(graph, act.inputs[0], TAKES_ACTIVATION)
        if prev is None or prev.options.get("fused_activation_function") != Activation.NONE:
            continue
        prev.options["fused_activation_function"] = FUSABLE_ACTIVATIONS[act.type]
        graph.bypass(act, prev.outputs[0])
        n += 1
    return n
