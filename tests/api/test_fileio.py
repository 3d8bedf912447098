"""api/fileio.py: reading a file the user names is one clear EdgeliteError line for
a folder, a missing or unreadable file, a pipe or an oversized file -- never a hang."""

import os

import pytest

from edgelite.errors import EdgeliteError, ModelFormatError
from edgelite.fileio import open_regular, read_regular


def test_reads_a_regular_file(tmp_path):
    path = tmp_path / "m.bin"
    path.write_bytes(b"\x01\x02\x03")
    with open_regular(path) as f:
        assert f.read() == b"\x01\x02\x03"
    assert read_regular(str(path), max_bytes=3) == b"\x01\x02\x03"


def test_a_folder_and_a_missing_file(tmp_path):
    with pytest.raises(EdgeliteError, match=r"^cannot read '.*': it is a directory$"):
        open_regular(tmp_path)
    with pytest.raises(ModelFormatError, match=r"^cannot read model 'x': no such file$"):
        read_regular(tmp_path / "nope", "model 'x'", ModelFormatError)


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(EdgeliteError, match=r"it is not a regular file$"):
        read_regular(fifo)


def test_size_limit_and_path_type(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 10)
    with pytest.raises(EdgeliteError, match=r"big\.bin' holds 10 bytes, over the 9-byte limit"):
        read_regular(path, max_bytes=9)
    with pytest.raises(EdgeliteError, match=r"^a file path must be a str or os\.PathLike, "
                                            r"got int$"):
        open_regular(3)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads any file")
def test_an_unreadable_file(tmp_path):
    path = tmp_path / "secret"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(EdgeliteError, match=r"secret': permission denied$"):
        read_regular(path)
