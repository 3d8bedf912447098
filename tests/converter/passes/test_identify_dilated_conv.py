"""converter/passes/identify_dilated_conv.py on IR graphs laid out as TensorFlow writes a
dilated convolution (tf.nn.convolution's space-to-batch path): the folded graph computes the
same values with fewer ops, and every pattern that is not a SAME or VALID dilated conv is
left alone. Then TensorFlow's own graph (models/tf1_dilated_conv1d.pb): the same op count as
TF's converter, TF's outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.ir import Activation, Graph, Padding
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from edgelite.converter.passes import identify_dilated_conv, run_passes
from edgelite.converter.passes.fold_pad import same_padding

from ..irgraph import rand, run_ir, then

NONE = dict(fused_activation_function=Activation.NONE)


def space_to_batch_amounts(size, kernel, rate, padding):
    """tf.nn.convolution's paddings and crops for one spatial dimension
    (nn_ops.py _with_space_to_batch_base_paddings + required_space_to_batch_paddings):
    the SAME base padding, then enough at the end to make the size a multiple of the rate;
    the crops remove that extra."""
    base = same_padding(size, kernel, 1, rate) if padding == "SAME" else (0, 0)
    extra = -(size + sum(base)) % rate
    return (base[0], base[1] + extra), (0, extra)


@dataclass
class Layout:
    """One pattern: spatial size(s) of the input, kernel, rate, how TF would pad, and the
    optional ops around the conv."""

    spatial: tuple[int, ...]          # (W,) for Conv1D (3-D input), (H, W) for 2-D
    kernel: tuple[int, int]
    rate: tuple[int, ...]             # the block shape, one entry per spatial dimension
    padding: str = "SAME"
    depthwise: bool = False
    inner: str | None = None          # "ADD" (bias) or "PAD" between conv and B2S
    outer_add: bool = False           # a bias ADD after B2S
    activation: Activation = Activation.NONE  # on the outer ADD
    stride: int = 1
    channels: int = 3
    axis: int = 1                     # of EXPAND_DIMS and SQUEEZE (tf.nn.conv1d uses -3)


def build(lay: Layout, paddings=None, crops=None, block2=None):
    """x -> SPACE_TO_BATCH_ND -> [EXPAND_DIMS] -> conv (VALID) -> [SQUEEZE] -> [ADD | PAD]
    -> BATCH_TO_SPACE_ND -> [ADD]; returns (graph, input value)."""
    g = Graph()
    c = lay.channels
    x = g.tensor("x", np.float32, (2, *lay.spatial, c))
    g.inputs = [x]
    amounts = [space_to_batch_amounts(n, k, r, lay.padding)
               for n, k, r in zip(lay.spatial, lay.kernel[-len(lay.spatial):], lay.rate)]
    paddings = np.int32([a for a, _ in amounts]) if paddings is None else np.int32(paddings)
    given_crops = crops is not None
    crops = np.int32([b for _, b in amounts]) if crops is None else np.int32(crops)
    block = np.int32(lay.rate)
    t = then(g, "SPACE_TO_BATCH_ND", [x, g.const("block", block), g.const("pads", paddings)],
             "s2b")
    conv1d = len(lay.spatial) == 1
    if conv1d:
        t = then(g, "EXPAND_DIMS", [t, g.const("axis", np.int32(lay.axis))], "expand")
    kh, kw = lay.kernel
    if lay.depthwise:
        w, out_c = rand(1, kh, kw, c), c
        t = then(g, "DEPTHWISE_CONV_2D", [t, g.const("w", w), g.const("b", np.zeros(c,
                                                                                np.float32))],
                 "conv", padding=Padding.VALID, stride_h=lay.stride, stride_w=lay.stride,
                 dilation_h_factor=1, dilation_w_factor=1, depth_multiplier=1, **NONE)
    else:
        out_c = 4
        t = then(g, "CONV_2D", [t, g.const("w", rand(out_c, kh, kw, c)),
                                g.const("b", np.zeros(out_c, np.float32))], "conv",
                 padding=Padding.VALID, stride_h=lay.stride, stride_w=lay.stride,
                 dilation_h_factor=1, dilation_w_factor=1, **NONE)
    if conv1d:
        t = then(g, "SQUEEZE", [t], "squeeze", squeeze_dims=[lay.axis])
    if lay.inner == "ADD":
        t = then(g, "ADD", [t, g.const("bias_in", rand(out_c))], "bias_in", **NONE)
    elif lay.inner == "PAD":
        extra = [[0, 0]] * (len(lay.spatial) + 2)
        extra[1] = [0, 1]  # one more (zero) row of conv outputs, which the crops must remove
        t = then(g, "PAD", [t, g.const("extra", np.int32(extra))], "pad")
        if not given_crops:
            crops = crops.copy()
            crops[0, 1] += lay.rate[0]
    block_b2s = block if block2 is None else np.int32(block2)
    t = then(g, "BATCH_TO_SPACE_ND", [t, g.const("block2", block_b2s),
                                      g.const("crops", crops)], "b2s")
    if lay.outer_add:
        t = then(g, "ADD", [t, g.const("bias", rand(out_c))], "y",
                 fused_activation_function=lay.activation)
    g.outputs = [t]
    return g, rand(2, *lay.spatial, c)


def check_folds(g, x, counts, padding, dilation):
    before, output = run_ir(g, x)[0], g.outputs[0]
    assert identify_dilated_conv.run(g) == 1
    assert g.op_counts() == counts
    conv = next(op for op in g.ops if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D"))
    assert conv.options["padding"] == padding
    assert (conv.options["dilation_h_factor"], conv.options["dilation_w_factor"]) == dilation
    assert g.outputs[0] is output  # the pattern's result keeps its tensor (and name)
    after = run_ir(g, x)[0]
    assert after.shape == before.shape
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5 * np.abs(before).max())
    return conv


CONV1D = {"EXPAND_DIMS": 1, "CONV_2D": 1, "SQUEEZE": 1}


@pytest.mark.parametrize("size", [12, 13, 15])
@pytest.mark.parametrize("padding", [Padding.SAME, Padding.VALID])
@pytest.mark.parametrize("axis", [1, -3])
def test_conv1d_with_bias(size, padding, axis):
    """tf.nn.convolution on [N, W, C] with dilations=2 and a BiasAdd: one dilated CONV_2D
    between EXPAND_DIMS and SQUEEZE, the bias in the conv, whatever W's remainder."""
    lay = Layout((size,), (1, 3), (2,), padding=padding.name, outer_add=True, axis=axis)
    g, x = build(lay)
    conv = check_folds(g, x, CONV1D, padding, (1, 2))
    assert g.outputs[0].name == "y" and conv.inputs[2].data.any()


def test_conv1d_bias_with_activation_moves_onto_the_conv():
    g, x = build(Layout((11,), (1, 3), (3,), outer_add=True, activation=Activation.RELU))
    conv = check_folds(g, x, CONV1D, Padding.SAME, (1, 3))
    assert conv.options["fused_activation_function"] == Activation.RELU


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_atrous_2d(depthwise, padding):
    """tf.nn.atrous_conv2d / depthwise_conv2d with rate: S2B -> conv -> B2S on NHWC."""
    lay = Layout((9, 10), (3, 2), (2, 3), padding=padding, depthwise=depthwise)
    g, x = build(lay)
    counts = {"DEPTHWISE_CONV_2D": 1} if depthwise else {"CONV_2D": 1}
    check_folds(g, x, counts, Padding[padding], (2, 3))


def test_bias_between_conv_and_batch_to_space():
    g, x = build(Layout((9,), (1, 3), (2,), inner="ADD"))
    conv = check_folds(g, x, CONV1D, Padding.SAME, (1, 2))
    assert conv.inputs[2].data.any()


def test_a_pad_before_batch_to_space_is_dropped():
    """Conv outputs padded in batch space and cropped away again (dilated_conv.h's Pad case)."""
    g, x = build(Layout((8, 9), (3, 3), (2, 2), inner="PAD"))
    check_folds(g, x, {"CONV_2D": 1}, Padding.SAME, (2, 2))


@pytest.mark.parametrize("change", ["paddings", "crops", "block", "stride", "shared",
                                    "spatial bias", "conv padding"])
def test_other_patterns_are_left_alone(change):
    """Paddings / crops that are neither SAME nor VALID (TF's converter only compares them),
    unequal blocks, a strided or SAME conv, an intermediate read twice, a bias that varies
    over space."""
    lay = Layout((9,), (1, 3), (2,), stride=2 if change == "stride" else 1)
    kw = {"paddings": dict(paddings=[[1, 2]]), "crops": dict(crops=[[1, 0]]),
          "block": dict(block2=[1])}.get(change, {})
    g, x = build(lay, **kw)
    if change == "shared":
        g.outputs = [*g.outputs, g.ops[1].outputs[0]]  # the EXPAND_DIMS output
    elif change == "spatial bias":
        lay.inner = "ADD"
        g, x = build(lay)
        add = next(op for op in g.ops if op.type == "ADD")
        add.inputs[1] = g.const("spatial", rand(5, 4))  # [W', C]: differs per position
    elif change == "conv padding":
        next(op for op in g.ops if op.type == "CONV_2D").options["padding"] = Padding.SAME
    counts = g.op_counts()
    assert identify_dilated_conv.run(g) == 0
    assert g.op_counts() == counts


def test_padded_conv_outputs_that_survive_the_crops_are_left_alone():
    """A PAD of conv outputs that the crops keep: the totals still look like SAME
    (P1 = p1 + d * e1 - c1 = 0 + 2 - 0), but the last outputs are the PAD's zeros."""
    g, x = build(Layout((8,), (1, 3), (2,), inner="PAD"), paddings=[[2, 0]], crops=[[0, 0]])
    counts = g.op_counts()
    assert identify_dilated_conv.run(g) == 0
    assert g.op_counts() == counts


def test_the_pass_can_be_switched_off():
    g, x = build(Layout((12,), (1, 3), (2,), outer_add=True))
    before = run_ir(g, x)[0]
    run_passes(g, disabled={"identify_dilated_conv"})
    assert g.op_counts()["SPACE_TO_BATCH_ND"] == 1 and g.op_counts()["BATCH_TO_SPACE_ND"] == 1
    np.testing.assert_allclose(run_ir(g, x)[0], before, rtol=1e-6)
    run_passes(g)
    assert g.op_counts() == CONV1D


# -- TensorFlow's graph -------------------------------------------------------------------------
def _convert_sample(disabled=frozenset()):
    meta = json.loads((MODELS / "tf1_dilated_conv1d.tf_ops.json").read_text())
    result = convert_detailed(MODELS / "tf1_dilated_conv1d.pb", ConvertOptions(
        inputs=meta["inputs"], outputs=meta["outputs"], disabled_passes=frozenset(disabled),
        input_shapes={k: tuple(v) for k, v in meta["input_shapes"].items()}))
    return meta, result


def _run_golden(model: bytes, meta) -> dict[str, np.ndarray]:
    golden = np.load(MODELS / "tf1_dilated_conv1d.golden.npz")
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    by_name = {d["name"]: d["index"] for d in interp.get_input_details()}
    outs = {d["name"]: d["index"] for d in interp.get_output_details()}
    got = {o: [] for o in meta["outputs"]}
    for i in range(len(golden["inputs/x"])):
        for name in meta["inputs"]:
            interp.set_tensor(by_name[name], golden[f"inputs/{name}"][i:i + 1])
        interp.invoke()
        for o in meta["outputs"]:
            got[o].append(interp.get_tensor(outs[o]).copy())
    for o in meta["outputs"]:
        want = golden[f"outputs/{o}"]
        np.testing.assert_allclose(np.concatenate(got[o]), want, rtol=1e-5,
                                   atol=1e-5 * np.abs(want).max(), err_msg=o)
    return got


def test_tensorflows_dilated_conv1d_converts_to_tensorflows_op_count():
    """Each tf.nn.convolution(dilations=...) is SpaceToBatchND -> ExpandDims -> Conv2D ->
    Squeeze -> BatchToSpaceND (+ BiasAdd); TF's converter writes RESHAPE, CONV_2D, RESHAPE
    for it, edgelite EXPAND_DIMS, CONV_2D (dilated, bias folded in), SQUEEZE: 6 ops each."""
    meta, result = _convert_sample()
    counts = result.graph.op_counts()
    assert meta["n_ops"] == 6 and meta["op_counts"] == {"CONV_2D": 2, "RESHAPE": 4}
    assert sum(counts.values()) == meta["n_ops"]
    assert counts == {"CONV_2D": 2, "EXPAND_DIMS": 2, "SQUEEZE": 2}
    assert result.lowered_op_counts["SPACE_TO_BATCH_ND"] == 2
    convs = {op.name: op.options for op in result.graph.ops if op.type == "CONV_2D"}
    assert {(o["padding"], o["dilation_h_factor"], o["dilation_w_factor"])
            for o in convs.values()} == {(Padding.SAME, 1, 2), (Padding.VALID, 1, 3)}
    _run_golden(result.model, meta)


def test_without_the_pass_the_sample_runs_batched_with_the_same_values():
    meta, result = _convert_sample({"identify_dilated_conv"})
    counts = result.graph.op_counts()
    assert counts["SPACE_TO_BATCH_ND"] == counts["BATCH_TO_SPACE_ND"] == 2
    assert sum(counts.values()) > meta["n_ops"]
    _run_golden(result.model, meta)
