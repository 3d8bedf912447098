"""The one data reader (converter/sample_data.py): hostile .npy / .npz files are refused with
one line naming the file (and array) before anything big is allocated; good files read
exactly as numpy.load reads them."""

import os
import pickle
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

from edgelite.converter.sample_data import (MAX_DATA_BYTES, names_list, pick_inputs,
                                            read_array, read_arrays)
from edgelite.errors import DTypeError, EdgeliteError, ShapeError

from .datafiles import npy_bytes, npy_header

SMALL_PEAK = 2**20  # bytes: a refused file may cost its header (parsed), never its claim


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refused(path, match, kind=EdgeliteError, **kw):
    """read_arrays refuses `path` (read by its bare name, from its folder) with `match`,
    peaking below SMALL_PEAK bytes."""
    cwd = os.getcwd()
    os.chdir(path.parent)
    tracemalloc.start()
    try:
        with pytest.raises(kind, match=match) as info:
            read_arrays(path.name, "data", **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        os.chdir(cwd)
    assert peak < SMALL_PEAK, peak
    message = str(info.value)
    assert "\n" not in message and path.name in message
    return message


@pytest.mark.parametrize("x", [
    np.arange(24, dtype=np.float32).reshape(2, 3, 4),
    np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    np.arange(5, dtype=">i4"),
    np.array([True, False, True]),
    np.arange(6, dtype=np.float16).reshape(3, 2),
    np.array([1 + 2j, 3 - 4j], np.complex64),
    np.float32(3.5),                      # 0-d: fine for a scalar input (run --input)
    np.zeros((0, 3), np.uint8),
], ids=["c-order", "fortran", "big-endian", "bool", "float16", "complex", "0-d", "empty"])
def test_good_npy_reads_as_numpy_does(tmp_path, x):
    path = write(tmp_path, "x.npy", npy_bytes(x))
    got = read_arrays(path)
    want = np.load(path)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert got.flags.f_contiguous == want.flags.f_contiguous


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_good_npz_reads_as_numpy_does(tmp_path, save):
    path = tmp_path / "d.npz"
    save(path, x=np.arange(12, dtype=np.int8).reshape(3, 4), y=np.array([0.5, 1.5]))
    got = read_arrays(path)
    assert sorted(got) == ["x", "y"]
    with np.load(path) as want:
        for k in got:
            np.testing.assert_array_equal(got[k], want[k])
            assert got[k].dtype == want[k].dtype


def test_npy_bomb_is_refused_before_allocating(tmp_path):
    """~100 bytes declaring 10^12 float32 (3.6 TiB): refused from the header alone."""
    path = write(tmp_path, "bomb.npy", npy_header() + b"\0" * 16)
    assert path.stat().st_size < 150
    message = refused(path, "declares float32")
    assert "[1000000000000]" in message and "4000000000000 bytes (3.6 TiB)" in message
    assert "holds only 16 bytes" in message


def test_npz_member_bomb_is_refused_before_allocating(tmp_path):
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", npy_header(shape=(10**6, 10**6)) + b"\0" * 8)
    message = refused(path, "array 'x' in data 'bomb.npz' declares float32")
    assert "[1000000, 1000000]" in message and "3.6 TiB" in message


def test_npz_directory_claim_is_bounded_by_the_compressed_size(tmp_path):
    """The zip directory itself lies: 4 GiB uncompressed from a few hundred bytes."""
    path = tmp_path / "claim.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", npy_bytes(np.arange(100.0)))
    data = bytearray(path.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 0xFFFFFFF0)  # uncompressed size field
    path.write_bytes(bytes(data))
    refused(path, "array 'x' in data 'claim.npz' claims 4294967280 bytes .4.0 GiB. from")


def test_limit_refuses_a_real_deflate_bomb_before_decompressing(tmp_path):
    """8 MiB of zeros compress to ~8 KiB: a 1 MiB limit refuses it from the header."""
    path = tmp_path / "zeros.npz"
    np.savez_compressed(path, x=np.zeros(2**21, np.float32))
    assert path.stat().st_size < 20_000
    message = refused(path, "over the 1048576 bytes .1.0 MiB. limit", limit=2**20)
    assert "float32 [2097152], 8388608 bytes (8.0 MiB)" in message
    assert MAX_DATA_BYTES == 2**32


def test_limit_counts_all_arrays_of_a_file(tmp_path):
    path = tmp_path / "two.npz"
    np.savez(path, a=np.zeros(100_000, np.uint8), b=np.zeros(100_000, np.uint8))
    assert sorted(read_arrays(path, limit=200_000)) == ["a", "b"]
    with pytest.raises(EdgeliteError, match="array 'b' in data '.*two.npz' holds uint8 "
                       "\\[100000\\], 100000 bytes .* .200000 bytes .* with the arrays before "
                       "it.*over the 150000 bytes"):
        read_arrays(path, "data", limit=150_000)


@pytest.mark.parametrize("name, data, match", [
    ("empty.npy", b"", "is empty .0 bytes."),
    ("png.npy", b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "is a PNG image, not a .npy / .npz"),
    ("jpeg.npy", b"\xff\xd8\xff\xe0" + b"\0" * 40, "is a JPEG image"),
    ("pickle.npy", pickle.dumps([1, 2, 3]), "is a Python pickle"),
    ("text.npy", b"1,2,3\n4,5,6\n", "is not a .npy / .npz array file"),
    ("magic.npy", b"\x93NUMPY", "is truncated inside its .npy header"),
    ("version.npy", b"\x93NUMPY\x09\x00" + b"\0" * 20, "unknown .npy format version 9"),
    ("length.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{", "length field says 4294967295"),
    ("short.npy", npy_header()[:40], "is truncated inside its .npy header"),
    ("nested.npy", npy_header(shape="(" * 3000), "corrupt .npy header"),
    ("garbage.npy", npy_header(descr="<f4") .replace(b"'descr'", b"'dscr!'"),
     "corrupt .npy header"),
    ("negative.npy", npy_header(shape=(-1,)), "corrupt .npy header .shape \\[-1\\]."),
    ("trailing.npy", npy_bytes(np.arange(3.0)) + b"xx", "declares float64 \\[3\\], 24 bytes, "
     "but holds 26 bytes of data: the file is truncated or corrupt"),
    ("truncated.npy", npy_bytes(np.arange(30.0))[:-5], "declares float64 \\[30\\], 240 bytes, "
     "but holds only 235 bytes"),
])
def test_malformed_npy_is_one_line(tmp_path, name, data, match):
    refused(write(tmp_path, name, data), match)


@pytest.mark.parametrize("x, what", [
    (np.array(["a", "bc"]), "text .<U2."),
    (np.array([b"ab"]), "bytes .|S2."),
    (np.zeros(2, [("a", "<f4"), ("b", "<i4")]), "records .|V8."),
    (np.array(["2020-01-01"], "datetime64[D]"), "dates .<M8\\[D\\]."),
])
def test_non_numeric_arrays_are_named(tmp_path, x, what):
    message = refused(write(tmp_path, "s.npy", npy_bytes(x)), f"holds {what}, not a numeric",
                      kind=DTypeError)
    assert "pickle" not in message


def test_object_arrays_are_not_numeric_not_pickles(tmp_path):
    message = refused(write(tmp_path, "obj.npy", npy_bytes(np.array([{"a": 1}], object),
                                                          allow_pickle=True)),
                      "holds Python objects .\\|O., not a numeric array", kind=DTypeError)
    assert "pickle" not in message


def corrupt_npz(tmp_path, kind):
    path = tmp_path / f"{kind}.npz"
    save = np.savez_compressed if kind == "deflate" else np.savez
    save(path, x=np.arange(200.0))
    data = bytearray(path.read_bytes())
    if kind == "truncated":
        data = data[:len(data) // 2]
    elif kind == "crc":
        data[300] ^= 0xFF  # inside the stored .npy data
    else:
        data[100:160] = b"\xff" * 60  # inside the deflate stream
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("kind, match", [
    ("truncated", "is not a readable .npz .zip. file .File is not a zip file."),
    ("crc", "array 'x' in data 'crc.npz' is corrupt .Bad CRC-32"),
    ("deflate", "array 'x' in data 'deflate.npz' is corrupt .Error -3"),
])
def test_corrupt_npz_is_one_line(tmp_path, kind, match):
    refused(corrupt_npz(tmp_path, kind), match)


def test_npz_members_must_be_arrays_and_their_names_are_escaped(tmp_path):
    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("\x1b[2Jnotes\n.txt", b"hello")
    message = refused(path, "holds '\\\\x1b\\[2Jnotes\\\\n.txt', which is not a .npy array")
    assert "\x1b" not in message
    with zipfile.ZipFile(path, "w"):
        pass
    refused(path, "holds no arrays")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(EdgeliteError, match="cannot read data '.*nope.npy': no such file"):
        read_arrays(tmp_path / "nope.npy", "data")
    with pytest.raises(EdgeliteError, match="cannot read data '.*': it is a directory"):
        read_arrays(tmp_path, "data")
    fifo = tmp_path / "pipe.npy"
    os.mkfifo(fifo)  # opening it would wait for a writer: refused before opening
    with pytest.raises(EdgeliteError, match="cannot read data '.*pipe.npy': it is not a "
                                            "regular file"):
        read_arrays(fifo, "data")


def test_read_array_takes_a_single_array_npz(tmp_path):
    path = tmp_path / "one.npz"
    np.savez(path, only=np.arange(3))
    np.testing.assert_array_equal(read_array(path), np.arange(3))
    np.savez(path, a=np.arange(3), b=np.arange(2))
    with pytest.raises(EdgeliteError, match="holds 2 arrays \\['a', 'b'\\]; give a .npy"):
        read_array(path)


def test_pick_inputs_checks_samples():
    x = np.zeros((4, 2), np.float32)
    assert pick_inputs(x, ["in"], "data")["in"] is not None
    assert pick_inputs({"x": x, "y": np.arange(4)}, ["in"], "data")["in"].shape == (4, 2)
    with pytest.raises(ShapeError, match="input 'in' is a single number .a 0-d array."):
        pick_inputs(np.float32(1.0), ["in"], "data")
    with pytest.raises(DTypeError, match="input 'in' holds text .<U1., not numbers"):
        pick_inputs(np.array(["a", "b"]), ["in"], "data")
    with pytest.raises(ShapeError, match="different sample counts 'a': 4, 'b': 3"):
        pick_inputs({"a": x, "b": x[:3]}, ["a", "b"], "data")
    with pytest.raises(EdgeliteError, match="data holds no samples"):
        pick_inputs(x[:0], ["in"], "data")
    with pytest.raises(EdgeliteError, match="the model has 2 inputs \\['a', 'b'\\]"):
        pick_inputs(x, ["a", "b"], "data")
    many = {f"k{i}\x1b": x for i in range(20)}
    with pytest.raises(EdgeliteError, match=r"holds arrays \['k0\\x1b', .*'k7\\x1b' and 12 "
                                            r"more\]; name them after the model inputs"):
        pick_inputs(many, ["a", "b"], "data")


def test_names_list_escapes_and_bounds():
    assert names_list(["a", "b\n"]) == "['a', 'b\\n']"
    assert names_list([str(i) for i in range(10)], 3) == "['0', '1', '2' and 7 more]"
