"""SavedModel directories and TF1 checkpoints + .meta graphs -> a frozen GraphDef and the
signature to convert, without TensorFlow.

    DIR/saved_model.pb (or .pbtxt)     a SavedModel proto: one MetaGraphDef per tag set, each
                                       with its GraphDef (+ function library), SignatureDefs
                                       and the SaverDef naming the restore op
    DIR/variables/variables.*          the tensor bundle its variables are restored from
    model.meta + model.ckpt.*          a TF1 MetaGraphDef and the bundle tf.train.Saver wrote

The meta graph is chosen by tags (TF's loader: the exact set; default {"serve"}, or the only
one), the signature by key (default "serving_default", or the only one); the variables the
signature needs are read from the bundle (restore.py says which key restores which variable)
and become constants (freeze.py); the graph keeps only what the signature's outputs need.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from edgelite.errors import GraphError, ModelFormatError
from edgelite.names import quoted, shown
from ...schema import graph_pb2 as pb
from edgelite.fileio import read_regular
from ..bind import bind_placeholders
from ..files import quoted_path
from ..graphdef import MAX_GRAPHDEF_BYTES, parse_ref
from ..sample_data import names_list
from ..tf_tensor import dtype_name, numpy_dtype, shape_from_proto
from .bundle import Bundle
from .freeze import freeze, needed_nodes, prune_library
from .restore import VARIABLE_OPS, restored_variables

DEFAULT_SIGNATURE = "serving_default"
DEFAULT_TAGS = ("serve",)
PROTO_NAMES = ("saved_model.pb", "saved_model.pbtxt")


@dataclass(frozen=True)
class SignatureIO:
    """A signature: its key and, in order, its inputs and outputs as (name, graph tensor)."""

    key: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]


@dataclass
class Loaded:
    graph_def: pb.GraphDef
    signature: SignatureIO | None          # None: a .meta graph without signatures
    variables: dict[str, str] = field(default_factory=dict)  # variable node -> checkpoint key


def saved_model_file(source) -> str | None:
    """The saved_model.pb(txt) path if `source` is a SavedModel directory or that file."""
    if isinstance(source, (bytes, bytearray)):
        return None
    path = os.fspath(source)
    if os.path.isdir(path):
        for name in PROTO_NAMES:
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
        if os.path.isfile(os.path.join(path, "saved_model.cpb")):
            raise ModelFormatError(f"{quoted_path(path)} holds a chunked SavedModel "
                                   "(saved_model.cpb, written for graphs over 2 GB), which "
                                   "edgelite does not read; save it without chunking")
        raise ModelFormatError(f"{quoted_path(path)} is a directory without saved_model.pb: "
                               "give a SavedModel directory or a frozen .pb file")
    return path if os.path.basename(path) in PROTO_NAMES else None


def _parse(path: str, cls):
    from google.protobuf import message as pb_message, text_format
    where = quoted_path(path)
    data = read_regular(path, where, ModelFormatError, MAX_GRAPHDEF_BYTES)
    msg = cls()
    try:
        if path.endswith(".pbtxt"):
            text_format.Parse(data.decode("utf-8"), msg, allow_unknown_field=True)
        else:
            msg.ParseFromString(data)
    except (pb_message.DecodeError, text_format.ParseError, UnicodeDecodeError, ValueError,
            RecursionError):
        raise ModelFormatError(f"{where} is not a {cls.__name__} (it does not parse); the "
                               "file is damaged or not TensorFlow's") from None
    return msg


def _meta_graph(sm: pb.SavedModel, tags, where: str) -> pb.MetaGraphDef:
    sets = [tuple(mg.meta_info_def.tags) for mg in sm.meta_graphs]
    if not sets:
        raise ModelFormatError(f"{where} holds no meta graph")
    if tags is None and len(sets) == 1:
        return sm.meta_graphs[0]
    want = set(tags or DEFAULT_TAGS)
    for mg, s in zip(sm.meta_graphs, sets):
        if set(s) == want:
            return mg
    shown_sets = "; ".join(",".join(s) or "(no tags)" for s in sets)
    raise GraphError(f"{where} has no meta graph tagged {','.join(sorted(want))}; its tag sets "
                     f"are: {shown(shown_sets, 300)} (choose one with --tag)")


def _signature(mg: pb.MetaGraphDef, key: str | None, where: str) -> SignatureIO:
    keys = sorted(k for k in mg.signature_def if not k.startswith("__saved_model"))
    if key is None:
        key = DEFAULT_SIGNATURE if DEFAULT_SIGNATURE in keys or len(keys) != 1 else keys[0]
    if key not in mg.signature_def:
        have = names_list(keys) if keys else "none"
        raise GraphError(f"{where} has no signature {quoted(key)}; its signatures: {have} "
                         "(choose one with --signature)")
    sig = mg.signature_def[key]

    def tensors(infos, what):
        out = []
        for name in sorted(infos):
            info = infos[name]
            if info.WhichOneof("encoding") != "name":
                raise GraphError(f"signature {quoted(key)}: {what} {quoted(name)} is a sparse or "
                                 "composite tensor; only dense tensors are converted")
            out.append((name, info.name))
        return tuple(out)
    return SignatureIO(key, tensors(sig.inputs, "input"), tensors(sig.outputs, "output"))


def load_saved_model(source, signature: str | None = None, tags=None,
                     set_values=None) -> Loaded:
    path = saved_model_file(source)
    where = quoted_path(os.path.dirname(path) or ".")
    mg = _meta_graph(_parse(path, pb.SavedModel), tags, where)
    sig = _signature(mg, signature, where)
    prefix = os.path.join(os.path.dirname(path), "variables", "variables")
    outputs = [t for _, t in sig.outputs]
    return _frozen(mg, outputs, prefix, where, sig, _by_node(sig, set_values))


def load_meta_checkpoint(meta, checkpoint, outputs: list[str] | None,
                         signature: str | None = None, set_values=None) -> Loaded:
    """A TF1 `.meta` graph with the checkpoint prefix its Saver wrote (`model.ckpt`)."""
    where = quoted_path(meta)
    mg = _parse(os.fspath(meta), pb.MetaGraphDef)
    sig = _signature(mg, signature, where) if (mg.signature_def and not outputs) else None
    outs = [t for _, t in sig.outputs] if sig else outputs
    if not outs:
        raise GraphError(f"{where} has no signatures: name the outputs (--outputs NODE)")
    return _frozen(mg, outs, os.fspath(checkpoint), where, sig, _by_node(sig, set_values))


def _by_node(sig: SignatureIO | None, set_values) -> dict:
    """--set values keyed by graph node: a signature's input name stands for its node."""
    names = {name: parse_ref(t).node for name, t in sig.inputs} if sig else {}
    return {names.get(k, k): v for k, v in (set_values or {}).items()}


def _frozen(mg, outputs: list[str], prefix: str, where: str, sig, set_values) -> Loaded:
    gd = mg.graph_def
    bind_placeholders(gd, set_values)  # before pruning: a bound default's inputs are left out
    needed = needed_nodes(gd, outputs)
    variables = [n for n in needed if n.op in VARIABLE_OPS]
    keys: dict[str, str] = {}
    values: dict[str, np.ndarray] = {}
    if variables:
        restore = mg.saver_def.restore_op_name
        if not restore:
            raise GraphError(f"{where}: the graph has variables but no saver to restore them; "
                             "save it with tf.saved_model.save or a tf.train.Saver")
        keys = restored_variables(gd, restore)
        bundle = Bundle(prefix)
        for var in variables:
            if var.name not in keys:
                raise GraphError(f"{where}: variable {quoted(var.name)} is not restored from "
                                 "the checkpoint (the saver does not assign it)")
            values[var.name] = _value(var, bundle, keys[var.name])
    frozen = freeze(gd, values)
    keep = {n.name for n in needed}
    kept = [n for n in frozen.node if n.name in keep or n.name.startswith(
        tuple(f"{k}/axis" for k in keep))]
    del frozen.node[:]
    frozen.node.extend(kept)
    prune_library(frozen, kept)
    return Loaded(frozen, sig, {v.name: keys[v.name] for v in variables})


def _value(var, bundle: Bundle, key: str) -> np.ndarray:
    value = bundle[key]
    what = f"variable {quoted(var.name)} (checkpoint key {quoted(key)})"
    if "dtype" in var.attr:
        want = numpy_dtype(var.attr["dtype"].type, what)
        if value.dtype != want:
            raise ModelFormatError(f"{what}: the checkpoint holds {value.dtype}, the graph "
                                   f"declares {dtype_name(var.attr['dtype'].type)}; the "
                                   "checkpoint is not this model's")
    if "shape" in var.attr:
        shape = shape_from_proto(var.attr["shape"].shape, what)
        if shape is not None and -1 not in shape and tuple(shape) != value.shape:
            raise ModelFormatError(f"{what}: the checkpoint holds shape {list(value.shape)}, "
                                   f"the graph declares {list(shape)}; the checkpoint is not "
                                   "this model's")
    return value


def signature_refs(sig: SignatureIO) -> tuple[list[str], list[str]]:
    """The signature's input nodes and output tensors, as ConvertOptions takes them."""
    return ([parse_ref(t).node for _, t in sig.inputs], [t for _, t in sig.outputs])
