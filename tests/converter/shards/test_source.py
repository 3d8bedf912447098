"""Shards: folders paired by sorted name, memory-mapped .npy pieces, iterables, limits."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from edgelite.converter.shards import FilePiece, shards_of
from edgelite.errors import DTypeError, EdgeliteError, ShapeError


def _folder(tmp_path, name, arrays):
    d = tmp_path / name
    d.mkdir()
    for i, a in enumerate(arrays):
        np.save(d / f"part{i:03d}.npy", a)
    return d


def test_folder_shards_sorted_by_name_and_paired_with_labels(tmp_path):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    cuts = [0, 3, 4, 10]
    xd = _folder(tmp_path, "x", [x[a:b] for a, b in zip(cuts, cuts[1:])])
    yd = _folder(tmp_path, "y", [y[a:b] for a, b in zip(cuts, cuts[1:])])
    (xd / "notes.txt").write_text("ignored")
    shards = list(shards_of(xd, yd))
    assert [s.index for s in shards] == [0, 1, 2]
    loaded = [s.load() for s in shards]
    assert [len(d) for d, _, _ in loaded] == [3, 1, 6]
    np.testing.assert_array_equal(np.concatenate([d for d, _, _ in loaded]), x)
    np.testing.assert_array_equal(np.concatenate([lab for _, lab, _ in loaded]), y)
    assert "part002.npy" in loaded[2][2]


def test_npy_file_is_mapped_piece_by_piece(tmp_path):
    x = np.random.default_rng(0).standard_normal((1000, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    shards = list(shards_of(tmp_path / "x.npy", np.arange(1000), piece=300))
    assert [(s.data.start, s.data.stop) for s in shards] == [(0, 300), (300, 600),
                                                             (600, 900), (900, 1000)]
    piece, labels, _ = shards[1].load()
    assert isinstance(piece, np.memmap) and piece.shape == (300, 3)
    np.testing.assert_array_equal(piece, x[300:600])
    np.testing.assert_array_equal(labels, np.arange(300, 600))


def test_samples_limit_cuts_the_stream(tmp_path):
    x = np.arange(10, dtype=np.float32)[:, None]
    xd = _folder(tmp_path, "x", [x[:4], x[4:]])
    yd = _folder(tmp_path, "y", [np.arange(4), np.arange(4, 10)])
    shards = list(shards_of(xd, yd, samples=6))
    assert len(shards) == 2 and shards[1].data == FilePiece(str(xd / "part001.npy"), 0, 2)
    _, labels, _ = shards[1].load()
    np.testing.assert_array_equal(labels, [4, 5])
    assert len(list(shards_of(xd, yd, samples=4))) == 1


def test_iterable_of_batches_is_consumed_lazily():
    pulled = []

    def batches():
        for i in range(5):
            pulled.append(i)
            yield np.full((2, 3), i, np.float32), np.array([i, i])

    stream = shards_of(batches())
    first = next(stream)
    assert pulled == [0] and first.load()[1].tolist() == [0, 0]
    assert len(list(stream)) == 4


def test_mismatched_data_and_labels(tmp_path):
    xd = _folder(tmp_path, "x", [np.zeros((2, 1)), np.zeros((2, 1))])
    yd = _folder(tmp_path, "y", [np.zeros(2)])
    with pytest.raises(ShapeError, match="input data have more shards than the labels"):
        list(shards_of(xd, yd))
    with pytest.raises(ShapeError, match="holds 5 samples but the labels 4"):
        list(shards_of(np.zeros((5, 2)), np.zeros(4)))
    with pytest.raises(EdgeliteError, match="holds no .npy / .npz files"):
        list(shards_of(tmp_path / "x" / "..", None))
    with pytest.raises(EdgeliteError, match="iterable of batches, got int"):
        list(shards_of(3))


def test_npy_header_is_checked_against_the_file_size(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((100, 4), np.float32))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 4)
    with pytest.raises(EdgeliteError, match="only .* of data: the file is truncated"):
        list(shards_of(path))
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DTypeError, match="not a numeric array"):
        list(shards_of(path))


def _sparse_npy(path, shape, dtype):
    """A .npy whose data is a hole in the file: large, yet quick to write and read."""
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
              "shape": shape}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.truncate(f.tell() + int(np.prod(shape)) * np.dtype(dtype).itemsize)


MEMORY_CAP = 768 << 20  # address space allowed above the interpreter's, in the child


def test_memory_stays_bounded_on_data_larger_than_the_cap(tmp_path):
    """A 2 GiB memory-mapped dataset streams through shards and through evaluate in a process
    whose address space cannot hold a quarter of it (RLIMIT_AS)."""
    big = tmp_path / "big.npy"
    _sparse_npy(big, (2**23, 8, 8, 1), np.float32)  # 2 GiB
    labels = tmp_path / "labels.npy"
    _sparse_npy(labels, (2**23,), np.int64)
    from tests.conftest import MODELS
    script = textwrap.dedent(f"""
        import resource
        import numpy as np
        from edgelite.converter.accuracy import evaluate
        from edgelite.converter.shards import shards_of
        def vm():
            for line in open("/proc/self/status"):
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
        cap = vm() + {MEMORY_CAP}
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        try:
            np.ones(2**28, np.float32)  # the whole dataset's size would not fit
            raise SystemExit("the cap does not hold")
        except MemoryError:
            pass
        total, n = 0.0, 0
        for shard in shards_of({str(big)!r}, {str(labels)!r}, piece=2**18):
            x, y, _ = shard.load()
            total += float(x.sum()) + float(y.sum())
            n += len(x)
            del x, y
        r = evaluate([{str(MODELS / "keras_cnn.tf_uint8.tflite")!r}], {str(big)!r},
                     {str(labels)!r}, samples=300)
        print(n, total, r.samples, r.class_counts)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(2**23), "0.0", "300", "[300]"]


def test_files_are_known_by_their_content_not_their_name(tmp_path):
    path = tmp_path / "x.npy"
    with open(path, "wb") as f:  # an .npz named .npy: read as the archive it is
        np.savez(f, x=np.arange(6.0).reshape(3, 2))
    (data, _, _), = [s.load() for s in shards_of(path)]
    np.testing.assert_array_equal(data["x"], np.arange(6.0).reshape(3, 2))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(20))
    with pytest.raises(EdgeliteError, match="is a PNG image, not a .npy / .npz array file"):
        list(shards_of(path))
