"""Helpers for CLI tests: run the `edgelite` command in process and check its one error line."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from edgelite.cli.main import main

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def read_only_folder(tmp_path):
    """A folder this process cannot write: chmod 0555, or for root (who ignores modes)
    a sysfs folder, which refuses everyone."""
    if not IS_ROOT:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if os.path.isdir("/sys/kernel"):
        return type(tmp_path)("/sys/kernel")
    pytest.skip("running as root without sysfs: no read-only folder to test with")


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def error_line(result, status: int = 1) -> str:
    """The one stderr line of a failed run: exit ``status``, ``error: ...``, no traceback,
    no raw control character."""
    assert result.exit_code == status, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.output
    assert not any(c != "\n" and not c.isprintable() for c in result.stderr), result.stderr
    return lines[0]
