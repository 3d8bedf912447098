"""shared_buffers.py: constants with equal bytes are stored once, in every runtime's eyes the
same model."""

import numpy as np
from ai_edge_litert.interpreter import Interpreter as LiteRT

from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Graph
from edgelite.converter.shape_inference import infer_shapes
from edgelite.interpreter.loader.model import load_model
from edgelite.schema import generated_tflite as tfl
from edgelite.converter.shared_buffers import share_identical_buffers
from tests.converter.irgraph import NONE, rand, run_ir


def _unrolled(steps: int) -> Graph:
    """h = tanh(FC(x) + FC(h)) for `steps` steps, every step with its own copy of the same
    weights (what an unrolled RNN freezes to), plus one constant that differs."""
    w_x, w_h, b = rand(8, 4), rand(8, 8), rand(8)
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    g.inputs = [x]
    h = g.const("h0", np.zeros((1, 8), np.float32))
    for t in range(steps):
        a = g.tensor(f"a{t}", np.float32)
        g.add_op("FULLY_CONNECTED", [x, g.const(f"wx{t}", w_x.copy()), g.const(f"b{t}", b.copy())],
                 [a], dict(NONE))
        r = g.tensor(f"r{t}", np.float32)
        g.add_op("FULLY_CONNECTED", [h, g.const(f"wh{t}", w_h.copy()), None], [r], dict(NONE))
        s = g.tensor(f"s{t}", np.float32)
        g.add_op("ADD", [a, r], [s], dict(NONE))
        h = g.tensor(f"h{t + 1}", np.float32)
        g.add_op("TANH", [s], [h])
    out = g.tensor("y", np.float32)
    g.add_op("MUL", [h, g.const("scale", np.full((1, 8), 0.5, np.float32))], [out], dict(NONE))
    g.outputs = [out]
    infer_shapes(g)
    return g


def test_each_distinct_constant_is_stored_once():
    data = export_tflite(_unrolled(6))
    model = load_model(data)
    sg = model.subgraphs[0]
    constants = [t for t in sg.tensors if t.data is not None]
    # 6 x (wx, b, wh) + h0 + scale tensors, but 5 distinct byte strings
    assert len(constants) == 20
    assert len({t.buffer for t in constants}) == 5
    assert len(tfl.ModelT.InitFromPackedBuf(data, 0).buffers) == 1 + 5
    by_name = {t.name: t for t in constants}   # each keeps its own name and value
    assert {by_name[f"wx{t}"].buffer for t in range(6)} == {by_name["wx0"].buffer}
    assert by_name["wx0"].buffer != by_name["wh0"].buffer
    np.testing.assert_array_equal(by_name["wx5"].data, by_name["wx0"].data)


def test_the_shared_file_runs_the_same_in_litert_and_edgelite():
    g = _unrolled(6)
    x = rand(1, 4)
    ours = run_ir(g, x)[0]
    interp = LiteRT(model_content=export_tflite(g))
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    theirs = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_equal_size_different_bytes_are_not_shared():
    model = tfl.ModelT()
    model.buffers = [tfl.BufferT()] + [tfl.BufferT() for _ in range(4)]
    for buffer, values in zip(model.buffers[1:], ([1, 2], [1, 2], [2, 1], [1, 2, 0, 0])):
        buffer.data = np.array(values, np.uint8)
    sub = tfl.SubGraphT()
    sub.tensors = []
    for index in range(5):
        t = tfl.TensorT()
        t.buffer = index
        sub.tensors.append(t)
    model.subgraphs = [sub]
    assert share_identical_buffers(model) == 1
    assert [t.buffer for t in sub.tensors] == [0, 1, 1, 2, 3]
    assert [list(b.data) for b in model.buffers[1:]] == [[1, 2], [2, 1], [1, 2, 0, 0]]


def test_buffers_without_data_keep_their_place():
    """A buffer without data between constants is kept and numbered, small (compared by
    their bytes) and large (by digest, then byte for byte) twins point at the kept one."""
    big = np.arange(100, dtype=np.uint8)
    model = tfl.ModelT()
    model.buffers = [tfl.BufferT() for _ in range(7)]
    for index, data in {1: big, 3: np.array([7], np.uint8), 4: big.copy(),
                        5: np.array([7], np.uint8), 6: big[::-1].copy()}.items():
        model.buffers[index].data = data
    sub = tfl.SubGraphT()
    sub.tensors = [tfl.TensorT() for _ in range(7)]
    for index, t in enumerate(sub.tensors):
        t.buffer = index
    model.subgraphs = [sub]
    assert share_identical_buffers(model) == 2
    assert [t.buffer for t in sub.tensors] == [0, 1, 2, 3, 1, 3, 4]
