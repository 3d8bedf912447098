"""CI cannot pass on a shrunken suite: .ci/run runs the README's test command, and under
CI a missing oracle stops the run (tests/conftest.py) instead of skipping most tests."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import INSTALL, ROOT, in_ci


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"Run the whole test suite.*?```sh\n(.*?)\n```", text, re.S)
    assert m, "README.md lost its test-command paragraph"
    return m.group(1).strip()


def test_ci_runs_the_readme_test_command():
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines[-1].strip() == _readme_test_command()


def test_ci_tests_the_oldest_supported_protobuf():
    pyproject = (ROOT / "pyproject.toml").read_text()
    oldest = re.search(r'"protobuf>=([0-9.]+)"', pyproject).group(1)
    run = (ROOT / ".ci" / "run").read_text()
    pinned = re.search(r'"protobuf==([0-9.]+)"', run).group(1)
    assert pinned.startswith(oldest + "."), (oldest, pinned)
    assert "tests/schema" in run


def test_the_install_hint_is_the_readme_set_up():
    install = _readme_test_command().split(" && ")[0]
    assert install.replace('"', "'") == INSTALL


def _pytest_without_litert(tmp_path, ci: str | None, *args):
    """Run pytest in a child whose `import ai_edge_litert` fails, as if not installed."""
    (tmp_path / "ai_edge_litert.py").write_text('raise ImportError("not installed (test)")\n')
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_ci_without_the_oracle_fails_at_once_with_one_message(tmp_path):
    proc = _pytest_without_litert(tmp_path, "true", "tests/schema/test_model_io.py")
    assert proc.returncode == 4, proc.stdout + proc.stderr        # pytest's usage error
    assert "CI=true but ai-edge-litert (the oracle) is not installed" in proc.stderr
    assert INSTALL in proc.stderr
    assert "passed" not in proc.stdout


def test_without_ci_only_the_oracle_tests_skip(tmp_path):
    proc = _pytest_without_litert(tmp_path, None, "tests/schema/test_model_io.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # test_model_io.py: 2 tests need no oracle; 3 run our files in LiteRT
    assert re.search(r"^2 passed, 3 skipped in ", proc.stdout, re.M), proc.stdout
    assert "ai-edge-litert (the oracle) is not installed" in proc.stdout


@pytest.mark.parametrize("value, expected", [("true", True), ("1", True), ("yes", True),
                                             ("True", True), ("", False), ("false", False),
                                             ("0", False), ("no", False)])
def test_ci_values(monkeypatch, value, expected):
    monkeypatch.setenv("CI", value)
    assert in_ci() is expected
