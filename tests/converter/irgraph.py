"""Helpers for pass tests: small IR graphs, running them in edgelite's interpreter, and
checking that a pass keeps the numbers."""

from __future__ import annotations

import numpy as np

from edgelite.converter.shape_inference import infer_shapes
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph, Padding
from tests.support import run_edgelite

RNG = np.random.default_rng(0)
NONE = dict(fused_activation_function=Activation.NONE)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def run_ir(graph: Graph, *xs: np.ndarray) -> list[np.ndarray]:
    infer_shapes(graph)
    return run_edgelite(export_tflite(graph), list(xs))


def conv_graph(channels: int = 4) -> tuple[Graph, object]:
    """x[1,6,6,3] -> CONV_2D 3x3 SAME; returns (graph, conv op) with the conv output open."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 6, 6, 3))
    g.inputs = [x]
    y = g.tensor("conv", np.float32)
    conv = g.add_op("CONV_2D", [x, g.const("w", rand(channels, 3, 3, 3)),
                                g.const("b", rand(channels))], [y],
                    dict(padding=Padding.SAME, stride_h=1, stride_w=1, dilation_h_factor=1,
                         dilation_w_factor=1, fused_activation_function=Activation.NONE))
    return g, conv


def then(g: Graph, type_: str, inputs, name: str, **options):
    out = g.tensor(name, np.float32)
    g.add_op(type_, inputs, [out], options, name=name)
    return out


def input_graph(shape=(2, 5, 7)):
    g = Graph()
    x = g.tensor("x", np.float32, shape)
    g.inputs = [x]
    return g, x


def fires(g, run) -> int:
    """run(g), a pass's run; a pass that rewrites must have found the op types its module
    declares it needs (REQUIRES: run_passes skips it on a graph without them)."""
    from edgelite.converter.passes import PIPELINE
    declared = next((p for p in PIPELINE if p.fn is run), None)
    could = declared is None or declared.can_fire(g)
    n = run(g)
    assert could or not n, f"{declared.name} rewrote a graph lacking its REQUIRES"
    return n


def check_pass(g, run, x, expect_rewrites, expect_counts):
    """run(g) makes expect_rewrites rewrites, leaves expect_counts ops and the same
    outputs for x (atol relative to the output's magnitude)."""
    before = run_ir(g, x)[0]
    assert fires(g, run) == expect_rewrites
    assert g.op_counts() == expect_counts
    after = run_ir(g, x)[0]
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5 * np.abs(before).max())


def check(g, run, x, rewrites, counts):
    """Like check_pass, with atol 1e-6 of the magnitude, and at least 1e-6."""
    before = run_ir(g, x)[0]
    assert fires(g, run) == rewrites
    assert g.op_counts() == counts
    after = run_ir(g, x)[0]
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6 * max(1, np.abs(before).max()))
