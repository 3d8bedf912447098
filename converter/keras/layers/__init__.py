"""Keras layer class -> the rule writing its inference-time ops, one module per family.

A rule is `rule(ctx) -> KTensor | list[KTensor]` (context.py): it reads the call's tensors
(`ctx.input()`, `ctx.inputs()`), the layer's config (`ctx.cfg`) and weights
(`ctx.weights([...])`) and writes TensorFlow nodes (`ctx.op`), as tf.keras' own graph for
the layer at inference: Dropout and noise layers pass their input on, BatchNormalization
uses its moving statistics.
"""

from __future__ import annotations

from edgelite.errors import UnsupportedOpError
from edgelite.names import quoted
from . import (activations, attention, conv, core, merge, norm, ops, ops_more, pooling,
               recurrent, reshaping, wrappers)

REGISTRY = {
    "TFOpLambda": ops.tf_op_lambda,
    **activations.RULES,
    **attention.RULES,
    **conv.RULES,
    **core.RULES,
    **merge.RULES,
    **norm.RULES,
    **pooling.RULES,
    **recurrent.RULES,
    **wrappers.RULES,
    **reshaping.RULES,
}

# keras.ops functions (layers of module keras.src.ops.*)
OP_RULES = {**ops.RULES, **ops_more.RULES}

# configs of models used as layers (walker.py walks them)
MODEL_CLASSES = frozenset({"Functional", "Model", "Sequential"})

EXPORT_ROUTE = ("export the model with TensorFlow (model.export('saved_dir')) and convert "
                "that directory")


def rule_for(class_name: str, name: str, entry: dict):
    module = entry.get("module")
    op_layer = isinstance(module, str) and module.startswith("keras.src.ops")
    rule = (OP_RULES if op_layer else REGISTRY).get(class_name)
    registered = entry.get("registered_name")
    custom = (isinstance(registered, str) and ">" in registered) or \
        (isinstance(module, str) and not module.startswith(("keras", "tf_keras")))
    if rule is not None and not custom:
        return rule
    if (module, class_name) in core.APPLICATION_LAYERS:
        return core.APPLICATION_LAYERS[(module, class_name)]
    where = f"layer {quoted(name)} ({shown_class(class_name, entry)})"
    if class_name == "Lambda":
        raise UnsupportedOpError(f"{where}: a Lambda layer's Python code is not in the "
                                 f"file; {EXPORT_ROUTE}")
    if op_layer:
        raise UnsupportedOpError(f"{where}: the keras.ops function {class_name} is not one "
                                 f"edgelite reads; {EXPORT_ROUTE}")
    raise UnsupportedOpError(f"{where}: not a built-in Keras layer edgelite reads (a custom "
                             f"layer's code is not in the file); {EXPORT_ROUTE}")


def shown_class(class_name: str, entry: dict) -> str:
    registered = entry.get("registered_name")
    return registered if isinstance(registered, str) and ">" in registered else \
        str(class_name)
