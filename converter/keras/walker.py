"""Walk a Keras model's layer graph and write each layer call as GraphDef nodes.

A Functional model's config lists its layers, each with its inbound nodes (one per call):
the tensors each call reads, named (layer, node index, tensor index). Calls run once their
inputs exist (a shared layer's later call may read a later layer), nested models (a
Functional or Sequential used as a layer) run the same walk on their own config, and a
Sequential model is a chain. Both config spellings are read: Keras 3 (`args` / `kwargs`
with `__keras_tensor__` entries) and Keras 2 (lists of [layer, node, tensor, kwargs]).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgelite.errors import EdgeliteError, GraphError, ModelFormatError, ShapeError
from edgelite.names import quoted
from .context import KTensor, LayerCtx
from .graph import GraphWriter
from .layers import MODEL_CLASSES, rule_for
from .weights import WeightIndex

MAX_LAYERS = 100_000
# what a config of the wrong shape raises inside a rule or the walk
MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)
MODEL_DEPTH = 32


class Walker:
    def __init__(self, weights: WeightIndex, input_shapes: dict | None = None,
                 keras2: bool = False) -> None:
        self.keras2 = keras2
        self.g = GraphWriter()
        self.weights = weights
        self.input_shapes = dict(input_shapes or {})
        self.consts: dict[tuple, dict] = {}   # layer scope -> its constants (shared calls)

    # the top-level model -------------------------------------------------------------------
    def build(self, model: dict):
        """(inputs, outputs) of the top-level model, each a list of (name, KTensor)."""
        cls, cfg = model.get("class_name"), _config(model)
        if cls == "Sequential":
            first = _sequential_layers(cfg)
            name, shape, dtype = _sequential_input(cfg, first)
            x = self._placeholder(name, shape, dtype)
            out = self._sequential(cfg, [x], ())
            return [(name, x)], [(_layer_name(first[-1]) if first else name, out[0])]
        if cls not in MODEL_CLASSES:
            raise ModelFormatError(f"the file's model is a {quoted(cls)}: edgelite reads "
                                   "Sequential and Functional models")
        inputs = []
        feeds = {}
        for layer in cfg.get("layers", []):
            if layer.get("class_name") == "InputLayer":
                name = _layer_name(layer)
                shape, dtype = _input_spec(_config(layer))
                feeds[name] = self._placeholder(name, shape, dtype)
        for name, _, _ in _triples(cfg.get("input_layers")):
            if name not in feeds:
                raise ModelFormatError(f"model input {quoted(name)} is not an InputLayer")
            inputs.append((name, feeds[name]))
        outs = self._functional(cfg, [t for _, t in inputs], (), feeds)
        names = [n for n, _, _ in _triples(cfg.get("output_layers"))]
        return inputs, list(zip(names, outs))

    def _placeholder(self, name: str, shape, dtype) -> KTensor:
        if name in self.input_shapes:
            shape = (None,) + tuple(self.input_shapes[name])[1:]
        ref = self.g.placeholder(name, shape, dtype)
        return KTensor(ref, tuple(shape), np.dtype(dtype))

    # models ----------------------------------------------------------------------------------
    def _functional(self, cfg: dict, inputs: list, scope: tuple, feeds=None) -> list:
        layers = cfg.get("layers", [])
        if len(layers) > MAX_LAYERS:
            raise ModelFormatError(f"the model lists {len(layers)} layers (limit {MAX_LAYERS})")
        produced: dict[tuple, list] = {}
        in_names = [n for n, _, _ in _triples(cfg.get("input_layers"))]
        if len(in_names) != len(inputs):
            raise GraphError(f"model {quoted(cfg.get('name'))} takes {len(in_names)} inputs, "
                             f"called with {len(inputs)}")
        for name, x in zip(in_names, inputs):
            produced[(name, 0)] = [x]
        pending = []
        for layer in layers:
            if layer.get("class_name") == "InputLayer":
                continue
            first = _first_node(layer)
            for k, node in enumerate(layer.get("inbound_nodes") or []):
                pending.append((layer, k + first, node))
        while pending:
            left = []
            for layer, k, node in pending:
                args, kwargs = _call_args(node)
                try:
                    args = _resolve(args, produced)
                    kwargs = _resolve(kwargs, produced)
                except KeyError:
                    left.append((layer, k, node))
                    continue
                produced[(_layer_name(layer), k)] = self._call(layer, args, kwargs, scope)
            if len(left) == len(pending):
                names = sorted({_layer_name(layer) for layer, _, _ in left})
                raise GraphError(f"model {quoted(cfg.get('name'))}: layers "
                                 f"{', '.join(map(quoted, names[:5]))} read tensors no layer "
                                 "makes")
            pending = left
        try:
            return [produced[(n, k)][t] for n, k, t in _triples(cfg.get("output_layers"))]
        except (KeyError, IndexError):
            raise GraphError(f"model {quoted(cfg.get('name'))}: an output names a tensor no "
                             "layer makes") from None

    def _sequential(self, cfg: dict, inputs: list, scope: tuple) -> list:
        x = inputs
        for layer in _sequential_layers(cfg):
            if layer.get("class_name") == "InputLayer":
                continue
            x = self._call(layer, [x[0]], {}, scope)
        return x

    # one call of one layer -------------------------------------------------------------------
    def _call(self, layer: dict, args: list, kwargs: dict, scope: tuple) -> list:
        cls, name, cfg = layer.get("class_name"), _layer_name(layer), _config(layer)
        here = scope + (name,)
        if cls in MODEL_CLASSES:
            if len(here) > MODEL_DEPTH:
                raise ModelFormatError(f"models nest deeper than {MODEL_DEPTH}")
            tensors = [a for a in _flat(args) if isinstance(a, KTensor)]
            if cls == "Sequential":
                return self._sequential(cfg, tensors, here)
            return self._functional(cfg, tensors, here)
        mask = kwargs.get("mask")
        if isinstance(mask, KTensor) and args and isinstance(args[0], KTensor):
            args = [replace(args[0], mask=mask)] + list(args[1:])
        rule = rule_for(cls, name, layer)
        where = f"layer {quoted(name)} ({cls})"
        ctx = LayerCtx(self.g, cls, name, self.g.unique(name), cfg, args, kwargs,
                       self.weights.layer(here, where), self.consts.setdefault(here, {}), self.keras2)
        try:
            out = rule(ctx)
        except EdgeliteError:    # already one clear line (its classes are ValueErrors too)
            raise
        except MALFORMED as e:   # a config value of the wrong kind (units: "x", a missing key)
            raise ModelFormatError(f"{where}: malformed config or weights "
                                   f"({type(e).__name__}: {e})") from None
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        for t in out:
            if not isinstance(t, KTensor):
                raise ShapeError(f"{where}: produced no tensor")
        return out


# config reading ------------------------------------------------------------------------------
def _config(entry: dict) -> dict:
    cfg = entry.get("config")
    return cfg if isinstance(cfg, dict) else {}


def _first_node(layer: dict) -> int:
    """The node index of a layer's first call. Keras 2 counts a nested model's own
    construction (from its Input) as node 0 (tf.keras `_should_skip_first_node`); Keras 3
    configs count calls from 0."""
    nodes = layer.get("inbound_nodes") or []
    if layer.get("class_name") not in MODEL_CLASSES or not nodes or isinstance(nodes[0], dict):
        return 0
    inner = _sequential_layers(_config(layer))
    return 1 if inner and inner[0].get("class_name") == "InputLayer" else 0


def _layer_name(entry: dict) -> str:
    return str(entry.get("name") or _config(entry).get("name") or "layer")


def _sequential_layers(cfg: dict) -> list:
    return cfg if isinstance(cfg, list) else cfg.get("layers", [])


def _sequential_input(cfg: dict, layers: list):
    """A Sequential model's input: its InputLayer, or the first layer's batch_input_shape."""
    if layers and layers[0].get("class_name") == "InputLayer":
        shape, dtype = _input_spec(_config(layers[0]))
        return _layer_name(layers[0]), shape, dtype
    for source in ([_config(layers[0])] if layers else []) + [cfg]:
        if "batch_input_shape" in source or "batch_shape" in source or \
                "build_input_shape" in source:
            shape = source.get("batch_input_shape") or source.get("batch_shape") or \
                source.get("build_input_shape")
            return "input_1", tuple(shape), source.get("dtype") or "float32"
    raise ModelFormatError("the Sequential model names no input shape: build it with an "
                           "Input (keras.Input(shape)) before saving")


def _input_spec(cfg: dict):
    shape = cfg.get("batch_shape") or cfg.get("batch_input_shape")
    if shape is None:
        raise ModelFormatError(f"input {quoted(cfg.get('name'))} has no shape in the config")
    dtype = cfg.get("dtype") or "float32"
    if isinstance(dtype, dict):
        dtype = _config(dtype).get("name", "float32")
    if dtype not in ("float32", "int32", "int64", "bool"):
        raise ModelFormatError(f"input {quoted(cfg.get('name'))} has dtype {dtype}: edgelite "
                               "reads float32 / int32 / int64 / bool inputs")
    return tuple(None if d is None else int(d) for d in shape), dtype


def _triples(value) -> list:
    """[[layer, node, tensor], ...] (or a single triple) -> list of tuples."""
    if not value:
        return []
    if isinstance(value, dict):   # Keras 3: {"name": [layer, node, tensor]}
        value = list(value.values())
    if isinstance(value[0], str):
        value = [value]
    return [(str(v[0]), int(v[1]), int(v[2])) for v in value]


def _call_args(node):
    """(args, kwargs) of one inbound node, tensors still as (layer, node, tensor) refs."""
    if isinstance(node, dict):   # Keras 3
        return _refs(node.get("args", [])), _refs(node.get("kwargs", {}))
    if node and isinstance(node[0], str):   # a TFOpLambda's node: one entry, not a list
        node = [node]
    entries = [e for e in node if isinstance(e, list) and len(e) >= 3]
    tensors = [_Ref(str(e[0]), int(e[1]), int(e[2])) for e in entries]
    kwargs = entries[0][3] if entries and len(entries[0]) > 3 and \
        isinstance(entries[0][3], dict) else {}
    kwargs = {k: (_Ref(str(v[0]), int(v[1]), int(v[2])) if _is_triple(v) else v)
              for k, v in kwargs.items()}
    return ([tensors[0]] if len(tensors) == 1 else [tensors]), kwargs


def _is_triple(v) -> bool:
    return isinstance(v, list) and len(v) in (3, 4) and isinstance(v[0], str) and \
        isinstance(v[1], int) and isinstance(v[2], int)


class _Ref(tuple):
    def __new__(cls, layer, node, tensor):
        return super().__new__(cls, (layer, node, tensor))


def _refs(value):
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            hist = _config(value).get("keras_history") or []
            if len(hist) != 3:
                raise ModelFormatError("a call argument names no layer output")
            return _Ref(str(hist[0]), int(hist[1]), int(hist[2]))
        if value.get("class_name") in CONSTANT_CLASSES:
            return _constant(value)
        return {k: _refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_refs(v) for v in value]
    return value


# Keras 3 writes a concrete tensor or numpy array met as a call argument (a positional
# table added to a symbolic tensor, `x * np.array(...)`) inline: {"class_name": "__tensor__"
# or "__numpy__", "config": {"value": nested lists, "dtype": "float32"}} (serialization_lib)
CONSTANT_CLASSES = ("__tensor__", "__numpy__")
CONSTANT_DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
                   "bool")


def _constant(value: dict) -> np.ndarray:
    cfg = _config(value)
    dtype = cfg.get("dtype", "float32")
    if isinstance(dtype, dict):
        dtype = _config(dtype).get("name", "float32")
    if dtype not in CONSTANT_DTYPES:
        raise ModelFormatError(f"a constant call argument has dtype {dtype}: edgelite reads "
                               f"{' / '.join(CONSTANT_DTYPES)}")
    try:
        return np.asarray(cfg["value"], dtype=dtype)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"a constant call argument is malformed ({exc})") from None


def _resolve(value, produced):
    if isinstance(value, _Ref):
        layer, node, tensor = value
        outputs = produced[(layer, node)]
        if not 0 <= tensor < len(outputs):
            raise GraphError(f"a call reads output {tensor} of layer {quoted(layer)}, which "
                             f"has {len(outputs)}")
        return outputs[tensor]
    if isinstance(value, dict):
        return {k: _resolve(v, produced) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, produced) for v in value]
    return value


def _flat(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _flat(v)
    else:
        yield value
