"""`edgelite eval` over folders of shards, with --workers and --ray: stdout byte-identical
to the single-process run, timings on stderr, one clear line when Ray cannot be used."""

import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from edgelite.cli.main import main
from tests.conftest import MODELS, missing

from ..converter.shards.ray_session import ray_session  # noqa: F401 -- a fixture

PB = MODELS / "keras_cnn.pb"
UINT8 = MODELS / "keras_cnn.tf_uint8.tflite"
TEST = MODELS / "digits_test.npz"


def edgelite(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgelite.cli.main", *map(str, args)],
                          capture_output=True, timeout=300, env=os.environ.copy())


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    with np.load(TEST) as d:
        x, y = d["x"], d["y"]
    for name in ("x", "y"):
        (root / name).mkdir()
    cuts = [0, 100, 101, 250, len(y)]
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        np.save(root / "x" / f"part{i}.npy", x[a:b])
        np.save(root / "y" / f"part{i}.npy", y[a:b])
    return root


def test_workers_and_folders_print_the_same_bytes(folders):
    single = edgelite("eval", PB, UINT8, "--data", TEST, "--labels", TEST, "--top-k", 3,
                      "--json")
    assert single.returncode == 0, single.stderr
    assert b'"samples": 397' in single.stdout and single.stderr == b""
    assert single.stdout.count(b"\n") == 1 and single.stdout.endswith(b"}\n")  # one line
    pool = edgelite("eval", PB, UINT8, "--data", folders / "x", "--labels", folders / "y",
                    "--top-k", 3, "--json", "--workers", 2)
    assert pool.returncode == 0, pool.stderr
    assert pool.stdout == single.stdout
    assert b"s on 2 worker process(es)" in pool.stderr


def test_ray_missing_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    result = CliRunner().invoke(main, ["eval", str(PB), "--data", str(TEST), "--labels",
                                       str(TEST), "--ray"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: --ray needs Ray, which is not installed: pip install 'edgelite[ray]' (or pip "
        "install ray)"]


def _need_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        missing("ray is not installed: pip install -e '.[test]'")


def test_ray_unreachable_address_is_one_line():
    _need_ray()
    result = CliRunner().invoke(main, ["eval", str(PB), "--data", str(TEST), "--labels",
                                       str(TEST), "--ray", "127.0.0.1:1"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.startswith("error: cannot reach the Ray cluster at 127.0.0.1:1 (")


def test_bad_ray_address():
    _need_ray()
    result = CliRunner().invoke(main, ["eval", str(PB), "--data", str(TEST), "--labels",
                                       str(TEST), "--ray", "nowhere"])
    assert result.exit_code == 1
    assert "give 'local' or a cluster address HOST:PORT" in result.output


def test_compare_over_folders_and_workers_prints_the_same_bytes(folders):
    single = edgelite("compare", PB, UINT8, "--data", TEST, "--json")
    assert single.returncode == 0, single.stderr
    pool = edgelite("compare", PB, UINT8, "--data", folders / "x", "--json", "--workers", 2)
    assert pool.returncode == 0, pool.stderr
    assert pool.stdout == single.stdout and b'"samples": 397' in pool.stdout
    assert single.stdout.count(b"\n") == 1


def test_eval_and_compare_on_ray_print_the_same_bytes(folders, ray_session):  # noqa: F811
    runner = CliRunner()
    x, y = str(folders / "x"), str(folders / "y")
    for single_args, ray_args in (
            (["eval", "--data", TEST, "--labels", TEST, "--top-k", 3],
             ["eval", "--data", x, "--labels", y, "--top-k", 3, "--ray", "local"]),
            (["compare", "--data", TEST], ["compare", "--data", x, "--ray", "local"])):
        single = runner.invoke(main, [*map(str, single_args), str(PB), str(UINT8), "--json"])
        assert single.exit_code == 0, single.output
        on_ray = runner.invoke(main, [*map(str, ray_args), str(PB), str(UINT8), "--json"])
        assert on_ray.exit_code == 0, on_ray.output
        assert on_ray.stdout == single.stdout and single.stdout.count("\n") == 1
        assert '"samples": 397' in single.stdout
        assert "s on Ray (local)" in on_ray.stderr


def test_convert_calibrates_in_workers_to_the_same_bytes(tmp_path):
    calib = MODELS / "digits_calib.npy"
    outs = []
    for extra in ([], ["--workers", 2]):
        out = tmp_path / f"m{len(outs)}.tflite"
        result = edgelite("convert", PB, "-o", out, "--quantize", "int8", "--calib", calib,
                          *extra)
        assert result.returncode == 0, result.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0][4:8] == b"TFL3"
