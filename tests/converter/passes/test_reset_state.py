"""reset_state: a variable tensor an op keeps its state in is written with real zero in front
of the op on every invoke -- 0.0 in float, the zero point in int8 / int16 -- in edgelite and
in LiteRT's two kernel sets, whatever the tensor held before."""

import numpy as np
import pytest

from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Activation, Graph, QuantParams
from edgelite.converter.passes import reset_state
from edgelite.converter.shape_inference import infer_shapes
from edgelite.interpreter import Interpreter
from tests.conftest import litert_module

NONE = dict(fused_activation_function=Activation.NONE)


def _q(scale, zp):
    return QuantParams(np.float32([scale]), np.int64([zp]))


def _graph(dtype, x_q=None, state_q=None) -> Graph:
    """y = ADD(x, state), state a variable tensor nothing writes."""
    g = Graph()
    x = g.tensor("x", dtype, (1, 4))
    state = g.tensor("state", dtype, (1, 4))
    state.is_variable = True
    y = g.tensor("y", dtype, (1, 4))
    x.quant, state.quant, y.quant = x_q, state_q, x_q
    g.inputs, g.outputs = [x], [y]
    g.add_op("ADD", [x, state], [y], dict(NONE), name="add")
    return g


def _runtimes(model):
    """(interpreter, whether the state tensor's memory shows the reset): XNNPACK (LiteRT's
    default set) runs SUB -> ADD in its own buffers when it takes both ops."""
    mod = litert_module()
    yield Interpreter(model_content=model), True
    yield Interpreter(model_content=model, kernels="reference"), True
    yield mod.Interpreter(model_content=model,
                          experimental_op_resolver_type=mod.OpResolverType.BUILTIN_REF), True
    yield mod.Interpreter(model_content=model,
                          experimental_op_resolver_type=mod.OpResolverType.AUTO), False


CASES = {
    "float32": (np.float32, None, None),
    "int8": (np.int8, _q(0.1, 3), _q(0.05, -7)),
    "int16": (np.int16, _q(0.001, 0), _q(0.0005, 0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_is_real_zero_at_every_invoke(case):
    dtype, x_q, state_q = CASES[case]
    g = _graph(dtype, x_q, state_q)
    assert [op.type for op in reset_state.stateful_ops(g)] == ["ADD"]
    assert reset_state.run(g) == 1
    assert [op.type for op in g.ops] == ["SUB", "ADD"]
    assert reset_state.stateful_ops(g) == []   # the state is written now: run it once only
    infer_shapes(g)
    model = export_tflite(g)
    x = np.array([[1, -2, 3, 5]], dtype)
    zero = 0 if state_q is None else int(state_q.zero_point[0])
    for interp, shows_state in _runtimes(model):
        interp.allocate_tensors()
        state = next(d["index"] for d in interp.get_tensor_details() if d["name"] == "state")
        for garbage in (11, -13):
            interp.set_tensor(interp.get_input_details()[0]["index"], x)
            interp.set_tensor(state, np.full((1, 4), garbage, dtype))
            interp.invoke()
            np.testing.assert_array_equal(
                interp.get_tensor(interp.get_output_details()[0]["index"]), x)
            if shows_state:
                np.testing.assert_array_equal(interp.get_tensor(state), np.full((1, 4), zero))


def test_a_state_written_by_the_graph_is_left_alone():
    g = _graph(np.float32)
    state = g.ops[0].inputs[1]
    x = g.inputs[0]
    g.insert_op(type(g.ops[0])("RELU", [x], [state], {}, "writes"), g.ops[0])
    assert reset_state.stateful_ops(g) == [] and reset_state.run(g) == 0
