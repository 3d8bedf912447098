"""`edgelite inspect` (cli/inspect_cmd.py): ops, tensors, subgraphs and the arena; with
`--target micro` and `--footprint [--json]` (interpreter/micro/arena.py, micro/footprint.py)
exact values on a hand-built int8 model and on a sample model."""

import json

import numpy as np

from edgelite.interpreter import micro_arena
from edgelite.interpreter.micro.footprint import footprint
from tests.conftest import MODELS
from tests.interpreter.micro.test_footprint import conv_fc_model
from tests.support.cli import invoke


def test_inspect_footprint_table_and_json(tmp_path):
    path = tmp_path / "conv_fc.tflite"
    path.write_bytes(conv_fc_model())
    table = invoke("inspect", path, "--footprint")
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[1].split() == ["0", "CONV_2D", "conv_out", "864", "66", "80", "<-", "peak"]
    assert lines[2].split() == ["1", "FULLY_CONNECTED", "y", "240", "260", "64"]
    assert lines[3] == ("total: 1104 MACs, 326 weight bytes (flash), peak activations 80 "
                        "bytes at op 0 (RAM)")
    as_json = invoke("inspect", path, "--footprint", "--json")
    assert json.loads(as_json.output) == footprint(conv_fc_model()).as_dict()


def test_inspect_target_micro_prints_both_arenas():
    path = MODELS / "keras_cnn.tf_int8.tflite"
    data = path.read_bytes()
    result = invoke("inspect", path, "--target", "micro")
    assert result.exit_code == 0, result.output
    assert (f"micro arena: {micro_arena(data, '32bit')} bytes (32-bit target), "
            f"{micro_arena(data, 'host')} bytes (64-bit host)") in result.output
    assert "CONV_2D" in result.output  # the usual summary comes first


def test_inspect_lists_ops_tensors_and_arena(converted):
    path, _ = converted
    result = invoke("inspect", path)
    assert result.exit_code == 0, result.output
    for text in ("CONV_2D", "FULLY_CONNECTED", "SOFTMAX", "input", "probs", "float32",
                 "arena"):
        assert text in result.output


def test_inspect_malformed_tflite(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x18\x00\x00\x00TFL3" + b"\xff" * 40)
    result = invoke("inspect", bad)
    assert result.exit_code == 1 and result.output.startswith("error:")
    assert "Traceback" not in result.output


def test_inspect_run_and_bench_models_with_subgraphs(tmp_path):
    from tests.interpreter import subgraph_models as sm
    path = tmp_path / "loop.tflite"
    path.write_bytes(sm.nested_while(outer=3, inner=4))
    text = invoke("inspect", str(path)).output
    assert "5 subgraph(s)" in text
    assert "subgraphs: 0 main (1 ops), 1 cond (1 ops), 2 outer_body (4 ops), 3 cond (1 ops), " \
           "4 subgraph4 (3 ops)" in text
    assert "subgraph 2 'outer_body': inputs [0, 1], outputs [6, 7]" in text
    assert "    1 WHILE                  in [2, 1] -> out [4, 5]  cond_subgraph_index=3, " \
           "body_subgraph_index=4" in text
    np.save(tmp_path / "i.npy", np.array(0, np.int32))
    np.save(tmp_path / "x.npy", np.array([1, -2, 0.5], np.float32))
    result = invoke("run", str(path), "--input", f"i={tmp_path / 'i.npy'}",
                    "--input", f"x={tmp_path / 'x.npy'}")
    assert result.exit_code == 0, result.output
    assert "i_out: int32 []\n3\n" in result.output
    result = invoke("bench", str(path), "--runs", "2", "--warmup", "0", "--json")
    assert result.exit_code == 0, result.output
    assert '"op_type": "WHILE"' in result.output
