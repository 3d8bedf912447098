"""table.py: the sorted string table of a checkpoint's .index, as TensorFlow wrote it, and
damaged copies of it refused in one line."""

import pytest

from edgelite.converter.savedmodel.table import FOOTER_BYTES, TableError, read_table
from tests.conftest import MODELS

INDEX = MODELS / "savedmodel" / "bundle_dtypes" / "variables" / "variables.index"
KEYS = [b"", b"_CHECKPOINTABLE_OBJECT_GRAPH"] + [
    f"{v}/.ATTRIBUTES/VARIABLE_VALUE".encode()
    for v in sorted(("w", "h", "d", "i8", "i32", "i64", "u8", "flag", "scalar", "empty",
                     "words"))]


def test_reads_every_key_in_order():
    assert [k for k, _ in read_table(INDEX.read_bytes(), "index")] == KEYS


def _damaged(edit) -> bytes:
    data = bytearray(INDEX.read_bytes())
    edit(data)
    return bytes(data)


def _flip(i):
    def edit(data):
        data[i] ^= 0x20
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.__delitem__(slice(len(d) - 10, None)), "bad magic"),
    (lambda d: d.__delitem__(slice(FOOTER_BYTES - 1, None)), "too short"),
    (_flip(20), "fails its CRC-32C check"),          # a key byte in the data block
    (_flip(60), "fails its CRC-32C check"),          # a value byte
])
def test_damaged_index_is_refused(edit, message):
    with pytest.raises(TableError, match=message):
        list(read_table(_damaged(edit), "index"))


def test_every_single_byte_flip_is_refused_or_harmless():
    """No flipped byte gives different keys or values silently: the block CRCs cover the
    blocks, the magic the footer; a flip in the footer's handles or padding either fails or
    reads the same table."""
    good = list(read_table(INDEX.read_bytes(), "index"))
    for i in range(len(INDEX.read_bytes())):
        try:
            got = list(read_table(_damaged(_flip(i)), "index"))
        except TableError:
            continue
        assert got == good, f"byte {i}"
