"""`edgelite run`: feed .npy files to a model and print or save the outputs."""

from __future__ import annotations

import io
import os
import zipfile

import click
import numpy as np

from ..converter.files import check_not_input, check_writable, shown_path, write_atomic
from ..converter.sample_data import names_list, read_array
from ..interpreter import Interpreter
from edgelite.errors import EdgeliteError, ShapeError
from edgelite.names import quoted, shown

LISTED_OUTPUTS = 8  # outputs named in the "wrote FILE" line; the .npz holds them all


def _split_spec(spec: str, by_name: dict) -> tuple[str | None, str]:
    """'NAME=FILE' -> (NAME, FILE); 'FILE' (or a file whose own name holds '=') -> (None,
    FILE)."""
    name, sep, path = spec.partition("=")
    if not sep or (name not in by_name and os.path.exists(spec)):
        return None, spec
    return name, path


def _load_inputs(specs, details) -> dict[int, np.ndarray]:
    by_name = {d["name"]: d for d in details}
    feeds: dict[int, np.ndarray] = {}
    for k, spec in enumerate(specs):
        name, path = _split_spec(spec, by_name)
        if name is None:
            if k >= len(details):
                raise EdgeliteError(f"{len(specs)} --input files for a model with "
                                    f"{len(details)} input(s)")
            detail = details[k]
        elif name not in by_name:
            raise EdgeliteError(f"the model has no input named {quoted(name)}; inputs are "
                                f"{names_list(by_name)}")
        else:
            detail = by_name[name]
        what = f"input {quoted(detail['name'])}: file"
        feeds[detail["index"]] = read_array(path, what)
    missing = [d["name"] for d in details if d["index"] not in feeds]
    if missing:
        raise EdgeliteError(f"no data for input(s) {names_list(missing)}; pass --input "
                            "NAME=FILE.npy")
    return feeds


def run_model(model: str, specs, output: str | None, as_json: bool = False) -> None:
    if output:
        check_writable(output)
        check_not_input(output, [model, *specs, *(s.partition("=")[2] for s in specs)])
    interp = Interpreter(model_path=model)
    details = interp.get_input_details()
    feeds = _load_inputs(specs, details)
    for d in details:
        x = feeds[d["index"]]
        expected = [int(s) for s in d["shape"]]
        if list(x.shape) != expected:
            if x.ndim != len(expected):
                raise ShapeError(f"input {quoted(d['name'])} expects shape {expected}, the "
                                 f"file holds {list(x.shape)}")
            interp.resize_tensor_input(d["index"], list(x.shape))
    interp.allocate_tensors()
    for index, x in feeds.items():
        interp.set_tensor(index, x)
    interp.invoke()
    outs = [(d["name"], interp.get_tensor(d["index"])) for d in interp.get_output_details()]
    if output:
        write_atomic(output, _npz_bytes(outs))
        listed = [f"{shown(n)} {list(v.shape)}" for n, v in outs[:LISTED_OUTPUTS]]
        if len(outs) > LISTED_OUTPUTS:
            listed.append(f"and {len(outs) - LISTED_OUTPUTS} more")
        click.echo(f"wrote {shown_path(output)}: {', '.join(listed)}")
        return
    if as_json:
        from .json_out import dumps, outputs
        click.echo(dumps(outputs(outs)))
        return
    with np.printoptions(precision=5, suppress=True, threshold=200):
        for name, v in outs:
            click.echo(f"{shown(name)}: {v.dtype} {list(v.shape)}")
            click.echo(str(v))
            if v.ndim == 2 and v.shape[1] > 1:
                click.echo(f"argmax per row: {v.argmax(axis=1).tolist()}")


def _npz_bytes(outs: list[tuple[str, np.ndarray]]) -> bytes:
    """An .npz (what numpy.savez writes) with one array per output, named after it; a name
    met twice gets its position appended. Written member by member, so any name works
    (numpy.savez takes names as keyword arguments: 'file' or 'allow_pickle' would clash)."""
    buf = io.BytesIO()
    used: set[str] = set()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for k, (name, value) in enumerate(outs):
            key = name if name not in used else f"{name}:{k}"
            used.add(key)
            with archive.open(key + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
    return buf.getvalue()
