"""SavedModels and TF1 checkpoints read without TensorFlow: loader.py chooses the meta graph
and signature and freezes the variables (restore.py: which checkpoint key restores which
variable; freeze.py: variables -> constants; bundle.py: the tensor bundle, over table.py's
sorted string table and crc32c.py)."""

from __future__ import annotations

import os

from edgelite.errors import GraphError
from ..bind import bind_placeholders
from ..files import quoted_path
from ..graphdef import load_graphdef
from .loader import (Loaded, SignatureIO, load_meta_checkpoint, load_saved_model,
                     saved_model_file, signature_refs)


def load_source(source, signature: str | None = None, tags=None, checkpoint=None,
                outputs: list[str] | None = None, set_values=None,
                input_shapes=None) -> Loaded:
    """A frozen GraphDef from a .pb / .pbtxt, a SavedModel directory, or a .meta graph with
    its checkpoint; with the signature it is converted for (None for a plain GraphDef).
    `set_values` (placeholder name -> value) become constants first (bind.py). A Keras
    file (.keras / .h5, sniffed) is read by converter/keras/, `input_shapes` fixing the
    unknown dims of its inputs."""
    from ..keras import is_keras_file, load_keras
    if is_keras_file(source):
        loaded = load_keras(source, input_shapes)
        bind_placeholders(loaded.graph_def, set_values)
        return loaded
    meta = not isinstance(source, bytes) and os.fspath(source).endswith(".meta")
    if checkpoint is not None or meta:
        if checkpoint is None:
            raise GraphError(f"{quoted_path(source)} is a TF1 meta graph: give its checkpoint "
                             "too (--checkpoint PREFIX, e.g. model.ckpt)")
        return load_meta_checkpoint(source, checkpoint, outputs, signature, set_values)
    if saved_model_file(source) is not None:
        return load_saved_model(source, signature, tags, set_values)
    if signature is not None or tags is not None:
        where = "the GraphDef" if isinstance(source, bytes) else quoted_path(source)
        raise GraphError(f"{where} is a frozen GraphDef: --signature and --tag apply to "
                         "SavedModel directories")
    gd = load_graphdef(source)
    bind_placeholders(gd, set_values)
    return Loaded(gd, None)


__all__ = ["Loaded", "SignatureIO", "load_source", "signature_refs"]
