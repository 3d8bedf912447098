"""Our TFLite bindings read files written by TensorFlow's converter, and match LiteRT's schema."""

import re
from pathlib import Path

import numpy as np
import pytest

from edgelite.schema import ops
from edgelite.schema import generated_tflite as tfl
from tests.conftest import litert_module

DATA = Path(__file__).parent / "data"


def _load(name):
    buf = (DATA / name).read_bytes()
    assert tfl.Model.ModelBufferHasIdentifier(buf, 0)
    return buf, tfl.ModelT.InitFromPackedBuf(buf, 0)


def _names(sg):
    return [t.name.decode() for t in sg.tensors]


def test_tf_made_float_model():
    buf, m = _load("tiny_conv.tflite")
    assert m.version == 3
    codes = [ops.BUILTIN_NAME[ops.builtin_code_of(c)] for c in m.operatorCodes]
    assert codes == ["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "MEAN",
                     "FULLY_CONNECTED", "SOFTMAX"]
    assert m.buffers[0].data is None           # buffers[0] is the empty sentinel
    sg = m.subgraphs[0]
    ops_in_order = [codes[o.opcodeIndex] for o in sg.operators]
    assert ops_in_order == codes
    names = _names(sg)
    inp, out = sg.tensors[sg.inputs[0]], sg.tensors[sg.outputs[0]]
    assert inp.name == b"image" and list(inp.shape) == [1, 8, 8, 3]
    assert inp.type == tfl.TensorType.FLOAT32 and list(out.shape) == [1, 5]

    conv = sg.operators[0]
    assert conv.builtinOptionsType == tfl.BuiltinOptions.Conv2DOptions
    assert ops.operator_options(conv) == {
        "padding": ops.Padding.SAME, "stride_w": 2, "stride_h": 2,
        "fused_activation_function": ops.ActivationFunctionType.RELU6,
        "dilation_w_factor": 1, "dilation_h_factor": 1, "quantized_bias_type": 0}
    w = sg.tensors[conv.inputs[1]]
    assert list(w.shape) == [4, 3, 3, 3] and w.type == tfl.TensorType.FLOAT32  # OHWI
    wdata = np.frombuffer(m.buffers[w.buffer].data.tobytes(), np.float32)
    assert wdata.size == 108 and np.all(np.abs(wdata) <= 0.5)
    assert list(sg.tensors[conv.outputs[0]].shape) == [1, 4, 4, 4]

    dw = ops.operator_options(sg.operators[1])
    assert (dw["padding"], dw["stride_w"], dw["depth_multiplier"]) == (ops.Padding.VALID, 1, 1)
    pool = ops.operator_options(sg.operators[2])
    assert (pool["filter_width"], pool["filter_height"], pool["stride_h"]) == (2, 2, 1)
    assert ops.operator_options(sg.operators[3]) == {"keep_dims": False}
    assert ops.operator_options(sg.operators[5]) == {"beta": 1.0}
    assert "pool" in names and "gap" in names


def test_tf_made_int8_model():
    _, m = _load("tiny_conv_int8.tflite")
    sg = m.subgraphs[0]
    inp = sg.tensors[sg.inputs[0]]
    assert inp.type == tfl.TensorType.INT8
    q = inp.quantization
    assert len(q.scale) == 1 and len(q.zeroPoint) == 1
    conv = sg.operators[0]
    w = sg.tensors[conv.inputs[1]]
    bias = sg.tensors[conv.inputs[2]]
    assert w.type == tfl.TensorType.INT8 and bias.type == tfl.TensorType.INT32
    assert len(w.quantization.scale) == 4 and w.quantization.quantizedDimension == 0
    assert np.all(np.asarray(w.quantization.zeroPoint) == 0)
    # bias scale = input scale * weight scale, per channel
    np.testing.assert_allclose(np.asarray(bias.quantization.scale),
                               q.scale[0] * np.asarray(w.quantization.scale), rtol=1e-5)
    out = sg.tensors[sg.outputs[0]]
    assert out.quantization.scale[0] == pytest.approx(1 / 256)
    assert out.quantization.zeroPoint[0] == -128      # softmax's fixed output params


def test_reference_schema_reader_agrees():
    """Parse the fixture with LiteRT's own schema module and compare."""
    ref = litert_module("ai_edge_litert.schema_py_generated")
    for name in ("tiny_conv.tflite", "tiny_conv_int8.tflite"):
        buf = (DATA / name).read_bytes()
        a = tfl.ModelT.InitFromPackedBuf(buf, 0)
        b = ref.ModelT.InitFromPackedBuf(buf, 0)
        assert [(c.builtinCode, c.version) for c in a.operatorCodes] == \
               [(c.builtinCode, c.version) for c in b.operatorCodes]
        for ta, tb in zip(a.subgraphs[0].tensors, b.subgraphs[0].tensors):
            assert (ta.name, list(ta.shape), ta.type, ta.buffer) == \
                   (tb.name, list(tb.shape), tb.type, tb.buffer)
        for oa, ob in zip(a.subgraphs[0].operators, b.subgraphs[0].operators):
            assert oa.builtinOptionsType == ob.builtinOptionsType
            assert vars(oa.builtinOptions).keys() == vars(ob.builtinOptions).keys()
            for k, v in vars(oa.builtinOptions).items():
                assert np.array_equal(np.asarray(v, dtype=object),
                                      np.asarray(getattr(ob.builtinOptions, k), dtype=object))


def _layout(module_path):
    """class -> {accessor: vtable offset} and class -> {enum name: value} from flatc output."""
    tables, enums, cur, meth = {}, {}, None, None
    for line in Path(module_path).read_text().splitlines():
        m = re.match(r"class (\w+)\(object\):", line)
        if m:
            cur, meth = m.group(1), None
            continue
        m = re.match(r"    def (\w+)\(self", line)
        if m:
            meth = m.group(1)
            continue
        m = re.search(r"self\._tab\.Offset\((\d+)\)", line)
        if m and cur and not cur.endswith("T"):
            tables.setdefault(cur, {}).setdefault(meth, int(m.group(1)))
        m = re.match(r"    (\w+) = (-?\d+)$", line)
        if m and cur:
            enums.setdefault(cur, {})[m.group(1)] = int(m.group(2))
    return tables, enums


def test_layout_matches_litert_schema():
    """Every table field id and enum value equals the installed LiteRT's schema."""
    ref = litert_module("ai_edge_litert.schema_py_generated")
    ours_t, ours_e = _layout(tfl.__file__)
    ref_t, ref_e = _layout(ref.__file__)
    for cls, fields in ref_t.items():          # everything LiteRT knows, we know the same
        assert ours_t.get(cls) == fields, cls
    for cls, values in ref_e.items():
        assert ours_e.get(cls) == values, cls
