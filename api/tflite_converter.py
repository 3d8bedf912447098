"""`edgelite.TFLiteConverter`: tf.lite.TFLiteConverter's shape over edgelite.convert.

    converter = edgelite.TFLiteConverter.from_saved_model("model_dir")
    converter.optimizations = [edgelite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([x[None]] for x in calib)
    converter.target_spec.supported_ops = [edgelite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = np.int8          # int8 in ...
    tflite_bytes = converter.convert()                # ... float out

The attributes take TF's own values too (tf.lite.Optimize.DEFAULT, tf.int8, tf.float16):
they are read by name. Settings map onto ConvertOptions / QuantizeOptions -- the same
conversion `edgelite convert` runs, so both give the same bytes -- as TF's converter reads
them (lite.py): no optimizations: a float model; optimizations with supported_types
[float16]: float16 weights; with a representative dataset: full integer (int8, or 16x8 with
EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8), ops without an integer kernel
left float unless supported_ops holds integer sets alone (then they are an error listing
them); with neither: int8 weights, float activations (dynamic range).

from_keras_model / from_concrete_functions need TensorFlow (imported only there): the model is
exported to a temporary SavedModel, read by the TF-free path like any other.
"""

from __future__ import annotations

import contextlib
import enum
import io
import os
import tempfile

from .errors import EdgeliteError


class ConverterError(EdgeliteError, ValueError):
    """A TFLiteConverter setting that cannot be honoured (TF raises ValueError there)."""


class Optimize(enum.Enum):
    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"        # deprecated in TF: same as DEFAULT
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"  # deprecated in TF: same as DEFAULT
    EXPERIMENTAL_SPARSITY = "EXPERIMENTAL_SPARSITY"


class OpsSet(enum.Enum):
    TFLITE_BUILTINS = "TFLITE_BUILTINS"
    TFLITE_BUILTINS_INT8 = "TFLITE_BUILTINS_INT8"
    EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 = \
        "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"
    SELECT_TF_OPS = "SELECT_TF_OPS"


class TargetSpec:
    """What the converted model may use: `supported_ops` (OpsSet values), `supported_types`
    ([float16] for float16 weights)."""

    def __init__(self, supported_ops=None, supported_types=None):
        self.supported_ops = set(supported_ops or {OpsSet.TFLITE_BUILTINS})
        self.supported_types = set(supported_types or ())


class RepresentativeDataset:
    """tf.lite.RepresentativeDataset: wraps a generator function of calibration samples."""

    def __init__(self, input_gen):
        self.input_gen = input_gen


INT16_SET = "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"
KNOWN_OPS = {m.value for m in OpsSet}
IO_TYPES = ("float32", "int8", "uint8", "int16")


def _name(value) -> str:
    """An enum member, a dtype (numpy's, TF's) or a string -> its name: 'DEFAULT', 'int8'."""
    if isinstance(value, str):
        return "float32" if value == "float" else value
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    import numpy as np
    try:
        return np.dtype(value).name
    except TypeError:
        raise ConverterError(f"unknown converter setting {value!r}") from None


class TFLiteConverter:
    """Converts a SavedModel or frozen GraphDef as tf.lite.TFLiteConverter does; build one
    with a from_* class method, set attributes, then convert()."""

    def __init__(self, source, **convert_options):
        self._source = source
        self._options = convert_options
        self._temporary = None  # the SavedModel a Keras model / concrete functions went to
        self.optimizations: set | list = set()
        self.representative_dataset = None
        self.target_spec = TargetSpec()
        self.inference_input_type = "float32"
        self.inference_output_type = "float32"
        self.allow_custom_ops = False
        # edgelite writes no conversion metadata (TF's CONVERSION_METADATA entry), so the
        # file is the same either way
        self.exclude_conversion_metadata = False

    @classmethod
    def from_saved_model(cls, saved_model_dir, signature_keys=None, tags=None):
        """All `signature_keys` in one multi-signature model, in that order (default:
        serving_default, or the only signature)."""
        if isinstance(signature_keys, str):
            signature_keys = [signature_keys]
        keys = list(signature_keys) if signature_keys else None
        return cls(os.fspath(saved_model_dir), signature=keys,
                   tags=tuple(tags) if tags else None)

    @classmethod
    def from_frozen_graph(cls, graph_def_file, input_arrays, output_arrays,
                          input_shapes=None):
        """A frozen GraphDef (.pb / .pbtxt); `input_shapes` {input name: [dims]} (a None
        dimension becomes 1, as TF's converter does for the batch)."""
        shapes = {name: tuple(1 if d is None else int(d) for d in dims)
                  for name, dims in (input_shapes or {}).items()}
        return cls(os.fspath(graph_def_file), inputs=list(input_arrays),
                   outputs=list(output_arrays), input_shapes=shapes)

    @classmethod
    def from_keras_model(cls, model):
        """A Keras model (needs TensorFlow): saved to a temporary SavedModel first."""
        tf = _tensorflow("from_keras_model")
        folder = tempfile.TemporaryDirectory(prefix="edgelite_keras_")
        with contextlib.redirect_stdout(io.StringIO()):  # export() prints its signatures
            if hasattr(model, "export"):
                model.export(folder.name)  # Keras 3 and tf_keras: a serving_default signature
            else:
                tf.saved_model.save(model, folder.name)
        converter = cls.from_saved_model(folder.name)
        converter._temporary = folder
        return converter

    @classmethod
    def from_concrete_functions(cls, funcs, trackable_obj=None):
        """tf.function concrete functions (needs TensorFlow): one signature each, the first
        (or only) one serving_default, the others named after their function."""
        tf = _tensorflow("from_concrete_functions")
        funcs = list(funcs)
        if not funcs:
            raise ConverterError("from_concrete_functions: give at least one function")
        keys = ["serving_default"] + [_function_key(f) for f in funcs[1:]]
        folder = tempfile.TemporaryDirectory(prefix="edgelite_functions_")
        owner = trackable_obj if trackable_obj is not None else tf.Module()
        tf.saved_model.save(owner, folder.name, signatures=dict(zip(keys, funcs)))
        converter = cls.from_saved_model(folder.name, keys)
        converter._temporary = folder
        return converter

    def convert(self) -> bytes:
        """The .tflite model as bytes."""
        from .converter import ConvertOptions, convert_detailed
        from .converter.quantize import QuantizeOptions
        settings = self._settings()
        quantize = QuantizeOptions(**settings) if settings else None
        options = ConvertOptions(**self._options, allow_custom_ops=bool(self.allow_custom_ops),
                                 quantize=quantize)
        result = convert_detailed(self._source, options)
        if settings and settings["mode"] in ("int8", "int16x8") and self._strict():
            _check_all_integer(result, sorted(self._ops()))
        return result.model

    # -- settings -> QuantizeOptions fields -------------------------------------------------
    def _ops(self) -> set[str]:
        ops = {_name(o) for o in self.target_spec.supported_ops}
        unknown = sorted(ops - KNOWN_OPS)
        if unknown:
            raise ConverterError(f"target_spec.supported_ops: unknown set {unknown[0]}; "
                                 f"known: {', '.join(sorted(KNOWN_OPS))}")
        return ops

    def _strict(self) -> bool:
        """Integer sets only (no TFLITE_BUILTINS / SELECT_TF_OPS to fall back on)."""
        return not self._ops() & {"TFLITE_BUILTINS", "SELECT_TF_OPS"}

    def _settings(self) -> dict | None:
        ops = self._ops()
        optimize = {_name(o) for o in self.optimizations or ()}
        types = {_name(t) for t in self.target_spec.supported_types}
        io_in, io_out = _name(self.inference_input_type), _name(self.inference_output_type)
        for what, io in (("inference_input_type", io_in), ("inference_output_type", io_out)):
            if io not in IO_TYPES:
                raise ConverterError(f"{what} is one of {', '.join(IO_TYPES)}, not {io}")
        data = self.representative_dataset
        data = getattr(data, "input_gen", data)
        full_integer = data is not None and optimize and "float16" not in types
        if (ops - {"TFLITE_BUILTINS", "SELECT_TF_OPS"} or "int8" in types) and data is None:
            raise ConverterError("full integer quantization (target_spec TFLITE_BUILTINS_INT8 "
                                 "/ the 16x8 set / supported_types int8) needs a "
                                 "representative_dataset")
        if not full_integer and (io_in, io_out) != ("float32", "float32"):
            raise ConverterError("inference_input_type / inference_output_type other than "
                                 "float32 need full integer quantization: optimizations and "
                                 "a representative_dataset")
        if not optimize:
            if ops - {"TFLITE_BUILTINS", "SELECT_TF_OPS"} or types:
                raise ConverterError("target_spec asks for quantization: set optimizations "
                                     "= [Optimize.DEFAULT]")
            return None
        if "float16" in types:
            return {"mode": "float16"}
        if data is None:
            return {"mode": "dynamic"}
        io = {"float32": "float"}
        return {"mode": "int16x8" if INT16_SET in ops else "int8", "calib": data,
                "io_type": io.get(io_in, io_in), "output_type": io.get(io_out, io_out)}


def _check_all_integer(result, sets: list[str]) -> None:
    """Integer op sets alone (TFLITE_BUILTINS_INT8, the 16x8 set): every op computes in
    integers, else one error listing each op that stays float (QUANTIZE / DEQUANTIZE at the
    float inputs and outputs are allowed, as in TF)."""
    import numpy as np

    from .converter.ir import all_graphs
    from .converter.sample_data import names_list
    left = []
    for part in result.signatures or (result,):
        for g in all_graphs(part.graph):
            for op in g.ops:
                if op.type in ("QUANTIZE", "DEQUANTIZE"):
                    continue
                tensors = [t for t in (*op.inputs, *op.outputs)
                           if t is not None and not t.is_const]
                if any(t.dtype == np.float32 for t in tensors):
                    left.append(f"{op.type} {op.name}")
    if left:
        raise ConverterError(
            f"target_spec.supported_ops is {' + '.join(sets)} only, but {len(left)} op(s) "
            f"would stay float: {names_list(left, 64)}; add OpsSet.TFLITE_BUILTINS to let "
            "them run float")


def _function_key(func) -> str:
    name = getattr(func, "name", "function")
    name = name.decode() if isinstance(name, bytes) else str(name)
    name = name.removeprefix("__inference_")
    base, _, tail = name.rpartition("_")
    return base if tail.isdigit() and base else name


def _tensorflow(what: str):
    try:
        import tensorflow as tf
    except ImportError:
        raise ConverterError(f"TFLiteConverter.{what} needs TensorFlow (pip install "
                             "tensorflow); without it save the model as a SavedModel and use "
                             "from_saved_model") from None
    return tf
