"""Reading files the user names: one clear line instead of an OSError, and no hang.

A path on the command line or in an API call may name a folder, a missing or unreadable
file, or a named pipe / device: opening a pipe for reading blocks until some writer
appears, and /dev/zero never ends. ``open_regular`` refuses everything but a regular file
(checked before opening, and again on the open descriptor in case the path was swapped
meanwhile) and turns OSError into one ``error`` line naming the file; ``read_regular``
also bounds the size before reading. Used by the .tflite, GraphDef and data-file readers.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from .errors import EdgeliteError
from .names import quoted, shown


def _refuse(error: type[EdgeliteError], label: str, why: str) -> EdgeliteError:
    return error(f"cannot read {label}: {why}")


def _check_regular(mode: int, error: type[EdgeliteError], label: str) -> None:
    if stat.S_ISDIR(mode):
        raise _refuse(error, label, "it is a directory")
    if not stat.S_ISREG(mode):  # a pipe would wait for a writer, a device may never end
        raise _refuse(error, label, "it is not a regular file")


def open_regular(path, label: str | None = None,
                 error: type[EdgeliteError] = EdgeliteError) -> BinaryIO:
    """``path`` opened for binary reading. ``label`` says what the file is, with its quoted
    name ("model 'm.tflite'"; default: the quoted path); ``error`` is the EdgeliteError
    subclass raised."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise error(f"a file path must be a str or os.PathLike, got {type(path).__name__}")
    label = label or quoted(os.fsdecode(path))
    try:
        _check_regular(os.stat(path).st_mode, error, label)
        f = open(path, "rb")
    except FileNotFoundError:
        raise _refuse(error, label, "no such file") from None
    except PermissionError:
        raise _refuse(error, label, "permission denied") from None
    except OSError as exc:
        raise _refuse(error, label, shown(exc.strerror or str(exc))) from None
    try:
        _check_regular(os.fstat(f.fileno()).st_mode, error, label)
    except BaseException:
        f.close()
        raise
    return f


def read_regular(path, label: str | None = None, error: type[EdgeliteError] = EdgeliteError,
                 max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (see ``open_regular``), refused before
    reading when it holds more than ``max_bytes``."""
    with open_regular(path, label, error) as f:
        size = os.fstat(f.fileno()).st_size
        if max_bytes is not None and size > max_bytes:
            raise error(f"{label or quoted(os.fsdecode(path))} holds {size} bytes, over the "
                        f"{max_bytes}-byte limit")
        try:
            return f.read()
        except OSError as exc:
            raise _refuse(error, label or quoted(os.fsdecode(path)),
                          shown(exc.strerror or str(exc))) from None
