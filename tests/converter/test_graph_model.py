"""graph_model.py: the interpreter's Model of an IR graph, built directly, is what the
interpreter reads from export's file (operator versions and buffer numbers aside), and
shape inference no longer writes a file."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed, graph_model
from edgelite.converter.export import export_tflite
from edgelite.converter.graph_model import interpreter_model
from edgelite.converter.ir import Activation, Graph, QuantParams
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.shape_inference import infer_shapes
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS

CALIB = str(MODELS / "digits_calib.npy")


def assert_same(built, read) -> None:
    """Field by field, except Operator.version and Tensor.buffer (module docstring)."""
    assert (built.version, built.description, built.has_identifier) == \
        (read.version, read.description, read.has_identifier)
    assert dict(built.metadata) == dict(read.metadata)
    assert [(s.key, s.subgraph_index, dict(s.inputs), dict(s.outputs))
            for s in built.signature_defs] == \
        [(s.key, s.subgraph_index, dict(s.inputs), dict(s.outputs)) for s in read.signature_defs]
    assert len(built.subgraphs) == len(read.subgraphs) == 1
    a, b = built.subgraphs[0], read.subgraphs[0]
    assert (a.index, a.name, a.inputs, a.outputs) == (b.index, b.name, b.inputs, b.outputs)
    assert len(a.tensors) == len(b.tensors)
    for x, y in zip(a.tensors, b.tensors):
        assert (x.index, x.name, x.type_code, x.dtype, x.shape, x.shape_signature,
                x.is_variable, x.is_sparse, x.sparsity) == \
            (y.index, y.name, y.type_code, y.dtype, y.shape, y.shape_signature,
             y.is_variable, y.is_sparse, y.sparsity), x.name
        assert (x.buffer == 0) == (y.buffer == 0), x.name
        assert (x.data is None) == (y.data is None), x.name
        if x.data is not None:
            assert x.data.dtype == y.data.dtype and x.data.shape == y.data.shape
            assert x.data.tobytes() == y.data.tobytes() and not x.data.flags.writeable
        assert (x.quantization is None) == (y.quantization is None), x.name
        if x.quantization is not None:
            p, q = x.quantization, y.quantization
            assert p.quantized_dimension == q.quantized_dimension
            for f in ("scale", "zero_point", "min", "max"):
                u, v = getattr(p, f), getattr(q, f)
                assert (u is None) == (v is None), (x.name, f)
                if u is not None:
                    assert u.dtype == v.dtype and u.tobytes() == v.tobytes(), (x.name, f)
    assert len(a.operators) == len(b.operators)
    for x, y in zip(a.operators, b.operators):
        assert (x.index, x.name, x.builtin_code, x.custom_code, x.inputs, x.outputs,
                x.intermediates, x.custom_options) == \
            (y.index, y.name, y.builtin_code, y.custom_code, y.inputs, y.outputs,
             y.intermediates, y.custom_options)
        assert dict(x.options) == dict(y.options), x.name
        assert [type(v) for v in x.options.values()] == [type(v) for v in y.options.values()]


def check(graph: Graph):
    built = interpreter_model(graph)
    assert built is not None
    assert_same(built, load_model(export_tflite(graph)))
    return built


CONVERSIONS = [("tf1_cnn", None), ("tf1_cnn", "int8"), ("keras_cnn", "uint8"),
               ("qat_cnn", "int8"), ("op_zoo_image", None), ("op_zoo_math", None),
               ("op_zoo_array", None), ("efficientnet_like", None), ("text_classifier", None)]


@pytest.mark.parametrize("name, mode", CONVERSIONS)
def test_sample_conversions(name, mode):
    q = None if mode is None else QuantizeOptions(mode=QuantMode(mode), calib=CALIB)
    graph = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q)).graph
    model = check(graph)
    assert len(model.subgraphs[0].operators) == len(graph.ops) > 0


def test_what_only_a_file_round_trip_shows():
    """Options read back as float32 and tuples, an empty constant, a dynamic dim, a range
    beside the scales, a variable and a tensor with empty quantization."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    x.shape_signature = (-1, 4)
    g.inputs = [x]
    leaky = g.tensor("leaky", np.float32, (1, 4))
    g.add_op("LEAKY_RELU", [x], [leaky], {"alpha": 0.2})
    shaped = g.tensor("shaped", np.float32, (4, 1))
    g.add_op("RESHAPE", [leaky, g.const("shape", np.array([4, 1], np.int32))], [shaped],
             {"new_shape": (4, 1)})
    cat = g.tensor("cat", np.float32, (4, 1))
    g.add_op("CONCATENATION", [shaped, g.const("zeros", np.zeros((0, 1), np.float32))],
             [cat], {"axis": 0, "fused_activation_function": Activation.RELU6})
    q = g.tensor("q", np.int8, (4, 1))
    q.quant = QuantParams(np.array([0.05], np.float32), np.array([-3], np.int64),
                          min=np.array([-6.0], np.float32), max=np.array([6.0], np.float32))
    g.add_op("QUANTIZE", [cat], [q])
    state = g.tensor("state", np.float32, (1, 4))
    state.is_variable = True
    state.quant = QuantParams(np.zeros(0, np.float32), np.zeros(0, np.int64))
    out = g.tensor("out", np.float32, (1, 4))
    g.add_op("ADD", [leaky, state], [out], {"fused_activation_function": Activation.NONE})
    g.outputs = [q, out]
    model = check(g)
    ops = model.subgraphs[0].operators
    assert ops[0].options["alpha"] == float(np.float32(0.2)) != 0.2
    assert ops[1].options["new_shape"] == (4, 1)
    zeros = model.subgraphs[0].tensors[ops[2].inputs[1]]
    assert zeros.data is not None and zeros.data.shape == (0, 1)


def test_graphs_it_leaves_to_the_file():
    g = Graph()
    x = g.tensor("x", np.float32, (2,))
    g.inputs = [x]
    y = g.tensor("y", np.float32, (2,))
    g.add_op("IDENTITY", [x], [y])  # converter-only: the file path refuses it in one line
    g.outputs = [y]
    assert interpreter_model(g) is None
    g.ops[0].type = "CUSTOM"
    assert interpreter_model(g) is None
    g.ops[0].type = "RELU"
    y.shape = None
    assert interpreter_model(g) is None
    y.shape = (2,)
    assert interpreter_model(g) is not None
    # a constant whose values do not fill the shape it shares with x and y (the facts of
    # one dtype and shape are worked out once per model; the data is checked per tensor)
    z = g.tensor("z", np.float32, (2,))
    c = g.const("c", np.ones(3, np.float32))
    c.shape = (2,)
    g.add_op("ADD", [y, c], [z], {"fused_activation_function": Activation.NONE})
    g.outputs = [z]
    assert interpreter_model(g) is None


def _chain(n: int) -> Graph:
    g = Graph()
    head = g.tensor("x", np.float32, (1, 8))
    g.inputs = [head]
    for k in range(n):
        out = g.tensor(f"h{k}", np.float32)
        c = g.const(f"c{k}", np.full((8,), 0.5, np.float32))
        g.add_op("MUL" if k % 2 else "ADD", [head, c], [out],
                 {"fused_activation_function": Activation.RELU if k % 3 else Activation.NONE})
        head = out
    g.outputs = [head]
    return g


def test_infer_shapes_writes_no_file(monkeypatch):
    """A large graph's shapes come without exporting it: the round trip through the file
    format was half the time of a 100,000-node conversion (bench/scale_convert.py)."""
    def refused(*args, **kwargs):
        raise AssertionError("infer_shapes exported the graph")
    monkeypatch.setattr(graph_model, "export_tflite", refused)
    g = _chain(300)
    infer_shapes(g)
    assert all(t.shape == (1, 8) for op in g.ops for t in op.outputs)


def test_a_float_conversion_packs_one_file(monkeypatch):
    """The file is written once, at the end: shape inference reads the graph directly."""
    import edgelite.converter as converter
    from tests.converter.tfgraph import GraphBuilder
    b = GraphBuilder()
    head = b.placeholder("x", [1, 8])
    for k in range(40):
        c = b.const(f"c{k}", np.full((8,), 0.5, np.float32))
        head = b.node(f"n{k}", "AddV2" if k % 2 else "Mul", [head, c], T=np.dtype(np.float32))
    for k in range(10):  # constant expressions, folded one op at a time
        c = b.node(f"e{k}", "Mul", [b.const(f"e{k}/a", np.full((8,), 0.5, np.float32)),
                                    b.const(f"e{k}/b", np.full((8,), 2.0, np.float32))],
                   T=np.dtype(np.float32))
        head = b.node(f"s{k}", "Sub", [head, c], T=np.dtype(np.float32))
    b.node("y", "Relu", [head], T=np.dtype(np.float32))
    calls = []
    real = converter.export_tflite
    monkeypatch.setattr(converter, "export_tflite", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(graph_model, "export_tflite", None)  # (called: TypeError)
    result = convert_detailed(b.bytes())
    assert calls == [1]
    assert result.graph.op_counts() == {"ADD": 20, "MUL": 20, "SUB": 10}  # (RELU fused)
    assert all(t.data is not None and (t.data == 1.0).all()  # the folded 0.5 * 2
               for op in result.graph.ops if op.type == "SUB" for t in op.inputs[1:])
