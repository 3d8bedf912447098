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

Batches (``run_many``, ``run_all``): several samples per invoke where that gives each
sample's outputs bit for bit as it alone would (``batch_exact``): every op keeps samples
apart (the interpreter's batch-split test, batch_split.unsplittable) and computes in
integers -- exact at any batch -- or only converts element by element (QUANTIZE /
DEQUANTIZE at the edges). A float conv or matmul is left at batch 1: BLAS / SIMD sum a row
in an order that may depend on where it sits in the batch (ulp differences), and the
converter's choices (ranges, bias shifts, auto's scores) must not depend on batching.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, Mapping

import numpy as np

from ..interpreter import Interpreter
from ..interpreter.batch_split import unsplittable
from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from edgelite.names import quoted
from ..interpreter.quant_math import quantize
from .files import shown_path
from .sample_data import names_list

BATCH = 16          # samples per invoke in run_many (where exact)
ELEMENTWISE = {"QUANTIZE", "DEQUANTIZE"}   # float <-> integer, value by value


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

    def __init__(self, model: bytes, keep_all: bool = False, label: str = "the model",
                 batch: int = 1) -> None:
        self.label = label   # names the model in messages (a path, or e.g. "the float model")
        self.model_content = model
        self.interp = Interpreter(model_content=model, preserve_all_tensors=keep_all,
                                  split_batch=batch == 1)
        # `batch` samples per invoke where exact (run_batch), else the file's shapes
        self.batch = batch if batch > 1 and batch_exact(self.interp.model) else 1
        self._resize(self.batch)
        if self.batch > 1 and not keeps_samples_apart(self, self.batch):
            self.batch = 1
            self._resize(1)
        self.inputs = self.interp.get_input_details()
        self.outputs = self.interp.get_output_details()

    def _resize(self, batch: int) -> None:
        """Allocate with the inputs' leading 1 replaced by `batch` (1: as in the file)."""
        sg = self.interp.model.subgraphs[0]
        for i in sg.inputs if batch > 1 or self.interp.num_subgraphs() == 1 else ():
            shape = sg.tensors[i].shape
            self.interp.resize_tensor_input(i, [batch, *shape[1:]] if batch > 1 else shape)
        self.interp.allocate_tensors()

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


    def run_many(self, samples: list[Mapping[str, np.ndarray]],
                 batch: int = BATCH) -> list[list[np.ndarray]]:
        """``run`` for every sample, in invokes of `batch` samples where that is exact
        (module doc) -- on this runner when it was made batched, else on a second one --
        the last invoke padded with copies of its last sample; else one at a time."""
        if self.batch > 1:
            big = self
        else:
            big = self._batched(min(batch, len(samples))) if len(samples) > 1 else None
            if big is None:
                return [self.run(s) for s in samples]
        out: list[list[np.ndarray]] = []
        for k in range(0, len(samples), big.batch):
            chunk = list(samples[k:k + big.batch])
            pad = big.batch - len(chunk)
            out += big.run_batch(chunk + [chunk[-1]] * pad)[:len(chunk)]
        return out

    def _batched(self, batch: int) -> "ModelRunner | None":
        """A runner of the same model at `batch` samples per invoke, when exact."""
        cache = self.__dict__.setdefault("_batch_runners", {})
        if batch not in cache:
            cache[batch] = _batch_runner(self.model_content, self.label, batch) \
                if batch_exact(self.interp.model) else None
        return cache[batch]

    def run_batch(self, chunk: list[Mapping[str, np.ndarray]]) -> list[list[np.ndarray]]:
        """The outputs of each sample of `chunk` (as many as this runner's batch), run in
        one invoke: only for a runner made batched (exact). The chunk's values are
        converted together (as_input works value by value: the same as one by one)."""
        for d in self.inputs:
            name = d["name"]
            missing = next((s for s in chunk if name not in s), None)
            if missing is not None:
                self.feed(missing)   # the one-line error of a missing input
            one = [1, *d["shape"][1:]]
            size = int(np.prod(one))
            values = [np.asarray(s[name]) for s in chunk]
            if all(v.size == size for v in values) and len({v.dtype for v in values}) == 1:
                x = as_input(np.concatenate([v.reshape(one) for v in values]), d)
            else:
                x = np.concatenate([self._one(d, v) for v in values])
            self.interp.set_tensor(d["index"], x)
        self.interp.invoke()
        values = [self.value(d) for d in self.outputs]
        return [[v[i:i + 1].copy() for v in values] for i in range(len(chunk))]

    def _one(self, detail: dict, x) -> np.ndarray:
        """One sample of batched input `detail`, stored as set_input stores it alone."""
        one = dict(detail, shape=np.array([1, *detail["shape"][1:]]))
        x = np.asarray(x)
        if x.shape != tuple(one["shape"]):
            if x.size != int(np.prod(one["shape"])):
                self.set_input(one, x)   # the one-line shape error
            x = x.reshape(one["shape"])
        return as_input(x, one)


def _batch_runner(model: bytes, label: str, batch: int) -> ModelRunner | None:
    """A runner of `model` at `batch` samples per invoke, or None where that would not give
    each sample's values exactly (module doc)."""
    try:
        big = ModelRunner(model, label=label, batch=batch)
    except EdgeliteError:
        return None
    return big if big.batch == batch else None


def batch_exact(model) -> bool:
    """One subgraph without state, every input leading with a batch of 1 in the file, and
    every op integer or an element-by-element conversion (module doc)."""
    if len(model.subgraphs) != 1:
        return False
    sg = model.subgraphs[0]
    if any(t.is_variable for t in sg.tensors) or any(
            not sg.tensors[i].shape or sg.tensors[i].shape[0] != 1 for i in sg.inputs):
        return False
    for op in sg.operators:
        live = [sg.tensors[t] for t in (*op.inputs, *op.outputs)
                if t >= 0 and sg.tensors[t].data is None]
        if op.name not in ELEMENTWISE and any(t.dtype is None or t.dtype.kind not in "iub"
                                              for t in live):
            return False
    return True


def keeps_samples_apart(runner: ModelRunner, batch: int) -> bool:
    """Every op of the allocated model computes each of `batch` samples from that sample
    alone (the interpreter's batch-split test)."""
    sg = runner.interp.model.subgraphs[0]
    shapes = [tuple(int(x) for x in d["shape"]) for d in runner.interp.get_tensor_details()]
    arrays = {t.index: t.data for t in sg.tensors if t.data is not None}
    return unsplittable(sg, shapes, arrays, set(arrays), batch) is None


def run_all(model: bytes, samples: Iterable[Mapping[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """The outputs of `model` for every sample: batched where exact (module doc), in as few
    equal batches of at most BATCH samples as hold them all (the last one padded with
    copies of its last sample), so one interpreter is allocated."""
    samples = list(samples)
    chunks = -(-len(samples) // BATCH)
    size = -(-len(samples) // chunks) if samples else 1
    big = ModelRunner(model, batch=size)
    if big.batch == 1:
        return [big.run(s) for s in samples]
    out = []
    for k in range(0, len(samples), size):
        chunk = samples[k:k + size]
        out += big.run_batch(chunk + [chunk[-1]] * (size - len(chunk)))[:len(chunk)]
    return out
