"""Run a model (float or quantized) on calibration samples in edgelite's interpreter.

Quantized tensors are read back as real values: real = scale * (q - zero_point).
Samples are {input name: array without the batch dim} (calibrate.load_samples).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ...interpreter import Interpreter


def dequantize(value: np.ndarray, detail: dict) -> np.ndarray:
    if value.dtype == np.float32 or value.dtype == np.float64:
        return value.astype(np.float32, copy=False)
    qp = detail["quantization_parameters"]
    scales, zps = qp["scales"], qp["zero_points"]
    if len(scales) == 0:
        return value.astype(np.float32)
    shape = [1] * value.ndim
    if len(scales) > 1:
        shape[qp["quantized_dimension"]] = -1
    s = np.asarray(scales, np.float64).reshape(shape)
    z = np.asarray(zps, np.float64).reshape(shape)
    return (s * (value.astype(np.float64) - z)).astype(np.float32)


def quantize_input(x: np.ndarray, detail: dict) -> np.ndarray:
    """A real-valued input for an integer-io model: q = clamp(round(x / s) + zp)."""
    s, z = detail["quantization"]
    if detail["dtype"] == np.float32 or s == 0.0:  # float, or plain integers (token ids)
        return np.asarray(x).astype(detail["dtype"])
    info = np.iinfo(detail["dtype"])
    q = np.sign(x / s) * np.floor(np.abs(x / s) + 0.5) + z   # round half away from zero
    return np.clip(q, info.min, info.max).astype(detail["dtype"])


def feed(interp: Interpreter, inputs: dict[str, dict], sample: dict[str, np.ndarray]) -> None:
    """Set every input from one sample (a missing batch dim of 1 is added)."""
    for name, value in sample.items():
        d = inputs[name]
        x = np.asarray(value, np.float32)
        if x.shape != tuple(d["shape"]) and x.size == np.prod(d["shape"]):
            x = x.reshape(d["shape"])
        interp.set_tensor(d["index"], quantize_input(x, d))


class ModelRunner:
    """One interpreter for a model; outputs (and, with `keep_all`, any tensor) as floats."""

    def __init__(self, model: bytes, keep_all: bool = False) -> None:
        self.interp = Interpreter(model_content=model, preserve_all_tensors=keep_all)
        self.interp.allocate_tensors()
        self.inputs = {d["name"]: d for d in self.interp.get_input_details()}
        self.outputs = self.interp.get_output_details()
        self.details = {d["name"]: d for d in self.interp.get_tensor_details()}

    def run(self, sample: dict[str, np.ndarray]) -> list[np.ndarray]:
        feed(self.interp, self.inputs, sample)
        self.interp.invoke()
        return [dequantize(self.interp.get_tensor(d["index"]), d) for d in self.outputs]

    def tensor(self, name: str) -> np.ndarray:
        d = self.details[name]
        return dequantize(self.interp.get_tensor(d["index"]), d)


def run_all(model: bytes, samples: Iterable[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """The outputs of `model` for every sample."""
    runner = ModelRunner(model)
    return [runner.run(s) for s in samples]
