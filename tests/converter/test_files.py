"""write_atomic / check_writable (converter/files.py): all-or-nothing writes with the
permissions a plain open() gives, one clear line for every path that cannot be written,
and no temp file left behind by a failure or a SIGTERM / Ctrl-C mid-write."""

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from edgelite.converter import files
from edgelite.converter.files import check_writable, current_umask, write_atomic
from edgelite.errors import EdgeliteError
from tests.support.cli import IS_ROOT, read_only_folder



def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".edgelite-"))


def with_umask(mask, fn):
    old = os.umask(mask)
    try:
        return fn()
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_gets_the_umask_mode(tmp_path, mask, mode):
    path = tmp_path / "m.tflite"
    with_umask(mask, lambda: write_atomic(path, b"abc"))
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == b"abc" and leftovers(tmp_path) == []


def test_current_umask_reads_without_changing_it():
    assert with_umask(0o027, current_umask) == 0o027
    assert with_umask(0o022, current_umask) == 0o022


def test_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(b"old")
    path.chmod(0o640)
    with_umask(0o022, lambda: write_atomic(path, b"new"))
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o640


def test_file_and_folder_are_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(files.os, "fsync", lambda fd: (synced.append(
        stat.S_ISDIR(os.fstat(fd).st_mode)), real(fd)))
    write_atomic(tmp_path / "m.tflite", b"abc")
    assert synced == [False, True]  # the temp file before the rename, then its folder


@pytest.mark.parametrize("make, match", [
    (lambda d: d / "missing" / "m.tflite", "the folder '.*missing' does not exist; create it "
                                           "first"),
    (lambda d: d, "it is a folder; give a file name"),
    (lambda d: (d / "f").write_bytes(b"") or d / "f" / "m.tflite", "'.*f' is not a folder"),
])
def test_unwritable_paths_are_one_line(tmp_path, make, match):
    path = make(tmp_path)
    for fn in (lambda: write_atomic(path, b"abc"), lambda: check_writable(path)):
        with pytest.raises(EdgeliteError, match=match) as info:
            fn()
        assert "\n" not in str(info.value)
    assert leftovers(tmp_path) == []


def test_read_only_folder_is_one_line(tmp_path):
    folder = read_only_folder(tmp_path)
    try:
        for fn in (write_atomic, lambda p, _: check_writable(p, "output")):
            with pytest.raises(EdgeliteError, match="the folder '.*' is not writable; choose "
                                                    "another place"):
                fn(folder / "m.tflite", b"abc")
        assert not (folder / "m.tflite").exists()
    finally:
        if not IS_ROOT:
            folder.chmod(0o755)


def test_write_error_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "m.tflite"
    path.write_bytes(b"old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(EdgeliteError, match="cannot write '.*m.tflite': no space left on the "
                                            "device; free some space .nothing was written."):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_control_characters_in_paths_are_escaped(tmp_path):
    with pytest.raises(EdgeliteError) as info:
        write_atomic(tmp_path / "no\x1b[2Jdir" / "m.tflite", b"")
    assert "\x1b" not in str(info.value) and "no\\x1b[2Jdir" in str(info.value)


CHILD = textwrap.dedent("""
    import os, sys, time
    from edgelite.converter import files

    def stall(fd):  # the data is written, not yet renamed: tell the parent, then wait
        print(sorted(n for n in os.listdir(os.path.dirname(sys.argv[1]))
                     if n.startswith(".edgelite-")), flush=True)
        time.sleep(120)

    if sys.argv[2] == "named":  # as where the OS has no unnamed files (O_TMPFILE)
        files._write_unnamed = lambda *args: False
    os.fsync = stall
    files.write_atomic(sys.argv[1], b"new" * 100000)
    print("finished", flush=True)
""")
UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _stalled_child(target, temp):
    """A child writing ``target`` that stops after the data is written, before the rename;
    returns it and the list of our temp files it saw then."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(target), temp],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    during = child.stdout.readline()
    if temp == "named" or not UNNAMED:
        assert during.startswith("['.edgelite-") and during.count(".tmp") == 1, during
    else:
        assert during == "[]\n", during  # the data is in a file without a name
    return child


@pytest.mark.parametrize("temp", ["unnamed", "named"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("existing", [False, True])
def test_signal_mid_write_leaves_no_temp_and_no_partial_target(tmp_path, signum, existing,
                                                               temp):
    target = tmp_path / "m.tflite"
    if existing:
        target.write_bytes(b"old")
    child = _stalled_child(target, temp)
    try:
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == -signum, (child.returncode, err)  # ended by the signal
    assert "finished" not in out
    assert leftovers(tmp_path) == []
    if existing:
        assert target.read_bytes() == b"old"
    else:
        assert not target.exists()


@pytest.mark.parametrize("temp", ["unnamed", "named"])
def test_sigkill_mid_write_leaves_nothing_after_the_next_write(tmp_path, temp):
    target = tmp_path / "m.tflite"
    target.write_bytes(b"old")
    child = _stalled_child(target, temp)
    child.kill()  # SIGKILL: no cleanup code runs
    child.communicate(timeout=60)
    assert target.read_bytes() == b"old"
    assert len(leftovers(tmp_path)) == (1 if temp == "named" or not UNNAMED else 0)
    (tmp_path / ".edgelite-1234.tmp").write_bytes(b"an older temp, fresh: kept a day")
    (tmp_path / f".edgelite-{os.getpid()}-x.tmp").write_bytes(b"a live process's: kept")
    write_atomic(tmp_path / "other.tflite", b"new")  # the next write to the folder sweeps
    assert leftovers(tmp_path) == sorted([".edgelite-1234.tmp", f".edgelite-{os.getpid()}-x.tmp"])
    assert target.read_bytes() == b"old" and (tmp_path / "other.tflite").read_bytes() == b"new"


def test_signal_handlers_are_restored(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    write_atomic(tmp_path / "m.tflite", b"abc")
    assert signal.getsignal(signal.SIGTERM) is before
