"""--json on convert, check, run and inspect (cli/json_out.py): one JSON document on stdout
holding the same facts as the text output."""

from __future__ import annotations

import json

import numpy as np

import edgelite
from edgelite.interpreter.loader.model import load_model
from tests.support.cli import invoke
from tests.conftest import MODELS

ISFINITE = MODELS / "misc_isfinite.pb"


def as_json(*args, status=0):
    result = invoke(*args, "--json")
    assert result.exit_code == status, result.output
    return json.loads(result.stdout)


def test_convert_lists_ops_quantization_and_what_stays_float(tmp_path):
    out = tmp_path / "m.tflite"
    doc = as_json("convert", ISFINITE, "-o", out, "--quantize", "int8", "--calib",
                  MODELS / "misc_isfinite.calib.npz", "--keep-float", "TANH")
    assert doc["bytes"] == out.stat().st_size
    (sig,) = doc["signatures"]
    interp = edgelite.Interpreter(model_path=str(out))
    ops = [o["op_name"] for o in interp._get_ops_details()]
    assert sig["ops"] == len(ops) and sig["op_counts"] == {k: ops.count(k) for k in set(ops)}
    assert doc["quantization"] == {"mode": "int8", "calibration_samples": 24,
                                   "skipped_samples": [], "calib_method": "minmax"}
    assert [(f["op"], f["why"]) for f in doc["left_float"]] == [
        ("SUB", "NaN / inf, which integers cannot hold"),
        ("EQUAL", "NaN / inf, which integers cannot hold"),
        ("ZEROS_LIKE", "no integer kernel for it here (ops without one stay float)"),
        ("TANH", "--keep-float")]


def test_convert_two_signatures(tmp_path):
    doc = as_json("convert", MODELS / "savedmodel" / "sm_module_two", "--signature",
                  "serving_default", "--signature", "encode", "-o", tmp_path / "m.tflite")
    assert [(s["key"], s["ops"]) for s in doc["signatures"]] == [("serving_default", 1),
                                                                 ("encode", 9)]
    assert doc["quantization"] is None and doc["left_float"] == []


def test_inspect_json_is_the_structure(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(edgelite.convert(MODELS / "tf1_cnn.pb", quantize="int8",
                                      calib=np.load(MODELS / "digits_calib.npy")[:8]))
    doc = as_json("inspect", path)
    model = load_model(path.read_bytes())
    (sg,) = doc["subgraphs"]
    assert [o["op"] for o in sg["ops"]] == [o.name for o in model.subgraphs[0].operators]
    assert len(sg["tensors"]) == len(model.subgraphs[0].tensors)
    conv_w = next(t for t in sg["tensors"] if t["dtype"] == "int8" and t["constant"]
                  and len(t["shape"]) == 4)
    q = model.subgraphs[0].tensors[conv_w["index"]].quantization
    assert conv_w["quantization"] == {"scale": q.scale.tolist(),
                                      "zero_point": q.zero_point.tolist(), "axis": 0}
    assert doc["signatures"][0]["key"] == "serving_default"


def test_check_json_and_its_status():
    doc = as_json("check", MODELS / "tf1_cnn.pb")
    assert doc["supported"] is True
    assert {o["tf_op"]: o["nodes"] for o in doc["ops"]}["Conv2D"] == 2


def test_run_json_outputs(tmp_path):
    golden = np.load(MODELS / "tf1_cnn.golden.npz")
    model = tmp_path / "m.tflite"
    model.write_bytes(edgelite.convert(MODELS / "tf1_cnn.pb"))
    np.save(tmp_path / "x.npy", golden["input"][:2])
    doc = as_json("run", model, "--input", tmp_path / "x.npy")
    (out,) = doc["outputs"]
    assert out["dtype"] == "float32" and out["shape"] == [2, 10]
    np.testing.assert_allclose(np.array(out["values"]), golden["output"][:2], atol=1e-5)


def test_convert_json_keeps_step_logs_off_stdout(tmp_path):
    result = invoke("convert", MODELS / "keras_cnn.pb", "-o", tmp_path / "m.tflite",
                    "--quantize", "int8", "--calib", MODELS / "digits_calib.npy",
                    "--calib-samples", "8", "--equalize", "--force-transforms", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)   # the equalization's log line is not in it ...
    assert doc["quantization"]["calibration_samples"] == 8
    assert "equalized" in result.stderr  # ... but on stderr
