"""div_to_mul: x / c becomes x * (1 / c), as TF computes it (grappler's
ReduceDivToReciprocalMul). TF's numbers: models/misc_div (TF 2.21's outputs for x / 2, 3,
0.1, -7 and two per-channel vectors, models/builders/zoo_misc.py)."""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.passes import div_to_mul
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS

from ..irgraph import NONE, input_graph, rand, run_ir, then

SCALARS = ("div_2", "div_3", "div_0_1", "div_neg7")
CHANNELS = ("div_channels", "div_channels_pow2")


@pytest.mark.parametrize("c", [3.0, 0.1, -7.0, 0.0])
def test_a_scalar_divisor_becomes_a_multiplication_by_its_reciprocal(c):
    g, x = input_graph()
    g.outputs = [then(g, "DIV", [x, g.const("c", np.float32(c))], "q", **NONE)]
    data = rand(2, 5, 7)
    data[0, 0, :2] = 0.0  # 0 / 0 = 0 * inf = NaN
    assert div_to_mul.run(g) == 1
    assert g.op_counts() == {"MUL": 1}
    with np.errstate(divide="ignore", invalid="ignore"):
        want = data * (np.float32(1) / np.float32(c))
    np.testing.assert_array_equal(run_ir(g, data)[0], want)


@pytest.mark.parametrize("case", ["numerator", "fused", "int", "kernel"])
def test_left_alone(case):
    """c / x, a DIV with a fused activation, integer division and a DIV lowered from a TF
    kernel's own arithmetic (CropAndResize's box scale) stay DIVs."""
    dtype = np.int32 if case == "int" else np.float32
    g, x = input_graph()
    x.dtype = np.dtype(dtype)
    c = g.const("c", np.asarray(3, dtype))
    ins = [c, x] if case == "numerator" else [x, c]
    out = g.tensor("q", dtype)
    op = g.add_op("DIV", ins, [out], dict(fused_activation_function=1 if case == "fused" else 0))
    op.origin = "CropAndResize" if case == "kernel" else "RealDiv"
    g.outputs = [out]
    assert div_to_mul.run(g) == 0


@pytest.fixture(scope="module")
def misc_div():
    info = json.loads((MODELS / "misc_div.tf_ops.json").read_text())
    result = convert_detailed(MODELS / "misc_div.pb", ConvertOptions(
        inputs=info["inputs"], outputs=info["outputs"],
        input_shapes={k: tuple(v) for k, v in info["input_shapes"].items()}))
    golden = np.load(MODELS / "misc_div.golden.npz")
    interp = Interpreter(model_content=result.model)
    interp.allocate_tensors()
    outs = {}
    for x in golden["input"]:
        interp.set_tensor(interp.get_input_details()[0]["index"], x[None])
        interp.invoke()
        for d in interp.get_output_details():
            outs.setdefault(d["name"], []).append(interp.get_tensor(d["index"])[0])
    return result, golden, {k: np.stack(v) for k, v in outs.items()}


def test_same_ops_as_tensorflow(misc_div):
    result, _, _ = misc_div
    assert result.graph.op_counts() == {"MUL": 6}  # TF's file: 6 MUL


@pytest.mark.parametrize("name", SCALARS)
def test_scalar_divisors_match_tensorflow_bit_for_bit(misc_div, name):
    _, golden, got = misc_div
    np.testing.assert_array_equal(got[name], golden[f"outputs/{name}"])


@pytest.mark.parametrize("name", CHANNELS)
def test_per_channel_divisors_match_tensorflow_to_an_ulp(misc_div, name):
    """TF folds a vector's reciprocal with Eigen's vectorised kernel (an approximate
    reciprocal and a Newton step: 1 / 2 = 0.49999997 on AVX); edgelite's is correctly
    rounded. The outputs differ by at most a unit in the last place or two."""
    _, golden, got = misc_div
    ref = golden[f"outputs/{name}"]
    np.testing.assert_allclose(got[name], ref, rtol=2.5e-7, atol=0)
