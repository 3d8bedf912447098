"""Several SavedModel signatures in one .tflite, as TF's converter writes them
(`from_saved_model(dir, signature_keys=[...])`): each signature is converted on its own --
lowered, optimised and quantized with the same options -- and the entry graphs are exported
together (export.export_tflite with a list): subgraph k is signature k, in the order asked."""

from __future__ import annotations

from dataclasses import replace

from edgelite.errors import GraphError
from edgelite.names import quoted
from .export import export_tflite
from .micro_ops import Target, check_micro_model


def convert_signatures(source, options, keys, convert_one, description: str):
    """A ConversionResult for the signatures `keys` (at least two, no repeats) of `source`:
    the first signature's details, the merged model, and each signature's own result in
    `.signatures`."""
    keys = list(keys)
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise GraphError(f"signature {quoted(repeated[0])} is asked for twice; each "
                         "signature is converted once")
    parts = [convert_one(source, replace(options, signature=k)) for k in keys]
    model = export_tflite([p.graph for p in parts], description)
    micro = Target(options.target) is Target.MICRO
    warnings = check_micro_model(model, options.force) if micro else ()
    return replace(parts[0], model=model, warnings=warnings, signatures=tuple(parts))
