"""A tiny float graph for the pipeline's tests: y = RELU(x * 2 + 1), out = y - 3."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE


def small_graph() -> Graph:
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    g.inputs = [x]
    scaled = g.tensor("scaled", np.float32)
    g.add_op("MUL", [x, g.const("two", np.float32(2))], [scaled], NONE, name="scaled")
    shifted = g.tensor("shifted", np.float32)
    g.add_op("ADD", [scaled, g.const("one", np.float32(1))], [shifted], NONE, name="shifted")
    y = g.tensor("y", np.float32)
    g.add_op("RELU", [shifted], [y], name="y")
    out = g.tensor("out", np.float32)
    g.add_op("SUB", [y, g.const("three", np.float32(3))], [out], NONE, name="out")
    g.outputs = [out]
    infer_shapes(g)
    return g


def samples(n: int = 8) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [{"x": rng.uniform(-1, 1, (1, 4)).astype(np.float32)} for _ in range(n)]
