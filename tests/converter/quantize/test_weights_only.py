"""weights_only.py: float16 constants, except those float16 cannot hold."""

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.quantize.weights_only import MIN_FLOAT16_ELEMENTS
from edgelite.interpreter import Interpreter
from tests.converter.tfgraph import GraphBuilder

N = max(MIN_FLOAT16_ELEMENTS, 64)


def _graph(mask_value: float) -> bytes:
    """y = x @ W + mask: W small, the mask -1e9 (a masked attention score) or -1."""
    g = GraphBuilder()
    f32 = np.dtype(np.float32)
    x = g.placeholder("x", [1, N])
    w = g.const("w", np.random.default_rng(0).normal(0, 0.1, (N, N)).astype(np.float32))
    mask = np.zeros((1, N), np.float32)
    mask[0, ::2] = mask_value
    h = g.node("h", "MatMul", [x, w], T=f32)
    g.node("y", "AddV2", [h, g.const("mask", mask)], T=f32)
    return g.bytes()


def _float16(gd: bytes):
    return convert_detailed(gd, ConvertOptions(outputs=["y"], quantize=QuantizeOptions(
        mode=QuantMode.FLOAT16)))


def test_constants_float16_cannot_hold_stay_float32():
    big, small = _float16(_graph(-1e9)), _float16(_graph(-1.0))
    # the weights go float16 (one DEQUANTIZE) in both; the -1e9 mask does not
    assert big.graph.op_counts().get("DEQUANTIZE") == 1
    assert small.graph.op_counts().get("DEQUANTIZE") == 2
    interp = Interpreter(model_content=big.model)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], np.ones((1, N), np.float32))
    interp.invoke()
    y = interp.get_tensor(interp.get_output_details()[0]["index"])
    assert np.all(np.isfinite(y)) and np.all(y[0, ::2] < -9e8)
