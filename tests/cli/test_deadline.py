"""--timeout (cli/deadline.py): a model whose WHILE loop never ends stops the command with one
line and exit status 124, in bounded time, on every command that runs models."""

import time

import numpy as np
import pytest

from tests.interpreter import subgraph_models as sm

from tests.support.cli import error_line, invoke

MESSAGE = ("error: timed out after 0.5 s (--timeout): stopped; a loop of the model may never "
           "end -- or allow more time")


@pytest.fixture
def endless(tmp_path):
    """A counting loop up to 2^31 - 1 (the counter wraps first), and its inputs."""
    model = tmp_path / "loop.tflite"
    model.write_bytes(sm.counting_while(limit=2**31 - 1))
    np.save(tmp_path / "i.npy", np.int32(0))
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    return model


@pytest.mark.parametrize("command", ["run", "bench"])
def test_an_endless_loop_stops_at_the_timeout(endless, command):
    args = [command, endless, "--timeout", "0.5"]
    if command == "run":
        args += ["--input", f"i={endless.parent / 'i.npy'}",
                 "--input", f"x={endless.parent / 'x.npy'}"]
    start = time.monotonic()
    result = invoke(*args)
    assert time.monotonic() - start < 30
    assert error_line(result, status=124) == MESSAGE


def test_a_finished_command_is_not_timed_out(endless, tmp_path):
    np.save(tmp_path / "i.npy", np.int32(2**31 - 3))
    result = invoke("run", endless, "--timeout", "60", "--input", f"i={tmp_path / 'i.npy'}",
                    "--input", f"x={tmp_path / 'x.npy'}")
    assert result.exit_code == 0, result.output
    assert "2147483647" in result.output
    time.sleep(0.1)  # no alarm left behind


@pytest.mark.parametrize("command", ["run", "compare", "eval", "bench"])
def test_every_command_that_runs_models_takes_a_timeout(command):
    assert "--timeout SECONDS" in invoke(command, "--help").output
    result = invoke(command, "--timeout", "0", "x")
    assert result.exit_code == 2 and "--timeout" in result.stderr
