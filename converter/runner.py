"""The converter's one model runner: run a .tflite in edgelite's interpreter, one sample
(batch 1) at a time, and read tensors -- by name, by index, or the outputs.

Calibration, equalization, bias correction (whole models and op by op), selective
quantization, constant folding, compare / eval and op replay all run models through
ModelRunner: one execution engine (docs/architecture.md), one way to feed it and one way to read it.

Feeding (``set_input``; ``feed`` for a sample {input name: array}):
  * an array of the input's shape, or of its size (a missing batch dim of 1 is added);
  * a float input takes the values as float32;
  * an integer input with quantization parameters takes real values quantized as TFLite's
    QUANTIZE op does (quant_math.quantize, reference_ops::AffineQuantize:
    q = clamp(round_half_away(x / s) + zp), float32 division), or values already of its dtype
    as they are;
  * an integer input without them (token ids, indices) takes integral values as they are.
Reading (``value``): float tensors as float32, quantized ones as real values
(Interpreter.get_dequantized_tensor: real = scale * (q - zero_point) per channel, in double,
rounded to float32 like LiteRT's DEQUANTIZE), other integers as they are; ``stored`` reads
a tensor in its storage type.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, Mapping

import numpy as np

from ..interpreter import Interpreter
from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from edgelite.names import quoted
from ..interpreter.quant_math import quantize
from .files import shown_path
from .sample_data import names_list


def as_input(x, detail: dict) -> np.ndarray:
    """`x` as the stored values of the input described by `detail` (see module doc)."""
    x = np.asarray(x)
    dtype = np.dtype(detail["dtype"])
    if dtype.kind == "f" or x.dtype == dtype:
        return x.astype(dtype, copy=False)
    scale, zero_point = detail["quantization"]
    if scale != 0.0:
        return quantize(x, scale, zero_point, dtype)
    if x.dtype.kind in "iub" or np.array_equal(x, np.trunc(x)):
        return x.astype(dtype)
    raise DTypeError(f"input {quoted(detail['name'])} is {dtype.name} without quantization "
                     f"parameters; give {dtype.name} data (integral values), not "
                     f"{x.dtype.name} fractions")


class ModelRunner:
    """One interpreter over a model (`keep_all`: every tensor stays readable after a run)."""

    def __init__(self, model: bytes, keep_all: bool = False, label: str = "the model") -> None:
        self.label = label   # names the model in messages (a path, or e.g. "the float model")
        self.interp = Interpreter(model_content=model, preserve_all_tensors=keep_all)
        self.interp.allocate_tensors()
        self.inputs = self.interp.get_input_details()
        self.outputs = self.interp.get_output_details()

    @property
    def input_names(self) -> list[str]:
        return [d["name"] for d in self.inputs]

    @cached_property
    def aliases(self) -> dict[str, str]:
        """The model's signature names for its input tensors ({"x": "serving_default_x"}):
        data may be keyed either way."""
        names = {d["index"]: d["name"] for d in self.inputs}
        return {alias: names[i]
                for sig in self.interp._get_full_signature_list().values()
                for alias, i in sig["inputs"].items() if i in names}

    @cached_property
    def details(self) -> dict[str, dict]:
        """Every tensor's details, by name."""
        return {d["name"]: d for d in self.interp.get_tensor_details()}

    def set_input(self, detail: dict, x) -> None:
        """Set one input (`detail`: one of self.inputs) from one sample."""
        x = np.asarray(x)
        shape = tuple(int(s) for s in detail["shape"])
        if x.shape != shape:
            if x.size != int(np.prod(shape)):
                raise ShapeError(
                    f"{shown_path(self.label)}: input {quoted(detail['name'])} expects one "
                    f"sample of shape {list(shape)}, the data holds samples of shape "
                    f"{list(x.shape)}")
            x = x.reshape(shape)
        self.interp.set_tensor(detail["index"], as_input(x, detail))

    def feed(self, sample: Mapping[str, np.ndarray]) -> None:
        """Set every input from one sample {input name: array}. Samples are independent:
        variable tensors (a fused LSTM's state) are reset first, so no state leaks from one
        sample into the next."""
        self.interp.reset_all_variables()
        for d in self.inputs:
            if d["name"] not in sample:
                raise EdgeliteError(f"{shown_path(self.label)}: the sample has no value for "
                                    f"input {quoted(d['name'])} (it has "
                                    f"{names_list(list(sample))})")
            self.set_input(d, sample[d["name"]])

    def run(self, sample: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Feed one sample, invoke, and return the outputs' values."""
        self.feed(sample)
        self.interp.invoke()
        return [self.value(d) for d in self.outputs]

    def value(self, detail: dict) -> np.ndarray:
        """A tensor's value: float32 for float and quantized tensors, other integers as they
        are (see module doc)."""
        if np.dtype(detail["dtype"]).kind == "f" or len(
                detail["quantization_parameters"]["scales"]):
            return self.interp.get_dequantized_tensor(detail["index"])
        return self.interp.get_tensor(detail["index"])

    def tensor(self, name: str) -> np.ndarray:
        """The value of the tensor named `name` (keep_all=True for intermediates)."""
        return self.value(self.details[name])

    def stored(self, index: int) -> np.ndarray:
        """Tensor `index` in its storage type."""
        return self.interp.get_tensor(index)


def run_all(model: bytes, samples: Iterable[Mapping[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """The outputs of `model` for every sample."""
    runner = ModelRunner(model)
    return [runner.run(s) for s in samples]
