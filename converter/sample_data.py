"""Sample data files (.npy / .npz), read without trusting them; arrays picked per model input.

One reader serves every command and API that takes data: ``run --input``, calibration (a
.npy / .npz file or a folder of .npy files), ``compare`` / ``eval`` data and labels. A data
file is untrusted: a 100-byte .npy can declare 10^12 elements, and ``np.load`` would try to
allocate all of them before noticing the file is short. So before anything is allocated:

* the file type comes from its first bytes (an image or a pickle renamed .npy is named as
  such, an empty file as empty), not from its extension;
* each .npy header (of the file, or of each .npz member) is parsed from a bounded read with
  numpy's own parser, and must declare a plain numeric or bool dtype (no object arrays, so no
  pickles; no strings or records), non-negative dimensions, and exactly as many data bytes
  (shape product * itemsize, in Python ints) as the file or the member actually holds -- the
  file size after the header for a .npy, the zip directory's uncompressed size for an .npz
  member, whose claim is itself bounded by its compressed size (deflate expands at most
  1032:1, RFC 1951: a 258-byte match per two bits);
* the arrays of one file together stay under MAX_DATA_BYTES.

Then the data is read into one preallocated array per tensor. Every failure is one
EdgeliteError line naming the file (and the array) and saying what to do.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from dataclasses import dataclass
from typing import Mapping

import numpy as np
from numpy.lib import format as npy_format

from edgelite.errors import DTypeError, EdgeliteError, ShapeError
from edgelite.fileio import open_regular
from edgelite.names import quoted, shown
from .files import quoted_path

MAX_DATA_BYTES = 2**32  # 4 GiB: the arrays of one data file together (a safety limit)
MAX_HEADER_BYTES = 10_000  # numpy's own limit on .npy header text (format._MAX_HEADER_SIZE)
MAX_DEFLATE_RATIO = 1032  # deflate's largest expansion (RFC 1951: 258 bytes per 2 bits)
NUMERIC_KINDS = "biufc"  # bool, signed / unsigned integers, floats, complex
_READ_CHUNK = 2**20  # zip members read faster in pieces (numpy reads them in 256 KiB ones)

_NPY_MAGIC = npy_format.MAGIC_PREFIX  # b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive
_OTHER_FORMATS = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
                  (b"GIF8", "a GIF image"), (b"\x80", "a Python pickle"))
_DTYPE_KINDS = {"U": "text", "S": "bytes", "O": "Python objects", "V": "records",
                "M": "dates", "m": "time deltas"}
_SAVE_HINT = "save numbers with numpy.save (one array) or numpy.savez (named arrays)"


@dataclass(frozen=True)
class _Header:
    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    offset: int  # bytes before the data: magic, length field, header text

    @property
    def count(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def describe(self) -> str:
        return f"{self.dtype.name} {list(self.shape)}"


def read_arrays(path: str | os.PathLike, what: str = "data",
                limit: int = MAX_DATA_BYTES) -> np.ndarray | dict[str, np.ndarray]:
    """The array of a .npy file, or {name: array} of an .npz file, checked before allocating
    (see module doc); errors say "<what> '<path>': ..."."""
    path = os.fspath(path)
    label = f"{what} {quoted_path(path)}"
    with open_regular(path, label) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        f.seek(0)
        if head.startswith(_NPY_MAGIC):
            header = _read_header(f, label)
            _check(header, size - header.offset, label, limit)
            return _read_data(f, header, label)
        if head[:4] in _ZIP_MAGICS:
            return _read_npz(f, size, label, limit)
    raise EdgeliteError(f"{label} {_not_an_array(head)}; {_SAVE_HINT}")


def read_array(path: str | os.PathLike, what: str = "data",
               limit: int = MAX_DATA_BYTES) -> np.ndarray:
    """One array: a .npy file, or an .npz file that holds exactly one array."""
    data = read_arrays(path, what, limit)
    if isinstance(data, np.ndarray):
        return data
    if len(data) != 1:
        raise EdgeliteError(f"{what} {quoted_path(os.fspath(path))} holds {len(data)} arrays "
                            f"{names_list(data)}; give a .npy file (one array)")
    return next(iter(data.values()))


@dataclass(frozen=True)
class NpyLayout:
    """Where a checked .npy file keeps its samples (npy_layout)."""
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int          # bytes before the data
    fortran_order: bool  # stored column-major: samples are not contiguous rows


def npy_layout(path: str | os.PathLike, what: str = "data") -> NpyLayout | None:
    """The header of a .npy file, checked as read_arrays checks it (numeric dtype, data
    bytes == file size after the header) but with no size limit, for memory-mapping a file
    piece by piece without reading it whole. None for an .npz (zip) file, whatever its name
    (read it with read_arrays); anything else is refused as read_arrays refuses it."""
    path = os.fspath(path)
    label = f"{what} {quoted_path(path)}"
    with open_regular(path, label) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        if head[:4] in _ZIP_MAGICS:
            return None
        if not head.startswith(_NPY_MAGIC):
            raise EdgeliteError(f"{label} {_not_an_array(head)}; {_SAVE_HINT}")
        f.seek(0)
        header = _read_header(f, label)
        _check(header, size - header.offset, label, limit=size + 1)
    if not header.shape:
        raise ShapeError(f"{label} is a single number (a 0-d array); samples need a first "
                         "axis, shape (N, ...)")
    return NpyLayout(header.dtype, header.shape, header.offset, header.fortran_order)


def _not_an_array(head: bytes) -> str:
    if not head:
        return "is empty (0 bytes)"
    for magic, kind in _OTHER_FORMATS:
        if head.startswith(magic):
            return f"is {kind}, not a .npy / .npz array file"
    return "is not a .npy / .npz array file (no numpy or zip signature)"


def _read_header(f, label: str) -> _Header:
    """Parse a .npy header from bounded reads (numpy's parser on the header text only)."""
    truncated = f"{label} is truncated inside its .npy header; write it again"
    magic = f.read(len(_NPY_MAGIC) + 2)  # b"\x93NUMPY", major and minor version
    if len(magic) < len(_NPY_MAGIC) + 2:
        raise EdgeliteError(truncated)
    major = magic[len(_NPY_MAGIC)]
    if major not in (1, 2, 3):
        raise EdgeliteError(f"{label} has an unknown .npy format version {major}; "
                            f"{_SAVE_HINT}")
    width = 2 if major == 1 else 4  # the header length: uint16 in 1.0, uint32 after
    length_field = f.read(width)
    if len(length_field) < width:
        raise EdgeliteError(truncated)
    length = int.from_bytes(length_field, "little")
    if length > MAX_HEADER_BYTES:
        raise EdgeliteError(f"{label} has a corrupt .npy header (its length field says "
                            f"{length} bytes, over numpy's {MAX_HEADER_BYTES}-byte limit)")
    text = f.read(length)
    if len(text) < length:
        raise EdgeliteError(truncated)
    probe = io.BytesIO(magic + length_field + text)
    try:
        version = npy_format.read_magic(probe)
        reader = (npy_format.read_array_header_1_0 if version == (1, 0)
                  else npy_format.read_array_header_2_0)  # 3.0 differs only in encoding
        shape, fortran_order, dtype = reader(probe, max_header_size=MAX_HEADER_BYTES)
    except Exception as e:  # noqa: BLE001 -- numpy's parser on hostile text raises
        # ValueError, SyntaxError, tokenize.TokenError, RecursionError...: all say "corrupt"
        raise EdgeliteError(f"{label} has a corrupt .npy header ({type(e).__name__}); "
                            "write it again") from None
    return _Header(np.dtype(dtype), tuple(shape), bool(fortran_order), probe.tell())


def _check(header: _Header, available: int, label: str, limit: int, before: int = 0) -> None:
    """The header is plain numeric data of exactly ``available`` bytes, and with the
    ``before`` bytes already read from the same file stays within ``limit``."""
    dtype = header.dtype
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype:
        raise DTypeError(f"{label} holds {dtype_text(dtype)}, not a numeric array; "
                         f"{_SAVE_HINT}")
    if any(d < 0 for d in header.shape):
        raise EdgeliteError(f"{label} has a corrupt .npy header (shape {list(header.shape)})")
    nbytes = header.nbytes
    if nbytes != available:
        held = "only " if available < nbytes else ""
        raise EdgeliteError(
            f"{label} declares {header.describe()}, {size_text(nbytes)}, but holds "
            f"{held}{size_text(max(available, 0))} of data: the file is truncated or corrupt; "
            "write it again")
    if before + nbytes > limit:
        total = f" ({size_text(before + nbytes)} with the arrays before it)" if before else ""
        raise EdgeliteError(f"{label} holds {header.describe()}, {size_text(nbytes)}{total}, "
                            f"over the {size_text(limit)} limit for a data file; use fewer "
                            "samples or split the file")


def _read_data(f, header: _Header, label: str) -> np.ndarray:
    """The data after a checked header, read into one preallocated array."""
    flat = np.empty(header.count, header.dtype)
    view = memoryview(flat.view(np.uint8))
    done = 0
    while done < len(view):
        n = f.readinto(view[done:done + _READ_CHUNK])
        if not n:
            raise EdgeliteError(f"{label} ended early (after {size_text(done)} of "
                                f"{size_text(len(view))}); write it again")
        done += n
    if header.fortran_order:  # stored column-major, as numpy.lib.format.read_array reads it
        return flat.reshape(header.shape[::-1]).transpose()
    return flat.reshape(header.shape)


def _read_npz(f, size: int, label: str, limit: int) -> dict[str, np.ndarray]:
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
        raise EdgeliteError(f"{label} is not a readable .npz (zip) file ({_reason(e)}); "
                            "write it again with numpy.savez") from None
    with archive:
        members = archive.infolist()
        _check_directory(members, size, label)
        arrays, total = {}, 0
        for info in members:
            name = info.filename[:-len(".npy")]
            where = f"array {quoted(name)} in {label}"
            try:
                with archive.open(info) as member:
                    header = _read_header(member, where)
                    _check(header, info.file_size - header.offset, where, limit, total)
                    arrays[name] = _read_data(member, header, where)
                    total += header.nbytes
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                    NotImplementedError, RuntimeError) as e:
                raise EdgeliteError(f"{where} is corrupt ({_reason(e)}); write the file "
                                    "again") from None
    return arrays


def _check_directory(members: list[zipfile.ZipInfo], size: int, label: str) -> None:
    """Bound what the zip directory claims before anything is decompressed: each member's
    uncompressed size by its compressed size (and that by the file's size)."""
    if not members:
        raise EdgeliteError(f"{label} holds no arrays; {_SAVE_HINT}")
    for info in members:
        if not info.filename.endswith(".npy"):
            raise EdgeliteError(f"{label} holds {quoted(info.filename)}, which is not a .npy "
                                f"array; {_SAVE_HINT}")
        where = f"array {quoted(info.filename[:-4])} in {label}"
        if info.flag_bits & 0x1:
            raise EdgeliteError(f"{where} is encrypted; save it again without a password")
        if info.compress_type == zipfile.ZIP_STORED:
            bound = info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            bound = info.compress_size * MAX_DEFLATE_RATIO + 1024  # + a header's worth
        else:
            raise EdgeliteError(f"{where} uses zip compression method {info.compress_type}; "
                                "save it with numpy.savez or numpy.savez_compressed")
        if info.compress_size > size or info.file_size > bound:
            raise EdgeliteError(
                f"{where} claims {size_text(info.file_size)} from "
                f"{size_text(info.compress_size)} stored, which the file cannot hold: it is "
                "corrupt; write it again")


def pick_inputs(data: np.ndarray | Mapping[str, np.ndarray], input_names: list[str],
                what: str, aliases: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """{input name: array whose first axis is the sample axis}, all with the same length.

    ``data`` is one array (a model with one input) or {name: array}: arrays named after the
    inputs (or after their `aliases`: a SavedModel signature's names for the input tensors,
    {"x": "serving_default_x"}), or for a single input an array "x" (an (x, y) data set)
    or the only array."""
    if isinstance(data, np.ndarray) or not hasattr(data, "keys"):
        if len(input_names) != 1:
            raise EdgeliteError(f"the model has {len(input_names)} inputs "
                                f"{names_list(input_names)}: give the data as an .npz (or "
                                "dict) with one array per input name")
        arrays = {input_names[0]: np.asarray(data)}
    else:
        keys = list(data.keys())
        key_of = {k: k for k in keys}  # input name -> the data's key for it
        for alias, name in (aliases or {}).items():
            if alias in key_of and name not in key_of:
                key_of[name] = alias
        if set(input_names) <= set(key_of):
            arrays = {n: np.asarray(data[key_of[n]]) for n in input_names}
        elif len(input_names) == 1 and ("x" in keys or len(keys) == 1):
            arrays = {input_names[0]: np.asarray(data["x" if "x" in keys else keys[0]])}
        else:
            named = names_list(sorted(aliases)) if aliases else names_list(input_names)
            raise EdgeliteError(f"{what} holds arrays {names_list(keys)}; name them after the "
                                f"model inputs {named}")
    for name, a in arrays.items():
        if a.dtype.kind not in NUMERIC_KINDS:
            raise DTypeError(f"{what}: the data for input {quoted(name)} holds "
                             f"{dtype_text(a.dtype)}, not numbers")
        if a.ndim == 0:
            raise ShapeError(f"{what}: the data for input {quoted(name)} is a single number "
                             "(a 0-d array); samples need a first axis, shape (N, ...)")
    counts = {len(a) for a in arrays.values()}
    if len(counts) != 1:
        listed = [f"{quoted(n)}: {len(a)}" for n, a in list(arrays.items())[:8]]
        more = f" and {len(arrays) - 8} more" if len(arrays) > 8 else ""
        raise ShapeError(f"{what}: the inputs have different sample counts "
                         f"{', '.join(listed)}{more}")
    if not counts.pop():
        raise EdgeliteError(f"{what} holds no samples")
    return arrays


LIST_NAME_CHARS = 60   # one name in a list: escaped, head and tail kept
LIST_CHARS = 240       # the names of one list together (the first is always shown)


def names_list(names, max_items: int = 8) -> str:
    """['a', 'b', 'c' and 5 more] -- names from a file, escaped and cut, at most
    ``max_items`` of them and about ``LIST_CHARS`` characters, so a message naming them
    stays one readable line."""
    names = list(names)
    shown_names: list[str] = []
    used = 0
    for n in names[:max_items]:
        item = quoted(n, LIST_NAME_CHARS)
        if shown_names and used + len(item) > LIST_CHARS:
            break
        shown_names.append(item)
        used += len(item) + 2
    more = len(names) - len(shown_names)
    return f"[{', '.join(shown_names)}{f' and {more} more' if more > 0 else ''}]"


def dtype_text(dtype: np.dtype) -> str:
    kind = _DTYPE_KINDS.get(dtype.kind)
    return f"{kind} ({dtype.str})" if kind else dtype.name


def size_text(n: int) -> str:
    """4000000000000 -> '4000000000000 bytes (3.6 TiB)'."""
    if n < 1024:
        return f"{n} bytes"
    exp = min(int(math.log(n, 1024)), 6)
    return f"{n} bytes ({n / 1024 ** exp:.1f} {'KMGTPE'[exp - 1]}iB)"


def _reason(e: BaseException) -> str:
    return shown(getattr(e, "strerror", None) or str(e) or type(e).__name__)
