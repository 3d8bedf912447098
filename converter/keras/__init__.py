"""Keras model files (.keras, .h5) read without TensorFlow: the layer graph becomes the
GraphDef tf.keras would have traced for inference, and from there the conversion is the
GraphDef one (lowering, passes, quantization, checks).

    files.py    open the file: config + weights (h5py, imported on use)
    weights.py  each layer's variables in either layout
    walker.py   Sequential / Functional / nested models, shared layers, multi-IO
    layers/     one module per layer family, registry in layers/__init__.py
    graph.py    the GraphDef being written
"""

from __future__ import annotations

from ..savedmodel.loader import Loaded, SignatureIO
from .files import is_keras_file, open_keras
from edgelite.errors import EdgeliteError, ModelFormatError
from .walker import MALFORMED, Walker
from .weights import WeightIndex


def load_keras(source, input_shapes: dict | None = None) -> Loaded:
    """A Keras model file as a frozen GraphDef plus a signature naming its inputs (the input
    layers) and outputs (the output layers)."""
    kfile = open_keras(source)
    keras2 = kfile.legacy and not str(kfile.keras_version).startswith("3")
    walker = Walker(WeightIndex(kfile.weights, kfile.legacy), input_shapes, keras2)
    try:
        inputs, outputs = walker.build(kfile.config)
    except EdgeliteError:        # already one clear line (its classes are ValueErrors too)
        raise
    except MALFORMED as e:   # the config's structure is not Keras' (lists, keys)
        raise ModelFormatError(f"{kfile.where}: malformed Keras model config "
                               f"({type(e).__name__}: {e})") from None
    sig = SignatureIO("serving_default",
                      tuple((name, t.ref) for name, t in inputs),
                      tuple((name, t.ref) for name, t in _unique(outputs)))
    return Loaded(walker.g.graph_def, sig)


def _unique(outputs):
    seen: dict[str, int] = {}
    for name, t in outputs:
        k = seen.get(name, 0)
        seen[name] = k + 1
        yield (name if k == 0 else f"{name}_{k}"), t


__all__ = ["is_keras_file", "load_keras"]
