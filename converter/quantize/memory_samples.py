"""Calibration data given in memory instead of as a file (QuantizeOptions.calib).

Accepted, as TensorFlow's converter and numpy users write it:
  * one array (first axis = samples) or {input name: array}: read as an .npy / .npz file is;
  * a callable returning an iterable (TF's `representative_dataset`), or an iterable,
    of samples: each one a list / tuple of arrays in the model's input order, a dict
    {input name (or signature name): array}, or a single array for a one-input model.
    A sample's arrays may carry the batch dim of 1 (TF's habit) or not.
"""

from __future__ import annotations

import os
from typing import Callable, Iterator, Mapping

import numpy as np

from edgelite.errors import DTypeError, EdgeliteError
from edgelite.names import quoted
from ..sample_data import NUMERIC_KINDS, dtype_text, names_list, pick_inputs

Sample = dict[str, np.ndarray]


def is_path(data) -> bool:
    return isinstance(data, (str, bytes, os.PathLike))


def once_iterable(data):
    """A one-shot iterator (a generator object) as a list, so calibration, bias correction
    and the held-out checks can each read it again; anything else unchanged."""
    if is_path(data) or isinstance(data, np.ndarray) or callable(data) or hasattr(data, "keys"):
        return data
    try:
        iterator = iter(data)
    except TypeError:
        raise EdgeliteError("calibration data: expected a file path, an array, a dict of "
                            "arrays, or an iterable / generator function of samples, not "
                            f"{type(data).__name__}") from None
    return list(iterator) if iterator is data else data


def memory_samples(data, input_names: list[str], preprocess: Callable,
                   aliases: Mapping[str, str] | None = None,
                   signature: str | None = None) -> Iterator[Sample]:
    """Yield one {input name: array} per sample of in-memory calibration `data`; a sample
    given as (signature key, inputs) -- TF's form for multi-signature models -- is read only
    by the signature `signature`."""
    what = "calibration data"
    if isinstance(data, np.ndarray) or hasattr(data, "keys"):
        arrays = pick_inputs(data, input_names, what, aliases)
        for i in range(len(next(iter(arrays.values())))):
            yield {n: preprocess(a[i]) for n, a in arrays.items()}
        return
    items = data() if callable(data) else data
    try:
        iterator = iter(items)
    except TypeError:
        raise EdgeliteError(f"{what}: the function gave {type(items).__name__}, not an "
                            "iterable of samples (a generator: yield [array, ...])") from None
    for k, item in enumerate(iterator):
        if _tagged(item):
            if item[0] != signature:
                continue
            item = item[1]
        sample = _one_sample(item, input_names, aliases or {}, f"{what} sample {k}")
        yield {n: preprocess(a) for n, a in sample.items()}


def _tagged(item) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) \
        and hasattr(item[1], "keys")


def _one_sample(item, input_names: list[str], aliases: Mapping[str, str],
                what: str) -> Sample:
    if hasattr(item, "keys"):
        by_name = {aliases.get(key, key): value for key, value in item.items()}
        missing = [n for n in input_names if n not in by_name]
        if missing:
            inputs = names_list(_shown(input_names, aliases))
            raise EdgeliteError(f"{what} has keys {names_list(list(item.keys()))}; it needs "
                                f"one array per model input {inputs}")
        sample = {n: by_name[n] for n in input_names}
    elif isinstance(item, (list, tuple)):
        if len(item) != len(input_names):
            raise EdgeliteError(f"{what} has {len(item)} array(s); the model has "
                                f"{len(input_names)} input(s) "
                                f"{names_list(_shown(input_names, aliases))}, in that order")
        sample = dict(zip(input_names, item))
    elif len(input_names) == 1:
        sample = {input_names[0]: item}
    else:
        raise EdgeliteError(f"{what} is one array; the model has {len(input_names)} inputs: "
                            "give a list in input order or a dict by input name")
    out = {}
    for name, value in sample.items():
        a = np.asarray(value)
        if a.dtype.kind not in NUMERIC_KINDS:
            raise DTypeError(f"{what}: the data for input {quoted(name)} holds "
                             f"{dtype_text(a.dtype)}, not numbers")
        out[name] = a
    return out


def _shown(input_names: list[str], aliases: Mapping[str, str]) -> list[str]:
    """The inputs by the names a user knows: a signature's, else the tensors'."""
    back = {tensor: alias for alias, tensor in aliases.items()}
    return [back.get(n, n) for n in input_names]
