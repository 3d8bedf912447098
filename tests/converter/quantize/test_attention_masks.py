"""attention_masks: an additive mask (-1e9 where a key is masked) before a quantized SOFTMAX
becomes a floor MARGIN below the scores' range, so int8 / 16x8 attention keeps its scores
(measured against the float model, in edgelite and LiteRT) instead of rounding them all to
one code."""

import copy

import numpy as np
import pytest

from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph
from edgelite.converter.quantize import QuantizeOptions, QuantMode, quantize
from edgelite.converter.quantize.attention_masks import MARGIN, clamp_additive_masks
from edgelite.converter.shape_inference import infer_shapes
from edgelite.interpreter import Interpreter

from ..irgraph import then

NONE = dict(fused_activation_function=Activation.NONE)
SHAPE = (1, 4, 6)
R = np.random.default_rng(7)


def _masks(n):
    lengths = R.integers(1, SHAPE[2] + 1, n)
    keys = (np.arange(SHAPE[2])[None, :] < lengths[:, None]).astype(np.float32)
    return np.repeat(keys[:, None, None, :], SHAPE[1], axis=2).reshape((n,) + SHAPE)


def _graph(kind: str, big: float = -1e9) -> Graph:
    """softmax(scores + term): term = (1 - mask) * big (Keras), or a constant causal one."""
    g = Graph()
    scores = g.tensor("scores", np.float32, SHAPE)
    g.inputs = [scores]
    if kind in ("input", "select"):
        mask = g.tensor("mask", np.float32, SHAPE)
        g.inputs.append(mask)
    if kind == "select":  # Keras 3: where(mask, scores, -1e9)
        keep = g.tensor("keep", np.bool_)
        g.add_op("CAST", [mask], [keep], name="keep")
        logits = then(g, "SELECT_V2", [keep, scores, g.const("big", np.float32(big))],
                      "logits")
        g.outputs = [then(g, "SOFTMAX", [logits], "probs", beta=1.0)]
        infer_shapes(g)
        return g
    if kind == "input":
        inv = then(g, "SUB", [g.const("one", np.float32(1)), mask], "inv", **NONE)
        term = then(g, "MUL", [inv, g.const("big", np.float32(big))], "term", **NONE)
    else:
        causal = np.triu(np.ones(SHAPE[1:], np.float32), 1)[None] * np.float32(big)
        term = g.const("causal", np.ascontiguousarray(causal[:, :, :SHAPE[2]]))
    logits = then(g, "ADD", [scores, term], "logits", **NONE)
    g.outputs = [then(g, "SOFTMAX", [logits], "probs", beta=1.0)]
    infer_shapes(g)
    return g


def _samples(kind, n):
    out = []
    for k, m in enumerate(_masks(n)):
        sample = {"scores": (3 * R.standard_normal(SHAPE)).astype(np.float32)}
        if kind != "causal":
            sample["mask"] = m
        out.append(sample)
    return out


def _run(model, samples, litert=None):
    interp = (Interpreter(model_content=model) if litert is None else litert.Interpreter(
        model_content=model, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF))
    interp.allocate_tensors()
    ins = {d["name"]: d["index"] for d in interp.get_input_details()}
    out = []
    for s in samples:
        for k, v in s.items():
            interp.set_tensor(ins[k], v)
        interp.invoke()
        out.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
    return np.stack(out).astype(np.float64)


def _sqnr(ref, got):
    return 10 * np.log10(np.sum(ref ** 2) / np.sum((ref - got) ** 2))


@pytest.mark.parametrize("mode, floor_db", [(QuantMode.INT8, 30.0), (QuantMode.INT16X8, 45.0)])
@pytest.mark.parametrize("kind", ["input", "causal", "select"])
def test_masked_softmax_keeps_its_scores(kind, mode, floor_db, litert):
    g = _graph(kind)
    calib, test = _samples(kind, 32), _samples(kind, 16)
    ref = _run(export_tflite(g), test)
    q = copy.deepcopy(g)
    report = quantize(q, QuantizeOptions(mode=mode), samples=calib)
    model = export_tflite(q)
    lo, hi = report.ranges["scores"]
    floor = lo - MARGIN if kind == "select" else lo - (hi - lo + MARGIN)
    assert report.ranges["logits"][0] == pytest.approx(floor)
    for got in (_run(model, test), _run(model, test, litert)):
        assert _sqnr(ref, got) >= floor_db
        # masked keys: no weight (int8), or below 2 e^-MARGIN (16x8's 1/32768 steps)
        assert np.max(got[ref == 0.0]) <= 2 * np.exp(-MARGIN)


def test_the_mask_constant_becomes_the_floor():
    g = _graph("input")
    ranges = {"scores": (-4.0, 6.0), "mask": (0.0, 1.0), "inv": (0.0, 1.0),
              "term": (-1e9, 0.0), "logits": (-1e9, 6.0)}
    assert clamp_additive_masks(g, ranges) == 1
    mul = next(op for op in g.ops if op.type == "MUL")
    assert float(mul.inputs[1].data) == -(10.0 + MARGIN)
    assert ranges["term"] == (-(10.0 + MARGIN), 0.0)
    assert ranges["logits"] == (-4.0 - 10.0 - MARGIN, 6.0)


@pytest.mark.parametrize("big, ranges_m", [(-100.0, (0.0, 1.0)), (-1e9, (0.0, 2.0))])
def test_other_terms_are_left_alone(big, ranges_m):
    """A term that is no mask (not below -1e4), or a multiplier not in [0, 1]."""
    g = _graph("input", big)
    ranges = {"scores": (-4.0, 6.0), "mask": (0.0, 1.0), "inv": ranges_m,
              "term": (big * ranges_m[1], 0.0), "logits": (big * ranges_m[1], 6.0)}
    before = dict(ranges)
    assert clamp_additive_masks(g, ranges) == 0
    assert ranges == before
