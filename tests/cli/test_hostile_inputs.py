"""Hostile data files and output paths through every command that takes them (run, compare,
eval, convert --calib): one `error:` line naming the file, status 1, no traceback, nothing
big allocated, and no long work started before an unwritable output path is reported."""

import io
import tracemalloc
import zipfile

import numpy as np
import pytest

import edgelite.converter
import edgelite.converter.accuracy
from tests.conftest import MODELS
from tests.converter.datafiles import npy_bytes, npy_header

from tests.support.cli import error_line, invoke, read_only_folder

MODEL = MODELS / "keras_cnn.tf.tflite"  # float, input [1, 8, 8, 1], 10 classes
GRAPHDEF = MODELS / "tf1_cnn.pb"          # input [1, 8, 8, 1]
TEST = MODELS / "digits_test.npz"         # x (397, 8, 8, 1), y (397,)


def npy(x) -> bytes:
    return npy_bytes(x, allow_pickle=True)


def bad_crc_npz() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, x=np.zeros((4, 8, 8, 1), np.float32))
    data = bytearray(buf.getvalue())
    data[200] ^= 0xFF  # inside the stored array data
    return bytes(data)


# name -> (file name, bytes, what the one line says)
HOSTILE = {
    "bomb": ("bomb.npy", npy_header(shape=(10**12,)) + b"\0" * 16,
             "declares float32 [1000000000000], 4000000000000 bytes (3.6 TiB), but holds only "
             "16 bytes"),
    "empty": ("empty.npy", b"", "is empty (0 bytes)"),
    "png": ("photo.npy", b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "is a PNG image, not a .npy"),
    "strings": ("words.npy", npy(np.array(["cat", "dog"])), "holds text (<U3), not a numeric"),
    "objects": ("objs.npy", npy(np.array([None, 1], object)), "holds Python objects (|O), not"),
    "truncated": ("cut.npz", bad_crc_npz()[:150], "is not a readable .npz (zip) file"),
    "corrupt": ("crc.npz", bad_crc_npz(), "array 'x' in"),
}
ZERO_D = ("scalar.npy", npy(np.float32(1.0)), "is a single number (a 0-d array)")


def hostile_file(tmp_path, kind):
    name, data, message = ZERO_D if kind == "0-d" else HOSTILE[kind]
    path = tmp_path / name
    path.write_bytes(data)
    return path, message


def assert_refused(result, path, message):
    line = error_line(result)
    assert path.name in line and message in line, line
    return line


@pytest.mark.parametrize("kind", HOSTILE)
def test_run_input(tmp_path, kind):
    path, message = hostile_file(tmp_path, kind)
    line = assert_refused(invoke("run", MODEL, "--input", path), path, message)
    assert "input 'input': file '" in line


@pytest.mark.parametrize("kind", [*HOSTILE, "0-d"])
def test_compare_data(tmp_path, kind):
    path, message = hostile_file(tmp_path, kind)
    assert_refused(invoke("compare", MODEL, MODEL, "--data", path), path, message)


@pytest.mark.parametrize("kind", [*HOSTILE, "0-d"])
def test_eval_data(tmp_path, kind):
    path, message = hostile_file(tmp_path, kind)
    assert_refused(invoke("eval", MODEL, "--data", path, "--labels", TEST), path, message)


@pytest.mark.parametrize("kind", HOSTILE)
def test_eval_labels(tmp_path, kind):
    path, message = hostile_file(tmp_path, kind)
    line = assert_refused(invoke("eval", MODEL, "--data", TEST, "--labels", path), path,
                          message)
    assert line.startswith("error: labels '") or line.startswith("error: array 'x' in labels")


@pytest.mark.parametrize("kind", [*HOSTILE, "0-d"])
def test_convert_calib_file(tmp_path, kind):
    path, message = hostile_file(tmp_path, kind)
    result = invoke("convert", GRAPHDEF, "-o", tmp_path / "m.tflite", "--quantize", "int8",
                    "--calib", path)
    assert_refused(result, path, message)
    assert not (tmp_path / "m.tflite").exists()


@pytest.mark.parametrize("kind", ["bomb", "empty", "png", "strings", "corrupt"])
def test_convert_calib_folder_with_one_bad_file(tmp_path, kind):
    folder = tmp_path / "calib"
    folder.mkdir()
    x = np.load(MODELS / "digits_calib.npy")
    for i in range(3):
        np.save(folder / f"{i:03d}.npy", x[i])
    _, data, message = HOSTILE[kind]
    (folder / f"003_{kind}.npy").write_bytes(data)  # after three good samples
    result = invoke("convert", GRAPHDEF, "-o", tmp_path / "m.tflite", "--quantize", "int8",
                    "--calib", folder)
    line = assert_refused(result, folder / f"003_{kind}.npy", message)
    assert "calibration sample" in line
    assert not (tmp_path / "m.tflite").exists()


def test_run_bomb_allocates_nothing_big(tmp_path):
    path, _ = hostile_file(tmp_path, "bomb")
    tracemalloc.start()
    try:
        result = invoke("run", MODEL, "--input", path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    error_line(result)
    assert peak < 8 * 2**20, peak  # the model and the interpreter; not 3.6 TiB


def test_npz_names_in_messages_are_escaped(tmp_path):
    path = tmp_path / "two.npz"
    with zipfile.ZipFile(path, "w") as z:
        for name in ("a\x1b[2J", "b\nerror: forged"):
            z.writestr(name + ".npy", npy(np.zeros((2, 8, 8, 1), np.float32)))
    line = error_line(invoke("compare", MODEL, MODEL, "--data", path))
    assert "holds arrays ['a\\x1b[2J', 'b\\nerror: forged']; name them after" in line


# -- output paths --------------------------------------------------------------------------

def never(*args, **kwargs):
    raise AssertionError("the long work started before the output path was checked")


@pytest.fixture
def no_long_work(monkeypatch):
    monkeypatch.setattr(edgelite.converter, "convert_detailed", never)
    monkeypatch.setattr(edgelite.converter.accuracy, "compare", never)
    monkeypatch.setattr(edgelite.converter.accuracy, "evaluate", never)


OUTPUTS = {
    "missing folder": (lambda d: d / "nowhere" / "out.bin", "does not exist; create it first"),
    "a folder": (lambda d: d, "it is a folder; give a file name"),
    "read-only": (lambda d: read_only_folder(d) / "out.bin", "is not writable; choose another"),
}


@pytest.mark.parametrize("where", OUTPUTS)
@pytest.mark.parametrize("command", ["convert", "run", "compare -o", "compare --plot",
                                     "eval"])
def test_unwritable_output_is_one_line_before_any_work(tmp_path, no_long_work, where, command):
    make, message = OUTPUTS[where]
    out = make(tmp_path)
    args = {
        "convert": ["convert", GRAPHDEF, "-o", out, "--quantize", "int8", "--calib",
                    MODELS / "digits_calib.npy"],
        "run": ["run", MODEL, "--input", MODELS / "sample_digit.npy", "-o", out],
        "compare -o": ["compare", MODEL, MODEL, "--data", TEST, "-o", out],
        "compare --plot": ["compare", MODEL, MODEL, "--data", TEST, "--plot", out],
        "eval": ["eval", MODEL, "--data", TEST, "--labels", TEST, "-o", out],
    }[command]
    line = error_line(invoke(*args))
    assert line.startswith("error: cannot write ") and message in line, line


# An output path that is one of the command's inputs: refused before anything is written.
def _refused_as_input(result, output, source, before: bytes | None = None):
    line = error_line(result)
    assert "writing it would destroy the input; choose another output path" in line, line
    assert str(output) in line or output.name in line
    if before is not None:
        assert source.read_bytes() == before


@pytest.mark.parametrize("spelling", ["same", "link", "dotted"])
def test_convert_refuses_to_replace_its_input(tmp_path, spelling):
    source = tmp_path / "g.pb"
    source.write_bytes(GRAPHDEF.read_bytes())
    output = {"same": source, "link": tmp_path / "link.pb",
              "dotted": tmp_path / "sub" / ".." / "g.pb"}[spelling]  # pathlib keeps ".."
    (tmp_path / "sub").mkdir()
    if spelling == "link":
        output.symlink_to(source)
    _refused_as_input(invoke("convert", source, "-o", output), output, source,
                      GRAPHDEF.read_bytes())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["g.pb", "sub"] + (["link.pb"] if spelling == "link" else []))  # no temp file left


def test_convert_refuses_a_file_of_its_savedmodel_and_its_calibration_data(tmp_path):
    import shutil
    folder = tmp_path / "sm"
    shutil.copytree(MODELS / "savedmodel" / "sm_module_two", folder)
    target = folder / "saved_model.pb"
    before = target.read_bytes()
    _refused_as_input(invoke("convert", folder, "-o", target), target, target, before)
    data = tmp_path / "calib.npz"
    data.write_bytes(TEST.read_bytes())
    _refused_as_input(invoke("convert", GRAPHDEF, "-o", data, "--quantize", "int8",
                             "--calib", data), data, data, TEST.read_bytes())


def test_run_compare_eval_refuse_to_replace_their_inputs(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(MODEL.read_bytes())
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 8, 8, 1), np.float32))
    _refused_as_input(invoke("run", model, "--input", x, "-o", x), x, x)
    _refused_as_input(invoke("run", model, "--input", x, "-o", model), model, model,
                      MODEL.read_bytes())
    _refused_as_input(invoke("compare", model, model, "--data", x, "-o", model), model, model,
                      MODEL.read_bytes())
    _refused_as_input(invoke("eval", model, "--data", x, "--labels", x, "-o", x), x, x)


def test_the_api_refuses_to_replace_its_input(tmp_path):
    from edgelite.errors import EdgeliteError
    source = tmp_path / "g.pb"
    source.write_bytes(GRAPHDEF.read_bytes())
    with pytest.raises(EdgeliteError, match="is the input .*writing it would destroy"):
        edgelite.converter.convert(source, output_path=source)
    assert source.read_bytes() == GRAPHDEF.read_bytes()
