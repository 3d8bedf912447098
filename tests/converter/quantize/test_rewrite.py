"""The full-integer rewrite on small graphs: parameter rules and LiteRT interop."""

import numpy as np
import pytest

from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph, Padding
from edgelite.converter.quantize.params import QType
from edgelite.converter.quantize.rewrite import IOType, RewriteConfig, quantize_graph
from tests.support import assert_bit_exact

from ..irgraph import conv_graph, rand, then

NONE = dict(fused_activation_function=Activation.NONE)


def concat_graph():
    g, conv = conv_graph()
    pooled = then(g, "MAX_POOL_2D", [g.inputs[0]], "pool", padding=0, stride_h=1, stride_w=1,
                  filter_height=1, filter_width=1, **NONE)
    g.outputs = [then(g, "CONCATENATION", [conv.outputs[0], pooled], "cat", axis=3, **NONE)]
    infer_shapes(g)
    return g


@pytest.mark.parametrize("qtype", [QType.INT8, QType.UINT8])
@pytest.mark.parametrize("low,high,quantizes", [(-5.0, 3.0, 2), (-1.5, 1.5, 1)])
def test_concat_inputs_share_output_params(qtype, low, high, quantizes, litert):
    # x is read by the conv and (through MAX_POOL) by the concat: it takes the concat's
    # parameters if they are at most WIDEN (2) times coarser than its own [-1, 1] ones
    # (scale 3/255: one QUANTIZE, the input's), else the pool's result is requantized
    # (scale 8/255: the conv would read x 4 times coarser)
    g = concat_graph()
    ranges = {"x": (-1.0, 1.0), "conv": (low, high), "pool": (-1.0, 1.0), "cat": (low, high)}
    quantize_graph(g, ranges, RewriteConfig(qtype, io_type=IOType.FLOAT))
    cat = next(op for op in g.ops if op.type == "CONCATENATION")
    out = cat.outputs[0].quant
    for t in cat.inputs:  # conv's output takes the shared params
        assert t.quant.scale[0] == out.scale[0] and t.quant.zero_point[0] == out.zero_point[0]
    assert g.op_counts() == {"CONCATENATION": 1, "CONV_2D": 1, "DEQUANTIZE": 1,
                             "MAX_POOL_2D": 1, "QUANTIZE": quantizes}
    interp = litert.Interpreter(model_content=export_tflite(g))
    interp.allocate_tensors()
    x = np.clip(rand(1, 6, 6, 3), -1, 1)
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])
    assert np.abs(y[..., 4:] - x).max() <= 2 * out.scale[0]  # the pooled copy survives


def test_concat_params_go_back_through_same_scale_ops_and_shared_producers(litert):
    """A U-Net's skip: the conv's output feeds a MAX_POOL and the CONCATENATION, the concat's
    other operand comes through a RESHAPE. All of them take the concat's parameters, as in
    TF's file: no QUANTIZE requantizes an operand."""
    g, conv = conv_graph()
    c = conv.outputs[0]
    pool = then(g, "MAX_POOL_2D", [c], "pool", padding=0, stride_h=1, stride_w=1,
                filter_height=1, filter_width=1, **NONE)
    flat = then(g, "RESHAPE", [pool, g.const("shape", np.int32([1, 6, 6, 4]))], "flat",
                new_shape=[1, 6, 6, 4])
    g.outputs = [then(g, "CONCATENATION", [flat, c], "cat", axis=3, **NONE)]
    infer_shapes(g)
    ranges = {"x": (-1.0, 1.0), "conv": (-2.0, 2.5), "pool": (-1.0, 2.5), "flat": (-1.0, 2.5),
              "cat": (-2.0, 2.5)}
    quantize_graph(g, ranges, RewriteConfig(QType.INT8, io_type=IOType.FLOAT))
    assert g.op_counts() == {"CONCATENATION": 1, "CONV_2D": 1, "DEQUANTIZE": 1,
                             "MAX_POOL_2D": 1, "QUANTIZE": 1, "RESHAPE": 1}
    expected = (np.float32(4.5 / 255), -128 + round(2.0 / (4.5 / 255)))
    for t in (c, pool, flat, next(op for op in g.ops if op.type == "CONCATENATION").outputs[0]):
        assert (t.quant.scale[0], t.quant.zero_point[0]) == expected
    interp = litert.Interpreter(model_content=export_tflite(g))
    interp.allocate_tensors()   # LiteRT accepts the shared parameters


@pytest.mark.parametrize("on_grid", [True, False])
def test_weights_on_one_int8_grid_stay_per_tensor(on_grid):
    """QAT weights after a per-tensor FakeQuant are int8 values times one scale: they stay
    per tensor (exactly, as TF keeps them); other weights are per channel."""
    g, conv = conv_graph()
    rng = np.random.default_rng(3)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.float32)
    w[0, 0, 0, 0] = 127
    scale = np.float32(0.0123)
    w = w * scale if on_grid else w * scale + rng.uniform(0, scale / 2, w.shape).astype(
        np.float32)
    conv.inputs[1].data = w
    g.outputs = [conv.outputs[0]]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "conv": (-4.0, 4.0)}, RewriteConfig(QType.INT8))
    weights = conv.inputs[1]
    assert weights.quant.scale.size == (1 if on_grid else 4)
    if on_grid:
        np.testing.assert_allclose(weights.data * weights.quant.scale[0], w, rtol=1e-6)


def test_fixed_and_same_as_input_params():
    g, x = Graph(), None
    x = g.tensor("x", np.float32, (1, 10))
    g.inputs = [x]
    s = then(g, "SOFTMAX", [x], "sm", beta=1.0)
    r = then(g, "RESHAPE", [s, g.const("shape", np.int32([2, 5]))], "r", new_shape=[2, 5])
    g.outputs = [r]
    infer_shapes(g)
    quantize_graph(g, {"x": (-4.0, 4.0)}, RewriteConfig(QType.INT8, io_type=IOType.INT8))
    assert g.inputs[0].dtype == np.int8
    for t in (s, r):
        assert t.quant.scale[0] == np.float32(1 / 256) and t.quant.zero_point[0] == -128


def test_integer_outputs_without_parameters_stay_as_they_are(litert):
    # ARG_MAX's int32 indices are no quantized tensor: no DEQUANTIZE after them (LiteRT's
    # DEQUANTIZE refuses int32 inputs, dequantize.cc).
    g, conv = conv_graph()
    idx = g.tensor("idx", np.int32)
    g.add_op("ARG_MAX", [conv.outputs[0], g.const("axis", np.int32([3]))], [idx],
             {"output_type": 2})
    g.outputs = [conv.outputs[0], idx]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "conv": (-5.0, 3.0)},
                   RewriteConfig(QType.INT8, io_type=IOType.FLOAT))
    assert g.outputs[1] is idx and idx.dtype == np.int32
    assert all(op.inputs[0].dtype == np.int8 for op in g.ops if op.type == "DEQUANTIZE")
    interp = litert.Interpreter(model_content=export_tflite(g))
    interp.allocate_tensors()


@pytest.mark.parametrize("qtype", [QType.INT8, QType.UINT8])
@pytest.mark.parametrize("operand", ["input", "constant"])
def test_dynamic_update_slice_shares_params_and_keeps_its_start_indices(qtype, operand):
    """DYNAMIC_UPDATE_SLICE copies codes (LiteRT checks no parameters): operand, update and
    output get one set (TF: SameOperandsAndResultsScale) -- a float input is quantized
    straight to it, an integer producer (RELU) takes it -- and the int32 start indices
    neither need a range nor change. The file runs bit-exact in both LiteRT kernel sets."""
    from tests.support import assert_bit_exact

    g = Graph()
    x = g.tensor("x", np.float32, (4, 3))
    u, starts = g.tensor("u", np.float32, (1, 3)), g.tensor("starts", np.int32, (2,))
    g.inputs = [x, u, starts] if operand == "input" else [u, starts]
    base = x if operand == "input" else g.const("base", np.linspace(-1, 1, 12, dtype=np.float32)
                                                .reshape(4, 3))
    relu = then(g, "RELU", [u], "relu")
    g.outputs = [then(g, "DYNAMIC_UPDATE_SLICE", [base, relu, starts], "y")]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "u": (-3.0, 3.0), "relu": (0.0, 3.0), "y": (-1.0, 3.0)},
                   RewriteConfig(qtype, io_type=IOType.FLOAT))
    dus = next(op for op in g.ops if op.type == "DYNAMIC_UPDATE_SLICE")
    out = dus.outputs[0].quant
    for t in (dus.inputs[0], dus.inputs[1]):
        assert t.dtype == qtype.dtype
        assert t.quant.scale[0] == out.scale[0] and t.quant.zero_point[0] == out.zero_point[0]
    assert dus.inputs[2] is starts and starts.dtype == np.int32 and starts.quant is None
    assert out.scale[0] == np.float32(4.0 / 255)  # the range of the three: [-1, 3]
    quantizes = 2 if operand == "input" else 1  # x (to the shared parameters) and u
    assert g.op_counts() == {"QUANTIZE": quantizes, "RELU": 1, "DYNAMIC_UPDATE_SLICE": 1,
                             "DEQUANTIZE": 1}

    feeds = [np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),
             np.array([[-2.0, 0.5, 2.5]], np.float32), np.array([7, 0], np.int32)]
    feeds = feeds if operand == "input" else feeds[1:]
    (y,) = assert_bit_exact(export_tflite(g), feeds)["reference"]
    want = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    want[3] = [0.0, 0.5, 2.5]  # start row 7 clamps to 3
    assert np.abs(y - want).max() <= out.scale[0]


@pytest.mark.parametrize("qtype,integer", [(QType.INT8, True), (QType.UINT8, False)])
def test_int8_only_ops_stay_float_in_uint8_models(qtype, integer):
    """EXP has int8 (and int16) kernels in LiteRT and no uint8 one (OpDef.uint8 False)."""
    g, conv = conv_graph()
    g.outputs = [then(g, "EXP", [conv.outputs[0]], "exp")]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "conv": (-5.0, 3.0), "exp": (0.0, 20.0)},
                   RewriteConfig(qtype, io_type=IOType.FLOAT))
    exp = next(op for op in g.ops if op.type == "EXP")
    assert (exp.inputs[0].dtype == qtype.dtype) is integer
    assert (exp.outputs[0].dtype == np.float32) is not integer


def test_ops_named_in_int16_run_16x8_inside_an_int8_model():
    """RewriteConfig.int16: the conv keeps int16 activations (int8 weights, int64 bias); a
    QUANTIZE requantizes int8 <-> int16 where the type changes; LiteRT runs the file as
    edgelite does, bit for bit."""
    g, conv = conv_graph()
    relu = then(g, "RELU", [conv.outputs[0]], "relu")
    g.outputs = [then(g, "MAX_POOL_2D", [relu], "pool", padding=Padding.VALID, stride_h=2,
                      stride_w=2, filter_height=2, filter_width=2, **NONE)]
    infer_shapes(g)
    ranges = {"x": (-1.0, 1.0), "conv": (-5.0, 3.0), "relu": (0.0, 3.0), "pool": (0.0, 3.0)}
    quantize_graph(g, ranges, RewriteConfig(QType.INT8, io_type=IOType.FLOAT,
                                            int16=frozenset({"conv"})))
    types = {op.type: op for op in g.ops}
    x16, w, b = types["CONV_2D"].inputs
    assert (x16.dtype, w.dtype, b.dtype) == (np.int16, np.int8, np.int64)
    assert types["CONV_2D"].outputs[0].dtype == np.int16 and x16.quant.zero_point[0] == 0
    assert types["RELU"].inputs[0].dtype == np.int8  # requantized to int8 after the conv
    assert g.op_counts() == {"QUANTIZE": 2, "CONV_2D": 1, "RELU": 1, "MAX_POOL_2D": 1,
                             "DEQUANTIZE": 1}
    x = np.clip(rand(1, 6, 6, 3), -1, 1)
    assert_bit_exact(export_tflite(g), [x])


def test_comparisons_and_arg_max_read_the_quantized_data():
    """Ops whose outputs are no quantized data (GREATER's bool, ARG_MAX's int32) run on the
    int8 tensors, as in TF's files -- no DEQUANTIZE before them; a compared constant gets
    parameters over its value and the data's range (its own, a single 0.0, would have scale
    1.0, which LiteRT's comparisons refuse)."""
    g, conv = conv_graph()
    y = conv.outputs[0]
    big = g.tensor("big", np.bool_)
    g.add_op("GREATER", [y, g.const("zero", np.float32(0.0))], [big], {})
    idx = g.tensor("idx", np.int32)
    g.add_op("ARG_MAX", [y, g.const("axis", np.int32([3]))], [idx], {"output_type": 2})
    g.outputs = [big, idx]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "conv": (-5.0, 3.0)},
                   RewriteConfig(QType.INT8, io_type=IOType.FLOAT))
    assert "DEQUANTIZE" not in g.op_counts()
    greater = next(op for op in g.ops if op.type == "GREATER")
    assert [t.dtype for t in greater.inputs] == [np.int8, np.int8]
    assert greater.inputs[1].quant.scale[0] == greater.inputs[0].quant.scale[0] < 1.0
    assert_bit_exact(export_tflite(g), [np.clip(rand(1, 6, 6, 3), -1, 1)])


def test_a_tensor_read_by_two_concatenations_keeps_the_finer_parameters():
    """a feeds two concatenations that both read more than a's [-8, 8] (b, a constant 30):
    tied, a would be 2.5 times coarser (over WIDEN) for the ADD that reads it too, so it keeps
    its own parameters and is requantized for both; cat2 (a result, its constant beyond its
    own range) stays wide however often it is looked at (the search ends)."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    g.inputs = [x]
    a, b = (then(g, "ADD", [x, x], n, **NONE) for n in ("a", "b"))
    thirty = g.const("thirty", np.full((1, 4), 30.0, np.float32))
    g.outputs = [then(g, "CONCATENATION", [a, b], "cat1", axis=1, **NONE),
                 then(g, "CONCATENATION", [a, thirty], "cat2", axis=1, **NONE),
                 then(g, "ADD", [a, a], "d", **NONE)]
    infer_shapes(g)
    ranges = {"x": (-1.0, 1.0), "a": (-8.0, 8.0), "b": (-20.0, 20.0), "cat1": (-20.0, 20.0),
              "cat2": (-8.0, 8.0), "d": (-16.0, 16.0)}
    quantize_graph(g, ranges, RewriteConfig(QType.INT8, io_type=IOType.INT8))
    scale = {t.name: t.quant.scale[0] for op in g.ops for t in op.outputs}
    assert scale["a"] == np.float32(16 / 255)
    assert scale["b"] == scale["cat1"] == scale["a_requantized"] == np.float32(40 / 255)
    assert scale["cat2"] == scale["a_requantized_1"] == np.float32(38 / 255)
    assert g.op_counts()["QUANTIZE"] == 2


def test_top_k_selects_int8_values_and_keeps_its_int32_indices():
    """TOPK_V2 (values, indices): the values are the input's int8 codes with its parameters
    (TFLite's spec: restrict_same_input_output_scale), the indices stay int32 -- as TF's
    int8 files; no DEQUANTIZE before it. Bit-exact with both LiteRT kernel sets."""
    g, conv = conv_graph()
    flat = then(g, "RESHAPE", [conv.outputs[0], g.const("shape", np.int32([1, 144]))], "flat",
                new_shape=[1, 144])
    values = g.tensor("values", np.float32)
    idx = g.tensor("idx", np.int32)
    g.add_op("TOPK_V2", [flat, g.const("k", np.int32(5))], [values, idx], {})
    g.outputs = [values, idx]
    infer_shapes(g)
    quantize_graph(g, {"x": (-1.0, 1.0), "conv": (-5.0, 3.0)},
                   RewriteConfig(QType.INT8, io_type=IOType.FLOAT))
    topk = next(op for op in g.ops if op.type == "TOPK_V2")
    assert [t.dtype for t in topk.inputs] == [np.int8, np.int32]
    assert [t.dtype for t in topk.outputs] == [np.int8, np.int32]
    assert topk.outputs[0].quant.scale[0] == topk.inputs[0].quant.scale[0]
    assert g.outputs[1] is idx and g.op_counts()["DEQUANTIZE"] == 1
    assert_bit_exact(export_tflite(g), [np.clip(rand(1, 6, 6, 3), -1, 1)])


def test_gather_nd_keeps_params_segment_sums_stay_float_fill_keeps_a_scalar(litert):
    """The sparse-embedding ops: GATHER_ND moves int8 codes (same parameters as its
    params); UNSORTED_SEGMENT_SUM has no int8 kernel in LiteRT and stays float between
    DEQUANTIZE / QUANTIZE; a comparison with the re-quantized sum reads that tensor's range
    from its parameters; FILL's value stays a scalar (fill.cc refuses a [1] value)."""
    g = Graph()
    x = g.tensor("x", np.float32, (4, 3))
    g.inputs = [x]
    rows = g.tensor("rows", np.float32)
    g.add_op("GATHER_ND", [x, g.const("idx", np.int32([[3], [0], [3]]))], [rows], {})
    sums = g.tensor("sums", np.float32)
    g.add_op("UNSORTED_SEGMENT_SUM", [rows, g.const("ids", np.int32([1, 0, 1])),
                                      g.const("n", np.int32(2))], [sums], {})
    empty = g.tensor("empty", np.bool_)
    g.add_op("EQUAL", [sums, g.const("zero", np.float32(0.0))], [empty], {})
    filled = g.tensor("filled", np.float32)
    g.add_op("FILL", [g.const("dims", np.int32([2, 3])), g.const("v", np.float32(0.5))],
             [filled], {})
    out = g.tensor("out", np.float32)
    g.add_op("ADD", [sums, filled], [out], dict(fused_activation_function=Activation.NONE))
    g.outputs = [out, empty]
    infer_shapes(g)
    quantize_graph(g, {"x": (-2.0, 2.0), "rows": (-2.0, 2.0), "sums": (-4.0, 4.0),
                       "filled": (0.0, 0.5), "out": (-4.0, 4.5)},
                   RewriteConfig(QType.INT8, io_type=IOType.FLOAT))
    gather = next(op for op in g.ops if op.type == "GATHER_ND")
    assert gather.inputs[0].dtype == gather.outputs[0].dtype == np.int8
    assert gather.outputs[0].quant.scale[0] == gather.inputs[0].quant.scale[0]
    segment = next(op for op in g.ops if op.type == "UNSORTED_SEGMENT_SUM")
    assert segment.inputs[0].dtype == segment.outputs[0].dtype == np.float32
    fill = next(op for op in g.ops if op.type == "FILL")
    assert fill.inputs[1].dtype == np.int8 and fill.inputs[1].shape == ()
    interp = litert.Interpreter(model_content=export_tflite(g))
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], rand(4, 3))
    interp.invoke()


@pytest.mark.parametrize("qtype", [QType.INT8, QType.UINT8, QType.INT16])
@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_add_sub_output_multiplier_stays_below_one(op, qtype):
    """A near-zero output range (x - x' for nearly equal x, x'): the output scale is kept at
    4 * max(input scales) / 2^left_shift or more, so add.cc / sub.cc's output multiplier stays
    below 1 -- at 1 LiteRT's ADD aborts and its SUB no longer rescales (add_paths.py) -- and
    the int8 result is the float one to within the inputs' steps."""
    g = Graph()
    a, b = g.tensor("a", np.float32, (4, 16)), g.tensor("b", np.float32, (4, 16))
    g.inputs = [a, b]
    g.outputs = [then(g, op, [a, b], "y", **NONE)]
    infer_shapes(g)
    ranges = {"a": (-1.0, 1.0), "b": (-1.0, 1.0), "y": (-2e-8, 3e-8)}
    quantize_graph(g, ranges, RewriteConfig(qtype, io_type=IOType.FLOAT))
    q = next(o for o in g.ops if o.type == op)
    s_in = max(float(t.quant.scale[0]) for t in q.inputs)
    left_shift = 15 if qtype is QType.INT16 else 20
    multiplier = 2 * s_in / (2**left_shift * float(q.outputs[0].quant.scale[0]))
    assert 0.45 <= multiplier <= 0.5
    model = export_tflite(g)
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    results = assert_bit_exact(model, [x, x if op == "SUB" else -x])
    assert np.abs(results["reference"][0]).max() <= 2 * s_in
