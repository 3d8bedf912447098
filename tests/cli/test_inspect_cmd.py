"""`edgelite inspect` (cli/inspect_cmd.py): ops, tensors, subgraphs and the arena; with
`--target micro` and `--footprint [--json]` (interpreter/tflm_arena.py, micro_footprint.py)
exact values on a hand-built int8 model and on a sample model."""

import json

import numpy as np

from edgelite.interpreter import micro_arena
from edgelite.interpreter.micro_footprint import footprint
from tests.conftest import MODELS
from tests.interpreter.tflite_builder import ModelBuilder
from tests.support.cli import invoke


def _conv_fc(tmp_path):
    """x[1,4,4,2] -> CONV_2D 3x3 SAME (3 filters) -> [1,4,4,3] -> FULLY_CONNECTED (5 units,
    depth 48) -> y[1,5]; int8, per-channel conv weights."""
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": 0}
    x = b.tensor("x", (1, 4, 4, 2), np.int8, **q)
    w = b.tensor("w", (3, 3, 3, 2), np.int8, data=np.ones((3, 3, 3, 2)), scale=[0.01] * 3,
                 zero_point=[0] * 3)
    bias = b.tensor("bias", (3,), np.int32, data=np.zeros(3), scale=[0.0005] * 3,
                    zero_point=[0] * 3)
    h = b.tensor("conv_out", (1, 4, 4, 3), np.int8, **q)
    fw = b.tensor("fc_w", (5, 48), np.int8, data=np.ones((5, 48)), scale=0.01, zero_point=0)
    fb = b.tensor("fc_b", (5,), np.int32, data=np.zeros(5), scale=0.0005, zero_point=0)
    y = b.tensor("y", (1, 5), np.int8, **q)
    b.op("CONV_2D", [x, w, bias], [h], padding="SAME", stride_w=1, stride_h=1)
    b.op("FULLY_CONNECTED", [h, fw, fb], [y])
    path = tmp_path / "conv_fc.tflite"
    path.write_bytes(b.build([x], [y]))
    return path


def test_footprint_of_a_hand_built_model(tmp_path):
    path = _conv_fc(tmp_path)
    fp = footprint(path.read_bytes())
    # conv: 48 outputs x 3*3*2 products; FC: 5 outputs x 48. Weights: 54 + 12 bias bytes,
    # 240 + 20. Live (16-byte aligned buffers): op 0 reads x (32) and writes conv_out
    # (48); op 1 reads conv_out (48) and writes y (16)
    assert [(x.index, x.op, x.output, x.macs, x.weight_bytes, x.activation_bytes)
            for x in fp.layers] == [(0, "CONV_2D", "conv_out", 864, 66, 80),
                                    (1, "FULLY_CONNECTED", "y", 240, 260, 64)]
    assert (fp.macs, fp.weight_bytes, fp.peak_activation_bytes, fp.peak_op) == (
        1104, 326, 80, 0)
    data = path.read_bytes()
    assert (fp.arena_32bit, fp.arena_host) == (micro_arena(data, "32bit"),
                                               micro_arena(data, "host"))

    table = invoke("inspect", path, "--footprint")
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[1].split() == ["0", "CONV_2D", "conv_out", "864", "66", "80", "<-", "peak"]
    assert lines[2].split() == ["1", "FULLY_CONNECTED", "y", "240", "260", "64"]
    assert lines[3] == ("total: 1104 MACs, 326 weight bytes (flash), peak activations 80 "
                        "bytes at op 0 (RAM)")
    as_json = invoke("inspect", path, "--footprint", "--json")
    assert json.loads(as_json.output) == fp.as_dict()


def test_footprint_of_a_sample_model():
    fp = footprint((MODELS / "keras_cnn.tf_int8.tflite").read_bytes())
    assert [x.op for x in fp.layers] == ["QUANTIZE", "CONV_2D", "DEPTHWISE_CONV_2D",
                                         "CONV_2D", "AVERAGE_POOL_2D", "MEAN",
                                         "FULLY_CONNECTED", "SOFTMAX", "DEQUANTIZE"]
    assert [x.macs for x in fp.layers] == [0, 9216, 9216, 32768, 0, 0, 320, 0, 0]
    assert [x.weight_bytes for x in fp.layers] == [0, 208, 208, 640, 0, 8, 360, 0, 0]
    assert [x.activation_bytes for x in fp.layers] == [320, 1088, 2048, 3072, 2560, 704,
                                                       48, 32, 64]
    # the peak of live buffers equals TFLM's head here (no holes in the plan)
    assert (fp.macs, fp.weight_bytes, fp.peak_activation_bytes, fp.peak_op) == (
        51520, 1424, 3072, 3)


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
