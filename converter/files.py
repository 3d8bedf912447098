"""Writing output files: all or nothing, with the permissions a plain ``open()`` gives.

``write_atomic`` writes to a temp file in the target's folder, flushes and fsyncs it, renames
it over the target (``os.replace`` is atomic on POSIX and Windows) and fsyncs the folder, so
a crash or a full disk never leaves a half-written model. Where the OS has unnamed files
(Linux ``O_TMPFILE``) the data goes to one: a SIGKILL or power cut mid-write leaves nothing
behind, and the file gets a name (``linkat`` through /proc/self/fd, then the rename) only
once it is complete. Elsewhere the temp file is named ``.edgelite-<pid>-*.tmp``; it is removed
when the write fails, on Ctrl-C, and on SIGTERM / SIGHUP (a handler is installed just around
the write when the signal would otherwise kill the process without cleanup; afterwards the
signal is delivered again, so the process still ends the conventional way), and what a
SIGKILL leaves is swept by the next write to that folder (its process is gone).
``check_writable`` tells a missing or read-only folder before a long conversion or
calibration, not after.

Every failure is one EdgeliteError line naming the path and saying what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import tempfile
import threading
import time

from edgelite.errors import EdgeliteError
from edgelite.names import quoted, shown

MAX_PATH_CHARS = 1024  # paths are the user's own: escaped, but cut only when absurd
_TEMP_PREFIX = ".edgelite-"
_TEMP_SUFFIX = ".tmp"
# Signals whose default action ends the process without running Python cleanup code. SIGINT
# is not here: Python's default SIGINT handler raises KeyboardInterrupt, which unwinds.
_CLEANUP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def quoted_path(path: str | os.PathLike) -> str:
    """A path for a message: quoted and escaped like a name, with room for deep folders."""
    return quoted(os.fspath(path), MAX_PATH_CHARS)


def shown_path(path: str | os.PathLike) -> str:
    """A path (or a model's label) bare, for tables and report headers: escaped and cut
    like ``quoted_path``, without the quotes."""
    return shown(os.fspath(path), MAX_PATH_CHARS)


def write_atomic(path: str | os.PathLike, data: bytes | bytearray | memoryview) -> None:
    """Write ``data`` to ``path`` via a temp file + rename: never a half-written file.

    A new file gets mode 0o666 minus the umask (what ``open(path, "w")`` gives; mkstemp alone
    would give 0600); an existing file keeps its permission bits."""
    path = os.fspath(path)
    folder = _folder_of(path)
    mode = _final_mode(path)
    _sweep_stale(folder)
    if _write_unnamed(folder, path, data, mode):
        _fsync_folder(folder)
        return
    with _temp_file(folder, path) as (fd, tmp):
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            _set_mode(f.fileno(), tmp, mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    _fsync_folder(folder)


def _write_unnamed(folder: str, path: str, data, mode: int) -> bool:
    """Write ``data`` to ``path`` through an unnamed temp file (O_TMPFILE): False where the
    OS or the file system has none, or /proc is missing (then the caller writes through a
    named one)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return False
    try:
        fd = os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return False  # no O_TMPFILE here; a missing folder is reported by the other way
        raise EdgeliteError(_message(path, e)) from None
    try:
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
            f.flush()
            os.fchmod(fd, mode)
            os.fsync(fd)
        return _link_over(fd, folder, path)
    except OSError as e:
        raise EdgeliteError(_message(path, e)) from None
    finally:
        os.close(fd)


def _link_over(fd: int, folder: str, path: str) -> bool:
    """Give the complete unnamed file ``fd`` the name ``path``: linkat to a fresh temp
    name, then rename over ``path`` (linkat alone cannot replace a file). SIGTERM / SIGHUP
    are held back for those two calls, so only a SIGKILL can leave the temp name (swept
    later). False if /proc cannot be linked from (the caller writes the other way)."""
    # os.link calls linkat(..., AT_SYMLINK_FOLLOW) only when given a dir fd (else plain
    # link(), which links the /proc symlink itself and fails with EXDEV)
    dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        return _link_in(fd, dir_fd, folder, path)
    finally:
        os.close(dir_fd)


def _link_in(fd: int, dir_fd: int, folder: str, path: str) -> bool:
    for _ in range(100):
        name = f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}{_TEMP_SUFFIX}"
        tmp = os.path.join(folder, name)
        with _signals_blocked():
            try:
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
            except FileExistsError:
                continue
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.EPERM, errno.EXDEV, errno.ENOTSUP):
                    return False
                raise
            try:
                os.replace(tmp, path)
            except BaseException:
                _remove(tmp)
                raise
        return True
    raise EdgeliteError(f"cannot write {quoted_path(path)}: no free temp name in its folder")


def _sweep_stale(folder: str) -> None:
    """Remove temp files of ours that a killed process left in ``folder``: named
    ``.edgelite-<pid>-*.tmp`` with no process <pid> alive, or without a pid (older
    edgelite) and a day old. Best effort: errors are ignored."""
    try:
        names = [n for n in os.listdir(folder)
                 if n.startswith(_TEMP_PREFIX) and n.endswith(_TEMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_TEMP_PREFIX):].split("-", 1)[0]
        full = os.path.join(folder, name)
        if pid.isdigit() and name.count("-") >= 2:
            if _alive(int(pid)):
                continue
        else:
            try:
                if time.time() - os.lstat(full).st_mtime < 86400:
                    continue
            except OSError:
                continue
        _remove(full)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def check_writable(path: str | os.PathLike, what: str = "output") -> None:
    """Raise one EdgeliteError line now if ``path`` cannot be written later: its folder is
    missing, not a folder or read-only, or ``path`` is a folder. Probes by creating (and
    removing) a temp file, which is the only test that also holds for root and for
    read-only mounts."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise EdgeliteError(f"cannot write {what} {quoted_path(path)}: it is a folder; give a "
                            "file name")
    with _temp_file(_folder_of(path), path, what) as (fd, tmp):
        os.close(fd)
        _remove(tmp)


def check_not_input(output: str | os.PathLike, inputs, what: str = "output") -> None:
    """Refuse, in one line, an output path that would replace one of ``inputs`` (paths of
    files or folders read by the same command; None entries are skipped): the same file
    (by device and inode, so a link or another spelling counts), or a file inside an input
    folder (a SavedModel's own saved_model.pb)."""
    output = os.fspath(output)
    try:
        out = os.stat(output)
    except OSError:
        return  # a new file replaces nothing
    for source in inputs:
        if source is None:
            continue
        source = os.fspath(source)
        try:
            src = os.stat(source)
        except OSError:
            continue
        same = (out.st_dev, out.st_ino) == (src.st_dev, src.st_ino)
        inside = stat.S_ISDIR(src.st_mode) and _is_within(output, source)
        if same or inside:
            where = "is" if same else "is inside"
            raise EdgeliteError(f"{what} {quoted_path(output)} {where} the input "
                                f"{quoted_path(source)}: writing it would destroy the input; "
                                "choose another output path")


def _is_within(path: str, folder: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, top]) == top


@contextlib.contextmanager
def _temp_file(folder: str, path: str, what: str = ""):
    """(fd, name) of a new temp file in ``folder``, removed if the body fails or the process
    gets SIGTERM / SIGHUP / Ctrl-C meanwhile; OSErrors become one EdgeliteError line about
    ``path``. The body renames or removes the file itself."""
    with _cleanup_on_signal() as tmp_holder:
        with _signals_blocked():  # the temp file is recorded before a signal can strike
            try:
                fd, tmp = tempfile.mkstemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-",
                                           suffix=_TEMP_SUFFIX, dir=folder)
            except OSError as e:
                raise EdgeliteError(_message(path, e, what)) from None
            tmp_holder.append(tmp)
        try:
            yield fd, tmp
        except BaseException as e:
            _remove(tmp)
            if isinstance(e, OSError):
                raise EdgeliteError(_message(path, e, what)) from None
            raise
        tmp_holder.clear()


def _folder_of(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def _message(path: str, e: OSError, what: str = "") -> str:
    """'cannot write output 'x/y.tflite': <reason>; <what to do>'."""
    folder = _folder_of(path)
    target = f"{what} {quoted_path(path)}" if what else quoted_path(path)
    if os.path.isdir(path):
        why = "it is a folder; give a file name"
    elif not os.path.exists(folder):
        why = f"the folder {quoted_path(folder)} does not exist; create it first"
    elif not os.path.isdir(folder):
        why = f"{quoted_path(folder)} is not a folder"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = f"the folder {quoted_path(folder)} is not writable; choose another place"
    elif e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        why = "no space left on the device; free some space (nothing was written)"
    else:
        why = shown(e.strerror or type(e).__name__)
    return f"cannot write {target}: {why}"


def _final_mode(path: str) -> int:
    """The permission bits ``open(path, "w")`` would leave: an existing file's own, else
    0o666 minus the umask."""
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux: the
    "Umask:" line of /proc/self/status, since 4.7). Elsewhere os.umask is set and restored
    at once, which is not atomic: another thread creating a file in between would use the
    probe value (0o022, the common default, so that is harmless in practice)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _set_mode(fd: int, tmp: str, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows before Python 3.13
        os.chmod(tmp, mode)


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX: fsync the directory). Not every OS or file
    system supports it (Windows cannot open a folder): best effort."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Terminated(BaseException):
    """Raised by the temporary signal handler to unwind (and remove the temp file)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _cleanup_on_signal():
    """Around a write: a SIGTERM / SIGHUP that would kill the process outright unwinds
    instead (so the temp file is removed), then is delivered again with its default action.
    Only in the main thread (Python runs signal handlers there only), and only for signals
    still at their default: a handler the application installed is left alone."""
    tmp_holder: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield tmp_holder
        return
    previous = {}
    for signum in _CLEANUP_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield tmp_holder
    except _Terminated as t:
        for tmp in tmp_holder:
            _remove(tmp)
        _restore(previous)
        previous = {}
        os.kill(os.getpid(), t.signum)       # default action: the process ends by the signal
        raise SystemExit(128 + t.signum)     # not reached where the signal is fatal
    finally:
        _restore(previous)


@contextlib.contextmanager
def _signals_blocked():
    """Hold SIGTERM / SIGHUP back (they stay pending) for a few statements."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None or not _CLEANUP_SIGNALS:
        yield
        return
    old = mask(signal.SIG_BLOCK, _CLEANUP_SIGNALS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)


def _raise_terminated(signum, frame):
    raise _Terminated(signum)


def _restore(previous: dict) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)
