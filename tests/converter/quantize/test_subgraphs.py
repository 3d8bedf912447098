"""int8 through WHILE / IF (quantize/subgraphs.py): calibration sees every iteration, loop
variables keep one set of parameters across the loop boundary, LiteRT agrees bit for bit."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from tests.conftest import litert_module

from ..control_flow.library import counter_loop


def _convert(tmp_path, x):
    np.save(tmp_path / "calib.npy", x)
    return convert_detailed(counter_loop(trips=3).bytes(), ConvertOptions(
        outputs=["y"], quantize=QuantizeOptions(calib=str(tmp_path / "calib.npy"))))


def _run(interp, x):
    interp.allocate_tensors()
    out = []
    for row in x:
        interp.set_tensor(interp.get_input_details()[0]["index"], row[None])
        interp.invoke()
        out.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
    return np.concatenate(out)


def test_calibration_sees_every_iteration(tmp_path):
    x = np.random.default_rng(3).uniform(-1, 1, (16, 4)).astype(np.float32)
    result = _convert(tmp_path, x)
    body_ranges = result.quantization.calibration.subgraph_ranges[2]  # main, cond, body
    # the body's x * 2 on the three trips: 2x, 4x, 8x
    assert body_ranges["body/dbl"] == (float((x * 8).min()), float((x * 8).max()))
    # the cond also sees the value the loop ends with
    assert result.quantization.calibration.subgraph_ranges[1]["x"] == body_ranges["body/dbl"]


def test_a_loop_variable_has_one_set_of_parameters(tmp_path):
    x = np.random.default_rng(3).uniform(-1, 1, (16, 4)).astype(np.float32)
    graph = _convert(tmp_path, x).graph
    loop = next(op for op in graph.ops if op.type == "WHILE")
    cond, body = loop.subgraphs["cond"], loop.subgraphs["body"]
    on_the_path = [loop.inputs[1], loop.outputs[1], cond.inputs[1], body.inputs[1],
                   body.outputs[1]]
    assert {t.dtype for t in on_the_path} == {np.dtype(np.int8)}
    params = {(float(t.quant.scale[0]), int(t.quant.zero_point[0])) for t in on_the_path}
    assert len(params) == 1
    (scale, zp), = params
    # the union of every iteration's values: x (the first trip's input) to 8 x
    lo, hi = float(min(x.min(), (8 * x).min())), float(max(x.max(), (8 * x).max()))
    assert scale == pytest.approx((hi - lo) / 255, rel=1e-6)
    assert body.op_counts() == {"ADD": 1, "MUL": 1}  # no QUANTIZE inside the loop
    assert {t.dtype for t in (loop.inputs[0], body.inputs[0])} == {np.dtype(np.int32)}


@pytest.mark.parametrize("kernels", ["default", "reference"])
def test_a_quantized_loop_runs_bit_exact_with_litert(tmp_path, kernels):
    mod = litert_module()
    x = np.random.default_rng(3).uniform(-1, 1, (16, 4)).astype(np.float32)
    model = _convert(tmp_path, x).model
    ours = _run(Interpreter(model_content=model, kernels=kernels), x)
    resolver = mod.OpResolverType.AUTO if kernels == "default" else \
        mod.OpResolverType.BUILTIN_REF
    theirs = _run(mod.Interpreter(model_content=model,
                                  experimental_op_resolver_type=resolver), x)
    np.testing.assert_array_equal(ours, theirs)
    # x enters the loop at the loop variable's scale (its range is 8 |x|'s): half a step
    # of error there, doubled on each of the three trips
    scale = (float((8 * x).max()) - float((8 * x).min())) / 255
    assert np.max(np.abs(ours - x * 8)) <= 5 * scale


def _if_graph() -> bytes:
    """y = IF(p, relu(x) * 3, (-x) * (-x)): the else branch's -x has a range only if it ran
    (its result stays within the then branch's, which gives the IF's output its range)."""
    from ..control_flow.library import BOOL, F32, Function, call
    from ..tfgraph import GraphBuilder
    g = GraphBuilder()
    g.placeholder("x", [1, 4])
    g.placeholder("p", [], BOOL)
    then = Function(g, "then", {"a": F32}, {"out": "m:z:0"})
    then.node("r", "Relu", ["a"], T=F32)
    then.const("three", np.float32(3))
    then.node("m", "Mul", ["r", "three"], T=F32)
    other = Function(g, "else", {"a": F32}, {"out": "m:z:0"})
    other.node("n", "Neg", ["a"], T=F32)
    other.node("m", "Mul", ["n", "n"], T=F32)
    call(g, "cond", "If", ["p", "x"], then_branch="then", else_branch="else")
    g.node("y", "Identity", ["cond"], T=F32)
    return g.bytes()


def test_a_branch_calibration_never_took_stays_float(tmp_path, litert):
    """Calibrated with p always true: the else branch's ops stay float (no range was seen),
    the file loads and runs that branch in LiteRT and edgelite."""
    x = np.random.default_rng(5).uniform(-1, 1, (8, 1, 4)).astype(np.float32)
    np.savez(tmp_path / "calib.npz", x=x, p=np.ones(8, bool))
    result = convert_detailed(_if_graph(), ConvertOptions(
        inputs=["x", "p"], outputs=["y"],
        quantize=QuantizeOptions(calib=str(tmp_path / "calib.npz"))))
    (cond,) = [op for op in result.graph.ops if op.type == "IF"]
    then, other = cond.subgraphs.values()
    assert "DEQUANTIZE" in other.op_counts() and "NEG" in other.op_counts()
    assert "DEQUANTIZE" not in then.op_counts()
    feeds = {"x": x[0], "p": np.array(False)}
    for interp in (Interpreter(model_content=result.model),
                   litert.Interpreter(model_content=result.model)):
        interp.allocate_tensors()
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], feeds[d["name"]].astype(d["dtype"]))
        interp.invoke()
        y = interp.get_tensor(interp.get_output_details()[0]["index"])
        np.testing.assert_allclose(y, x[0] ** 2, atol=0.02)
