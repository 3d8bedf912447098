"""Progress of the long commands on stderr (stdout stays the result: a table, JSON, CSV),
with a known length and an ETA where the number of samples can be read from the data
file's header before the run: calibration, compare, eval."""

from __future__ import annotations

import contextlib
import os
import sys
import zipfile

import click
import numpy as np


def sample_count(path, shards: bool = False) -> int | None:
    """The number of samples (first axis) a .npy / .npz holds, or files in a folder (with
    `shards`: the samples of the folder's .npy / .npz shards), read from headers only; None
    where it cannot be told cheaply (the run reports any problem with the file itself)."""
    if path is None:
        return None
    path = os.fspath(path)
    try:
        if os.path.isdir(path) and shards:
            counts = [sample_count(os.path.join(path, f)) for f in sorted(os.listdir(path))
                      if f.endswith((".npy", ".npz"))]
            return None if None in counts else sum(counts)
        if os.path.isdir(path):
            from ..converter.quantize.calibrate import IMAGE_EXTENSIONS
            return sum(1 for f in os.listdir(path)
                       if f.endswith(".npy") or f.lower().endswith(IMAGE_EXTENSIONS))
        with open(path, "rb") as f:
            if f.read(6) == b"\x93NUMPY":
                f.seek(0)
                return _first_axis(f)
        with zipfile.ZipFile(path) as z:
            lengths = set()
            for name in z.namelist():
                if name.endswith(".npy"):
                    with z.open(name) as member:
                        lengths.add(_first_axis(member))
            return lengths.pop() if len(lengths) == 1 else None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def _first_axis(f) -> int | None:
    version = np.lib.format.read_magic(f)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, _, _ = read(f)  # the header only
    return int(shape[0]) if shape else None


@contextlib.contextmanager
def progress_bar(label: str, total: int | None):
    """A click progress bar on stderr: with `total` known, a length and an ETA; else a
    count. Nothing is drawn when stderr is not a terminal (a log, a pipe, a test runner).
    Yields the update(n) callback the converter's runs take."""
    with click.progressbar(length=total or 0, label=label, file=sys.stderr,
                           show_eta=bool(total), show_pos=True,
                           hidden=not _is_terminal(sys.stderr)) as bar:
        yield bar.update


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def limited(total: int | None, limit: int | None) -> int | None:
    """`total` samples of which at most `limit` are used."""
    if total is None:
        return limit
    return total if limit is None else min(total, limit)
