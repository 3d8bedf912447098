"""converter/quantize/rules.py: the quantizer's rules, derived from the ops' OpDef records,
quantize a graph of TRANSPOSE_CONV, STRIDED_SLICE, REDUCE_MAX, TILE, PACK and SUM to int8
end to end, and LiteRT runs the result bit for bit as edgelite does."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter.model import load_model

from ...interpreter.quant_oracle import assert_bit_exact
from ..lower.lowering import F32, I32, floats, graph, rng

OPS = ["TRANSPOSE_CONV", "STRIDED_SLICE", "REDUCE_MAX", "TILE", "PACK", "SUM"]


def structural_graph():
    r = rng()
    g = graph(x=(1, 4, 4, 3))
    g.const("sizes", np.array([1, 8, 8, 5], np.int32))
    g.const("w", floats(r, 3, 3, 5, 3))  # HW, out, in
    g.node("up", "Conv2DBackpropInput", ["sizes", "w", "x"], T=F32, strides=[1, 2, 2, 1],
           padding="SAME")
    for name, v in (("b", [0, 1, 0, 0]), ("e", [1, 7, 8, 5]), ("s", [1, 2, 1, 1])):
        g.const(name, np.array(v, np.int32))
    g.node("sl", "StridedSlice", ["up", "b", "e", "s"], T=F32, Index=I32)  # (1, 3, 8, 5)
    g.const("ax2", np.array([2], np.int32))
    g.node("mx", "Max", ["sl", "ax2"], T=F32, Tidx=I32, keep_dims=True)  # (1, 3, 1, 5)
    g.const("mult", np.array([1, 1, 2, 1], np.int32))
    g.node("tl", "Tile", ["mx", "mult"], T=F32, Tmultiples=I32)  # (1, 3, 2, 5)
    g.node("pk", "Pack", ["tl", "tl"], T=F32, N=2, axis=1)  # (1, 2, 3, 2, 5)
    g.const("ax1", np.array([2], np.int32))
    g.node("y", "Sum", ["pk", "ax1"], T=F32, Tidx=I32, keep_dims=False)  # (1, 2, 2, 5)
    return g


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    x = np.random.default_rng(5).uniform(-1, 1, (32, 1, 4, 4, 3)).astype(np.float32)
    path = tmp_path_factory.mktemp("calib") / "calib.npy"
    np.save(path, x.reshape(32, 4, 4, 3)[:, None])
    result = convert_detailed(structural_graph().bytes(), ConvertOptions(
        inputs=["x"], outputs=["y"], quantize=QuantizeOptions(calib=str(path))))
    return result.model, x


def test_every_op_runs_int8(quantized):
    model, _ = quantized
    sub = load_model(model).subgraphs[0]
    names = [op.name for op in sub.operators]
    # float in, float out; inside, int8 only (PACK's shared parameters requantize its
    # input with an int8 -> int8 QUANTIZE, as CONCATENATION's do)
    assert [n for n in names if n != "QUANTIZE"] == OPS + ["DEQUANTIZE"]
    assert names[0] == "QUANTIZE"


def test_litert_agrees_bit_for_bit(quantized):
    # LiteRT's BUILTIN_REF resolver registers TILE only up to version 2 (register_ref.cc),
    # so it cannot load an int8 TILE (version 3): the default set here; the reference
    # arithmetic of each op is checked per op (tests/interpreter/kernels).
    model, x = quantized
    for sample in x[:4]:
        assert_bit_exact(model, [sample], kernels=("default",))
