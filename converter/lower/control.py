"""Static control flow: Switch / Merge (TF1 tf.cond) on a predicate that is constant.

Switch(data, pred) forwards data to output 1 when pred is true and output 0 when false; the
other output is "dead", and so is every node reading a dead tensor -- except Merge, which
forwards its one live input. With pred constant (is_training=False frozen in), the whole
cond resolves at conversion time and no control flow reaches the model.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import UnsupportedOpError
from edgelite.names import quoted
from ..graphdef import TensorRef, data_inputs
from .context import LowerCtx, fail
from .spec import ANY, BOOL, In, Lowering, spec


def switch(ctx: LowerCtx, node) -> None:
    data, pred = ctx.input(node, 0), ctx.input(node, 1)
    if not pred.is_const:
        raise fail(UnsupportedOpError, node,
                   f"the condition {quoted(pred.name)} is only known at run time; TFLite has "
                   "no Switch/Merge. Freeze the condition (e.g. is_training=False) or name "
                   "the branch's tensors as --inputs/--outputs.")
    taken = 1 if bool(np.asarray(pred.data).reshape(-1)[0]) else 0
    ctx.alias(node, data, index=taken)
    ctx.dead_refs.add(TensorRef(node.name, 1 - taken).name)


def merge(ctx: LowerCtx, node) -> None:
    live = [(k, r) for k, r in enumerate(data_inputs(node)) if not ctx.is_dead_ref(r)]
    if len(live) != 1:
        raise fail(UnsupportedOpError, node,
                   f"has {len(live)} live inputs; only a tf.cond whose condition is a "
                   "constant can be converted")
    k, ref = live[0]
    ctx.alias(node, ctx.tensor_of(node, k, ref))
    ctx.alias(node, ctx.const(node, "value_index", np.int32(k)), index=1)


RULES = {
    "Switch": Lowering(switch, spec(In("the data", ANY), In("the condition", BOOL, None,
                                                             scalar=True))),
    "Merge": Lowering(merge, spec(variadic=In("value", ANY), n_attr="N")),
}
