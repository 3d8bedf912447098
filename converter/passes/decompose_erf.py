"""Write the ERF / ERFC left after identify_gelu as TFLite builtins.

TFLite has no erf (TF's converter needs FlexErf / FlexErfc for a bare one). With z = |x| and
t = 1 / (1 + z / 2), erfc(z) = t exp(-z^2 + P(t)) for the degree-9 polynomial P of Press et
al., Numerical Recipes 2nd ed. section 6.2 (erfcc; fractional error below 1.2e-7 for every
z >= 0, the formula the interpreter's float GELU uses); then
  erf(x)  = sign(x) (1 - erfc(|x|))      erfc(x) = 1 - erf(x).
29 float ops for erf (ABS; MUL, ADD, DIV for t; 18 for P; MUL, SUB, EXP, MUL; SUB, SIGN, MUL),
30 for erfc.
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph, Op

# P(t) coefficients, constant term first (Numerical Recipes erfcc)
ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
               -1.13520398, 1.48851587, -0.82215223, 0.17087277)


class _Chain:
    """Adds element-wise float ops before `before`, each output shaped like x."""

    def __init__(self, graph: Graph, before: Op, x) -> None:
        self.graph, self.before, self.x, self.k = graph, before, x, 0

    def __call__(self, type_: str, *inputs):
        self.k += 1
        args = [self.graph.const(f"{self.before.name}/erf_c{self.k}", np.float32(v))
                if isinstance(v, float) else v for v in inputs]
        out = self.graph.tensor(f"{self.before.name}/erf_{self.k}", np.float32, self.x.shape)
        options = (dict(fused_activation_function=Activation.NONE)
                   if type_ in ("ADD", "SUB", "MUL", "DIV") else {})
        self.graph.insert_op(Op(type_, args, [out], options, self.before.name,
                                origin=self.before.origin), before=self.before)
        return out


def _decompose(graph: Graph, op: Op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    f = _Chain(graph, op, x)
    z = f("ABS", x)
    t = f("DIV", 1.0, f("ADD", f("MUL", z, 0.5), 1.0))
    p = f("MUL", t, ERFC_COEFFS[-1])
    for c in ERFC_COEFFS[-2:0:-1]:
        p = f("MUL", f("ADD", p, c), t)
    p = f("ADD", p, ERFC_COEFFS[0])
    erfc_abs = f("MUL", t, f("EXP", f("SUB", p, f("MUL", z, z))))
    erf_abs = f("SUB", 1.0, erfc_abs)
    r = f("MUL", f("SIGN", x), erf_abs)
    if op.type == "ERFC":
        r = f("SUB", 1.0, r)
    graph.remove_op(op)
    graph.replace_uses(y, r)
    r.name = y.name


def run(graph: Graph) -> int:
    ops = graph.ops_of("ERF", "ERFC")
    for op in ops:
        _decompose(graph, op)
    return len(ops)
