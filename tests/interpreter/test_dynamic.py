"""Shapes computed at run time, against LiteRT.

* Ops whose shape operand (a RESHAPE's shape, a FILL's dims, a TILE's multiples, a
  reduction's axes ...) is a graph input: their outputs are dynamic, prepared at invoke
  for the values they get (interpreter/dynamic.py, SHAPE_OPERANDS). Several values run
  on the same allocated interpreter; shapes and values must equal LiteRT's.
* SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE chains over an input whose
  shape_signature has -1s: after resize_tensor_input + allocate_tensors() they fold, and
  nothing is dynamic.
* Hostile values (a FILL of 2**40 elements, a RANGE to 2**31) are refused at invoke in
  one line naming the op; the interpreter keeps working afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import MemoryLimitError, ShapeError
from tests.bounded import run_bounded
from tests.conftest import litert_module
from tests.support import KERNEL_SETS, assert_close, litert_interpreter

from .tflite_builder import ModelBuilder


@dataclass(frozen=True)
class Case:
    """One op: input 0 is ``x`` (or the graph input at ``x_at``), the operand at
    ``operand_at`` is a graph input fed ``values`` one invoke after another; ``consts``
    are the other inputs (position -> value)."""

    op: str
    x: tuple  # shape of x
    operand_at: int
    values: tuple  # one operand value per invoke
    consts: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    x_at: int = 0
    x_dtype: type = np.float32
    outputs: tuple = (np.float32,)  # dtype of each output
    version: int = 1


I32 = np.int32
CASES = {
    "reshape": Case("RESHAPE", (2, 6), 1, ([3, 4], [-1, 2], [6, 2], [1, 12])),
    "fill": Case("FILL", (), 0, ([2, 3], [4, 1], [0, 5], [3, 3]), x_at=1),
    "range": Case("RANGE", (), 1, (5, 12, 2, 3), consts={0: I32(1), 2: I32(2)},
                  x_at=-1, outputs=(np.int32,)),
    "tile": Case("TILE", (2, 3), 1, ([1, 2], [3, 1], [2, 2], [0, 1])),
    "broadcast_to": Case("BROADCAST_TO", (1, 3), 1, ([2, 3], [5, 3], [1, 3]), version=2),
    "strided_slice": Case("STRIDED_SLICE", (4, 6), 1, ([1, 0], [0, 3], [3, 5]),
                          consts={2: I32([4, 6]), 3: I32([1, 2])}),
    "pad": Case("PAD", (2, 3), 1, ([[1, 0], [0, 2]], [[0, 0], [3, 1]], [[2, 2], [1, 1]])),
    "padv2": Case("PADV2", (2, 3), 1, ([[1, 0], [0, 2]], [[0, 3], [1, 0]]),
                  consts={2: np.float32(7.5)}),
    "mirror_pad": Case("MIRROR_PAD", (3, 4), 1, ([[1, 0], [0, 2]], [[2, 1], [3, 0]]),
                       options={"mode": "REFLECT"}),
    "resize_bilinear": Case("RESIZE_BILINEAR", (1, 4, 4, 2), 1, ([8, 8], [3, 5], [4, 4])),
    "resize_nearest": Case("RESIZE_NEAREST_NEIGHBOR", (1, 3, 4, 2), 1, ([6, 8], [2, 7])),
    "expand_dims": Case("EXPAND_DIMS", (2, 3), 1, (0, 1, -1, 2)),
    "transpose": Case("TRANSPOSE", (2, 3, 4), 1, ([2, 0, 1], [1, 2, 0], [0, 1, 2])),
    "mean": Case("MEAN", (2, 3, 4), 1, ([1], [0], [2]), options={"keep_dims": False}),
    "sum": Case("SUM", (2, 3, 4), 1, ([1], [-1], [0]), options={"keep_dims": True}),
    "reduce_max": Case("REDUCE_MAX", (2, 3, 4), 1, ([2], [0]), options={"keep_dims": False}),
    "arg_max": Case("ARG_MAX", (3, 5), 1, ([0], [1]), options={"output_type": "INT32"},
                    outputs=(np.int32,)),
    "split": Case("SPLIT", (2, 4), 0, ([0], [1]), options={"num_splits": 2}, x_at=1,
                  outputs=(np.float32, np.float32)),
    "split_v": Case("SPLIT_V", (2, 4), 1, ([1, 3], [2, 2], [4, 0]),
                    consts={2: I32([1])}, options={"num_splits": 2},
                    outputs=(np.float32, np.float32)),
    "topk": Case("TOPK_V2", (2, 6), 1, (1, 4, 6), outputs=(np.float32, np.int32)),
    "space_to_batch": Case("SPACE_TO_BATCH_ND", (1, 4, 6, 1), 1, ([2, 2], [1, 3], [4, 2]),
                           consts={2: I32([[0, 0], [0, 0]])}),
    "batch_to_space": Case("BATCH_TO_SPACE_ND", (4, 2, 3, 1), 1, ([2, 2], [1, 4], [4, 1]),
                           consts={2: I32([[0, 0], [0, 0]])}),
    "transpose_conv": Case("TRANSPOSE_CONV", (1, 2, 2, 3), 0, ([1, 4, 4, 2], [1, 3, 3, 2]),
                           consts={1: np.random.default_rng(5).normal(0, 1, (2, 3, 3, 3))
                                   .astype(np.float32)},
                           options={"padding": "SAME", "stride_h": 2, "stride_w": 2}, x_at=2),
    "one_hot": Case("ONE_HOT", (4,), 1, (3, 5, 1), consts={2: np.float32(1.5),
                                                           3: np.float32(-0.5)},
                    options={"axis": -1}, x_dtype=np.int32),
    "rfft2d": Case("RFFT2D", (2, 3, 8), 1, ([4, 8], [2, 16], [1, 2]),
                   outputs=(np.complex64,)),
}


def _operand(case: Case, value) -> np.ndarray:
    return np.asarray(value, np.int32)


def _model(case: Case) -> bytes:
    b = ModelBuilder()
    n = 1 + max([case.operand_at, case.x_at, *case.consts])
    inputs, graph_inputs = [-1] * n, []
    if case.x_at >= 0:
        inputs[case.x_at] = b.tensor("x", case.x, case.x_dtype)
        graph_inputs.append(inputs[case.x_at])
    operand = _operand(case, case.values[0])
    inputs[case.operand_at] = b.tensor("operand", operand.shape, np.int32)
    graph_inputs.append(inputs[case.operand_at])
    for i, value in case.consts.items():
        inputs[i] = b.const(f"const{i}", value)
    outs = [b.tensor(f"y{i}", [1], dtype) for i, dtype in enumerate(case.outputs)]
    b.op(case.op, inputs, outs, version=case.version, **case.options)
    return b.build(graph_inputs, outs)


def _feeds(case: Case, rng: np.random.Generator, value) -> list[np.ndarray]:
    feeds = []
    if case.x_at >= 0:
        if case.x_dtype == np.int32:
            feeds.append(rng.integers(-1, 6, case.x).astype(np.int32))
        else:
            feeds.append(rng.normal(0, 1, case.x).astype(np.float32))
    feeds.append(_operand(case, value))
    return feeds


def _run(interp, feeds) -> list[np.ndarray]:
    for detail, value in zip(interp.get_input_details(), feeds):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    outs = [_get(interp, d) for d in interp.get_output_details()]
    for d, out in zip(interp.get_output_details(), outs):  # details report real shapes
        assert tuple(d["shape"]) == out.shape
    return outs


def _get(interp, detail) -> np.ndarray:
    if not isinstance(interp, Interpreter) and 0 in detail["shape"]:
        return np.empty(detail["shape"], detail["dtype"])  # LiteRT cannot get_tensor those
    return interp.get_tensor(detail["index"])


@pytest.mark.parametrize("kernels", KERNEL_SETS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_computed_shape_operand_matches_litert(name, kernels):
    case = CASES[name]
    model = _model(case)
    ours = Interpreter(model_content=model, kernels=kernels)
    ours.allocate_tensors()  # once: every value below runs on this allocation
    assert ours._alloc.dynamic == {d["index"] for d in ours.get_output_details()}
    ref = litert_interpreter(model, kernels)
    rng = np.random.default_rng(14)
    for value in case.values + case.values[:1]:  # the first again: a cached variant
        feeds = _feeds(case, rng, value)
        got, want = _run(ours, feeds), _run(ref, feeds)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_close(a, b, rtol=1e-5)


def test_dynamic_output_feeds_later_ops():
    """RESHAPE to computed dims, then an ADD and a second RESHAPE whose shape is
    computed from the first's SHAPE: each prepared at invoke for what it gets."""
    b = ModelBuilder()
    x = b.tensor("x", [12])
    dims = b.tensor("dims", [2], np.int32)
    r = b.tensor("r", [1])
    s = b.tensor("s", [1])
    shape = b.tensor("shape", [2], np.int32)
    rev = b.tensor("rev", [2], np.int32)
    y = b.tensor("y", [1])
    b.op("RESHAPE", [x, dims], [r])
    b.op("ADD", [r, b.const("one", np.float32(1))], [s])
    b.op("SHAPE", [s], [shape], out_type="INT32")
    b.op("REVERSE_V2", [shape, b.const("axis", I32([0]))], [rev])
    b.op("RESHAPE", [s, rev], [y])
    model = b.build([x, dims], [y])
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    ref = litert_interpreter(model, "reference")
    x_value = np.arange(12, dtype=np.float32)
    for d in ([3, 4], [2, 6], [12, 1], [3, 4]):
        feeds = [x_value, I32(d)]
        (got,), (want,) = _run(ours, feeds), _run(ref, feeds)
        assert got.shape == (d[1], d[0])
        np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- resized inputs


def _shape_chain_model() -> bytes:
    """x [batch, time] (signature [-1, -1]) -> [batch, time // 4, 4] through SHAPE ->
    STRIDED_SLICE -> PACK -> RESHAPE, doubled, then back to [batch, -1] the same way."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 8], shape_signature=[-1, -1])
    shape = b.tensor("shape", [2], np.int32)
    batch = b.tensor("batch", [], np.int32)
    time = b.tensor("time", [], np.int32)
    frames = b.tensor("frames", [], np.int32)
    dims = b.tensor("dims", [3], np.int32)
    r = b.tensor("r", [1, 2, 4], shape_signature=[-1, -1, 4])
    m = b.tensor("m", [1, 2, 4], shape_signature=[-1, -1, 4])
    back = b.tensor("back", [2], np.int32)
    y = b.tensor("y", [1, 8], shape_signature=[-1, -1])
    one, zero = b.const("one", I32([1])), b.const("zero", I32([0]))
    b.op("SHAPE", [x], [shape], out_type="INT32")
    b.op("STRIDED_SLICE", [shape, zero, one, one], [batch], shrink_axis_mask=1)
    b.op("STRIDED_SLICE", [shape, one, b.const("two", I32([2])), one], [time],
         shrink_axis_mask=1)
    b.op("FLOOR_DIV", [time, b.const("four", I32(4))], [frames])
    b.op("PACK", [batch, frames, b.const("four_", I32(4))], [dims], values_count=3, axis=0)
    b.op("RESHAPE", [x, dims], [r])
    b.op("MUL", [r, b.const("k", np.float32(2))], [m])
    b.op("PACK", [batch, b.const("minus1", I32(-1))], [back], values_count=2, axis=0)
    b.op("RESHAPE", [m, back], [y])
    return b.build([x], [y])


def test_resized_shape_chains_fold_at_allocation():
    model = _shape_chain_model()
    ours = Interpreter(model_content=model)
    ref = litert_module().Interpreter(model_content=model)
    rng = np.random.default_rng(3)
    for shape in ((2, 12), (1, 4), (3, 40), (2, 12)):
        for interp in (ours, ref):
            interp.resize_tensor_input(0, shape, strict=True)
            interp.allocate_tensors()
        assert not ours._alloc.dynamic  # every shape folded: nothing waits for invoke
        assert [op for op in ours._alloc.step_ops] == [5, 6, 8]  # RESHAPE, MUL, RESHAPE
        x = rng.normal(0, 1, shape).astype(np.float32)
        (got,), (want,) = _run(ours, [x]), _run(ref, [x])
        assert got.shape == shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, 2 * x)


def test_strict_resize_changes_only_signature_minus_ones():
    b = ModelBuilder()
    x = b.tensor("x", [1, 4], shape_signature=[-1, 4])
    y = b.tensor("y", [1, 4], shape_signature=[-1, 4])
    b.op("RELU", [x], [y])
    model = b.build([x], [y])
    ours = Interpreter(model_content=model)
    ours.resize_tensor_input(0, [5, 4], strict=True)
    with pytest.raises(ShapeError, match=r"strict resizing may only change the -1 "
                                         r"dimensions of its signature \[-1, 4\], got \[5, 3\]"):
        ours.resize_tensor_input(0, [5, 3], strict=True)
    ours.resize_tensor_input(0, [5, 3])  # strict=False: any shape, as in LiteRT
    ours.allocate_tensors()
    assert ours.get_output_details()[0]["shape"].tolist() == [5, 3]


# --------------------------------------------------------------------------- hostile values


def _fill_model() -> bytes:
    b = ModelBuilder()
    dims = b.tensor("dims", [2], np.int32)
    y = b.tensor("y", [1, 1])
    b.op("FILL", [dims, b.const("v", np.float32(1))], [y])
    return b.build([dims], [y])


def _range_model() -> bytes:
    b = ModelBuilder()
    limit = b.tensor("limit", [], np.int32)
    y = b.tensor("y", [1], np.int32)
    b.op("RANGE", [b.const("start", I32(0)), limit, b.const("delta", I32(1))], [y])
    return b.build([limit], [y])


@pytest.mark.parametrize("model, value, error, message", [
    (_fill_model, [2**20, 2**20], ShapeError,
     r"^operator 0 \(FILL, output 'y'\): output shape \[1048576, 1048576\] needs "
     r"4398046511104 bytes, over the 2147483648-byte limit per tensor$"),
    (_range_model, 2**31 - 1, ShapeError,
     r"^operator 0 \(RANGE, output 'y'\): RANGE\(0, 2147483647, 1\) would have 2147483647 "
     r"elements$"),
    (_fill_model, [1000, 1000], MemoryLimitError,
     r"^operator 0 FILL \(output 'y'\): its outputs of shapes \[1000, 1000\] would take "
     r"4000000 bytes, over the 1000000-byte memory limit; check the input values"),
])
def test_hostile_values_refused_in_one_line(model, value, error, message):
    ours = Interpreter(model_content=model(), memory_limit=10**6)
    ours.allocate_tensors()
    index = ours.get_input_details()[0]["index"]
    ours.set_tensor(index, np.asarray(value, np.int32))
    with pytest.raises(error, match=message) as caught:
        ours.invoke()
    assert "\n" not in str(caught.value)
    small = [2, 3] if np.ndim(value) else 5  # the same allocation still runs
    ours.set_tensor(index, np.asarray(small, np.int32))
    ours.invoke()
    assert ours.get_tensor(ours.get_output_details()[0]["index"]).shape == np.shape(
        np.zeros(small if np.ndim(value) else (5,)))


def _four_fills_model() -> bytes:
    """Four FILLs sized by one 8-byte input: each output alone fits the limit."""
    b = ModelBuilder()
    dims = b.tensor("dims", [2], np.int32)
    outs = [b.tensor(f"y{i}", [1, 1]) for i in range(4)]
    for i, y in enumerate(outs):
        b.op("FILL", [dims, b.const(f"v{i}", np.float32(i))], [y])
    return b.build([dims], outs)


_FOUR_FILLS = """
import sys
import numpy as np
from tests.interpreter.test_dynamic import _four_fills_model
from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError
interp = Interpreter(model_content=_four_fills_model(), memory_limit=int(sys.argv[1]))
interp.allocate_tensors()
interp.set_tensor(interp.get_input_details()[0]["index"], np.array([2**14, 2**14], np.int32))
try:
    interp.invoke()
    print("ran", sum(interp.get_tensor(d["index"]).nbytes for d in interp.get_output_details()))
except EdgeliteError as e:
    print(type(e).__name__, e)
"""


def test_outputs_sized_at_invoke_count_against_the_limit_together():
    # 4 x 1 GiB asked under a 2.5 GiB limit: the third FILL is refused before it allocates
    # (the child could not hold three: its address space is 2.5 GiB).
    run = run_bounded(_FOUR_FILLS, str(5 << 29), mem_bytes=5 << 29, timeout=120)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert run.stdout.startswith("MemoryLimitError operator 2 FILL (output 'y2'): its outputs "
                                 "(1073741824 bytes, sized at invoke) would bring the model's "
                                 "memory to "), run.stdout
    assert "over the 2684354560-byte memory limit" in run.stdout
    assert run.stdout.count("\n") == 1


def test_a_new_value_replaces_the_old_in_the_total():
    ours = Interpreter(model_content=_four_fills_model(), memory_limit=4 * 4 * 1000 + 64)
    ours.allocate_tensors()
    index = ours.get_input_details()[0]["index"]
    for _ in range(3):  # 16,000 bytes of outputs each time, never counted twice
        ours.set_tensor(index, np.array([10, 100], np.int32))
        ours.invoke()
    assert [float(ours.get_tensor(d["index"])[9, 99]) for d in ours.get_output_details()] == [
        0.0, 1.0, 2.0, 3.0]
    ours.set_tensor(index, np.array([10, 101], np.int32))
    with pytest.raises(MemoryLimitError, match=r"^operator \d FILL \(output 'y\d'\): its outputs "
                       r"\(4040 bytes, sized at invoke\)"):
        ours.invoke()


HOSTILE = {  # one operand value per op that no output of a sane size can come from
    "reshape": [2**20, 2**20], "fill": [2**31 - 1, 2**31 - 1], "tile": [2**30, 2**30],
    "broadcast_to": [2**31 - 1, 3], "pad": [[2**30, 2**30], [0, 0]],
    "mirror_pad": [[100, 0], [0, 0]], "resize_bilinear": [2**16, 2**16],
    "resize_nearest": [-1, 3], "expand_dims": 10, "transpose": [0, 0, 0], "mean": [5],
    "split": [3], "split_v": [-1, -1], "topk": 100, "one_hot": 2**30,
    "space_to_batch": [0, 0], "batch_to_space": [2**30, 2**30],
    "transpose_conv": [1, 2**20, 2**20, 2], "arg_max": [7],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_operand_refused_naming_the_op(name):
    case = CASES[name]
    ours = Interpreter(model_content=_model(case), memory_limit=2**30)
    ours.allocate_tensors()
    feeds = _feeds(case, np.random.default_rng(0), HOSTILE[name])
    for detail, value in zip(ours.get_input_details(), feeds):
        ours.set_tensor(detail["index"], value)
    with pytest.raises(ShapeError) as caught:
        ours.invoke()
    message = str(caught.value)
    assert message.startswith(f"operator 0 ({case.op}, output 'y0'): ") and "\n" not in message


# --------------------------------------------------------------------------- inside a loop


def _slicing_loop(limit: int) -> bytes:
    """(i, acc, x[8]) -> while i < limit: acc += sum(x[i:i + 2]) * sum(range(i + 1)):
    a body whose STRIDED_SLICE and RANGE take their bounds from the loop counter (as TF's
    converter writes ``x[i:i + 2]`` and ``tf.range(i)`` in a while_loop)."""
    b = ModelBuilder()
    specs = [("i", [], np.int32), ("acc", [], np.float32), ("x", [8], np.float32)]
    ins = [b.tensor(n, s, d) for n, s, d in specs]
    outs = [b.tensor(f"{n}_out", s, d) for n, s, d in specs]
    b.op("WHILE", ins, outs, cond_subgraph_index=1, body_subgraph_index=2)
    b.finish_subgraph(ins, outs)
    c_ins = [b.tensor(f"c_{n}", s, d) for n, s, d in specs]
    flag = b.tensor("keep_going", [], np.bool_)
    b.op("LESS", [c_ins[0], b.const("limit", I32(limit))], [flag])
    b.finish_subgraph(c_ins, [flag])
    i, acc, x = (b.tensor(f"b_{n}", s, d) for n, s, d in specs)
    t = {n: b.tensor(n, [1] if n in ("begin", "end", "slice") else [], d) for n, d in (
        ("i1", np.int32), ("begin", np.int32), ("end", np.int32), ("slice", np.float32),
        ("range", np.int32), ("rsum", np.int32), ("rf", np.float32), ("ssum", np.float32),
        ("term", np.float32), ("acc2", np.float32))}
    zero = b.const("zero", I32([0]))
    b.op("ADD", [i, b.const("one", I32(1))], [t["i1"]])
    b.op("RESHAPE", [i, b.const("vec", I32([1]))], [t["begin"]])
    b.op("ADD", [t["begin"], b.const("two", I32([2]))], [t["end"]])
    b.op("STRIDED_SLICE", [x, t["begin"], t["end"], b.const("stride", I32([1]))],
         [t["slice"]])
    b.op("RANGE", [b.const("r0", I32(0)), t["i1"], b.const("r1", I32(1))], [t["range"]])
    b.op("SUM", [t["range"], zero], [t["rsum"]], keep_dims=False)
    b.op("CAST", [t["rsum"]], [t["rf"]])
    b.op("SUM", [t["slice"], zero], [t["ssum"]], keep_dims=False)
    b.op("MUL", [t["ssum"], t["rf"]], [t["term"]])
    b.op("ADD", [acc, t["term"]], [t["acc2"]])
    return b.build([i, acc, x], [t["i1"], t["acc2"], x])


@pytest.mark.parametrize("limit", [1, 4, 7])
def test_loop_body_slices_at_the_counter(limit):
    model = _slicing_loop(limit)
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    ref = litert_interpreter(model, "reference")
    rng = np.random.default_rng(limit)
    for _ in range(2):
        x = rng.normal(0, 1, 8).astype(np.float32)
        feeds = [I32(0), np.float32(0), x]
        got, want = _run(ours, feeds), _run(ref, feeds)
        for a, b in zip(got, want):
            assert_close(a, b, rtol=1e-6)
        expected = sum(x[i:i + 2].sum() * (i * (i + 1) // 2) for i in range(limit))
        np.testing.assert_allclose(got[1], expected, rtol=1e-5)
