"""`edgelite run`: feed .npy files to a model and print or save the outputs."""

from __future__ import annotations

import io
import os

import click
import numpy as np

from ..converter.export import write_atomic
from ..interpreter import Interpreter
from ..interpreter.errors import EdgeliteError, ShapeError


def _load_inputs(specs, details) -> dict[int, np.ndarray]:
    by_name = {d["name"]: d for d in details}
    feeds: dict[int, np.ndarray] = {}
    for k, spec in enumerate(specs):
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = None, spec
        if name is None:
            if k >= len(details):
                raise EdgeliteError(f"{len(specs)} --input files for a model with "
                                    f"{len(details)} input(s)")
            detail = details[k]
        elif name not in by_name:
            raise EdgeliteError(f"the model has no input named {name!r}; inputs are "
                                f"{sorted(by_name)}")
        else:
            detail = by_name[name]
        if not os.path.exists(path):
            raise EdgeliteError(f"input file {path!r} does not exist")
        try:
            feeds[detail["index"]] = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise EdgeliteError(f"cannot read {path!r} as .npy: {e}") from None
    missing = [d["name"] for d in details if d["index"] not in feeds]
    if missing:
        raise EdgeliteError(f"no data for input(s) {missing}; pass --input NAME=FILE.npy")
    return feeds


def run_model(model: str, specs, output: str | None) -> None:
    interp = Interpreter(model_path=model)
    details = interp.get_input_details()
    feeds = _load_inputs(specs, details)
    for d in details:
        x = feeds[d["index"]]
        if tuple(x.shape) != tuple(d["shape"]):
            if x.ndim != len(d["shape"]):
                raise ShapeError(f"input {d['name']!r} expects shape {list(d['shape'])}, "
                                 f"the file holds {list(x.shape)}")
            interp.resize_tensor_input(d["index"], list(x.shape))
    interp.allocate_tensors()
    for index, x in feeds.items():
        interp.set_tensor(index, x)
    interp.invoke()
    outs = {d["name"]: interp.get_tensor(d["index"]) for d in interp.get_output_details()}
    if output:
        buf = io.BytesIO()
        np.savez(buf, **outs)
        write_atomic(output, buf.getvalue())
        click.echo(f"wrote {output}: " + ", ".join(f"{n} {list(v.shape)}" for n, v in outs.items()))
        return
    with np.printoptions(precision=5, suppress=True, threshold=200):
        for name, v in outs.items():
            click.echo(f"{name}: {v.dtype} {list(v.shape)}")
            click.echo(str(v))
            if v.ndim == 2 and v.shape[1] > 1:
                click.echo(f"argmax per row: {v.argmax(axis=1).tolist()}")
