"""interpreter/micro/footprint.py: per-layer MACs, weight bytes and live activation bytes,
exact on a hand-built int8 model and on a sample model; its arenas are micro_arena's."""

import numpy as np

from edgelite.interpreter import micro_arena
from edgelite.interpreter.micro.footprint import footprint
from tests.conftest import MODELS

from ..tflite_builder import ModelBuilder


def conv_fc_model() -> bytes:
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
    return b.build([x], [y])


def test_footprint_of_a_hand_built_model():
    data = conv_fc_model()
    fp = footprint(data)
    # conv: 48 outputs x 3*3*2 products; FC: 5 outputs x 48. Weights: 54 + 12 bias bytes,
    # 240 + 20. Live (16-byte aligned buffers): op 0 reads x (32) and writes conv_out
    # (48); op 1 reads conv_out (48) and writes y (16)
    assert [(x.index, x.op, x.output, x.macs, x.weight_bytes, x.activation_bytes)
            for x in fp.layers] == [(0, "CONV_2D", "conv_out", 864, 66, 80),
                                    (1, "FULLY_CONNECTED", "y", 240, 260, 64)]
    assert (fp.macs, fp.weight_bytes, fp.peak_activation_bytes, fp.peak_op) == (
        1104, 326, 80, 0)
    assert (fp.arena_32bit, fp.arena_host) == (micro_arena(data, "32bit"),
                                               micro_arena(data, "host"))


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
