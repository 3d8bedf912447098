"""The support report (interpreter/support.py): every op's problem, each with its kind
and what to do, in allocate_tensors()'s error and in `edgelite inspect`.

The refusing kernels here are custom kernels that raise what a builtin kernel raises
(ctx.unsupported), so the classification is tested from operand types alone, whatever
builtin kernels other changes add."""

import numpy as np
import pytest

from edgelite.interpreter import (DTypeError, Interpreter, Kernel, OutputSpec,
                                  UnsupportedOpError, load_model)
from edgelite.interpreter.support import report

from .tflite_builder import ModelBuilder
from tests.support.cli import invoke


def refuse(ctx):
    raise ctx.unsupported(f"input tensor has type {ctx.input(0).dtype.name}; this kernel "
                          "supports float32")


def copy_prepare(ctx):
    return (OutputSpec(ctx.input(0).shape, ctx.outputs[0].dtype),), None


KERNELS = {"Refuse": Kernel(refuse, print), "Copy": Kernel(copy_prepare, print)}


def troubled_model() -> bytes:
    """Seven ops, five with a problem of a different kind, one shape error that only
    follows from an earlier problem, and ops that are fine between them."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 3))
    a, r, c, d, e, f, g = (b.tensor(n, (2, 3)) for n in "arcdefg")
    w = b.tensor("w", (3, 3), np.int8, data=np.ones((3, 3)), scale=0.1)
    q16 = b.tensor("q16", (2, 3), np.int16, scale=0.1)
    q8 = b.tensor("q8", (2, 3), np.int8, scale=0.1)
    o16, o8 = b.tensor("o16", (2, 3), np.int16), b.tensor("o8", (2, 3), np.int8)
    bad = b.tensor("bad", (2, 5))
    b.op("CUSTOM", [x], [a], custom_code="Missing")          # 0 custom
    b.op("RELU", [x], [r])                                   # 1 fine
    b.op("CUSTOM", [r, w], [c], custom_code="Refuse")        # 2 hybrid
    b.op("CUSTOM", [q16], [o16], custom_code="Refuse")       # 3 int16
    b.op("CUSTOM", [q8], [o8], custom_code="Refuse")         # 4 quantized
    b.op("ADD", [c, bad], [d])                               # 5 follows from 2: left out
    b.op("ADD", [r, bad], [e])                               # 6 shape
    b.op("MUL", [x, x], [f], builtin_code=250)               # 7 unknown builtin
    b.op("CUSTOM", [r], [g], custom_code="Copy")             # 8 fine
    return b.build([x, q16, q8, bad], [a, c, o16, o8, d, e, f, g])


EXPECTED = [(0, "custom"), (2, "hybrid"), (3, "int16"), (4, "quantized"), (6, "shape"),
            (7, "unknown builtin")]


def kind_of(line: str) -> str:
    """The kind of one problem line ("... [kind: what to do]")."""
    return line.rsplit(" [", 1)[1].split(":")[0]


def test_refusals_that_are_not_about_types_are_unsupported():
    """A kernel refusing a scale or a missing tensor says nothing of types: no kind from
    the operand types (an int8 op is not "quantized" for it)."""
    def odd(ctx):
        raise ctx.unsupported("the cell scale must be a power of two")

    b = ModelBuilder()
    x = b.tensor("x", (2,), np.int8, scale=0.5)
    y = b.tensor("y", (2,), np.int8, scale=0.5)
    b.op("CUSTOM", [x], [y], custom_code="Odd")
    (problem,) = report(load_model(b.build([x], [y])), custom={"Odd": Kernel(odd, print)})
    assert problem.kind == "unsupported"
    assert problem.line() == ("operator 0 (CUSTOM 'Odd', output 'y'): the cell scale must be "
                              "a power of two [unsupported: edgelite's kernel does not cover "
                              "this case]")


def test_report_lists_every_problem_with_its_kind():
    problems = report(load_model(troubled_model()), custom=KERNELS)
    assert [(p.op, p.kind) for p in problems] == EXPECTED
    assert problems[1].where == "operator 2 CUSTOM 'Refuse' (output 'c')"
    assert problems[1].detail == "input tensor has type float32; this kernel supports float32"
    assert "dynamic-range (hybrid)" in problems[1].advice
    assert "custom_kernels={'Missing': Kernel(prepare, eval)}" in problems[0].advice


def test_allocate_raises_one_error_listing_them():
    interp = Interpreter(model_content=troubled_model(), custom_kernels=KERNELS)
    with pytest.raises(UnsupportedOpError) as info:
        interp.allocate_tensors()
    lines = str(info.value).splitlines()
    assert lines[0] == ("edgelite's interpreter cannot run this model (6 unsupported "
                        "item(s); custom, hybrid, int16, quantized, shape, unknown builtin):")
    assert [kind_of(line) for line in lines[1:]] == [kind for _, kind in EXPECTED]
    assert lines[3] == ("  operator 3 (CUSTOM 'Refuse', output 'o16'): input tensor has type "
                        "int16; this kernel supports float32 [int16: 16x8 quantization "
                        "(int16 activations); convert with int8 activations]")


def test_one_dtype_error_keeps_its_class():
    b = ModelBuilder()
    x = b.tensor("x", (2,))
    y = b.tensor("y", (2,), np.int32)
    b.op("RELU", [x], [y])
    with pytest.raises(DTypeError, match="computes float32 but the file declares"):
        Interpreter(model_content=b.build([x], [y])).allocate_tensors()


def test_runnable_model_has_no_problems():
    b = ModelBuilder()
    x = b.tensor("x", (2,))
    y = b.tensor("y", (2,))
    b.op("RELU", [x], [y])
    assert report(load_model(b.build([x], [y]))) == []


def test_inspect_shows_the_structure_and_every_problem(tmp_path):
    path = tmp_path / "troubled.tflite"
    path.write_bytes(troubled_model())
    result = invoke("inspect", str(path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("ops (9): ") for line in lines)
    assert any(line.startswith("tensors (14):") for line in lines)
    start = lines.index(next(line for line in lines if line.startswith("support: ")))
    assert lines[start] == ("support: edgelite cannot run this model (7 problem(s): custom, "
                            "shape, unknown builtin):")
    assert "arena" not in lines[start - 2]
    assert [kind_of(line) for line in lines[start + 1:]] == \
        ["custom", "custom", "custom", "custom", "shape", "unknown builtin", "custom"]


def test_a_problem_inside_a_loop_body_is_listed_once():
    """A WHILE whose body has a CUSTOM op without a kernel: the body's op is the problem;
    the WHILE, which only fails because of it, is left out."""
    b = ModelBuilder()
    specs = [("i", [], np.int32), ("x", [2], np.float32)]
    ins = [b.tensor(n, s, d) for n, s, d in specs]
    outs = [b.tensor(f"{n}_out", s, d) for n, s, d in specs]
    b.op("WHILE", ins, outs, cond_subgraph_index=1, body_subgraph_index=2)
    b.finish_subgraph(ins, outs, "main")
    ci = [b.tensor(f"c_{n}", s, d) for n, s, d in specs]
    flag = b.tensor("keep_going", [], np.bool_)
    b.op("LESS", [ci[0], b.const("limit", np.array(3, np.int32))], [flag])
    b.finish_subgraph(ci, [flag], "cond")
    i, x = b.tensor("b_i", [], np.int32), b.tensor("b_x", [2])
    i2, x2 = b.tensor("b_i2", [], np.int32), b.tensor("b_x2", [2])
    b.op("ADD", [i, b.const("one", np.array(1, np.int32))], [i2])
    b.op("CUSTOM", [x], [x2], custom_code="Step")
    data = b.build([i, x], [i2, x2])
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=data).allocate_tensors()
    assert str(info.value) == (
        "subgraph 2 operator 1 CUSTOM 'Step' (output 'b_x2'): custom op, no kernel [custom: "
        "register a kernel for it: Interpreter(..., custom_kernels={'Step': Kernel(prepare, "
        "eval)}) or edgelite.interpreter.register_custom_kernel]")
    interp = Interpreter(model_content=data, custom_kernels={"Step": KERNELS["Copy"]})
    interp.allocate_tensors()  # with a kernel the loop prepares


def test_a_recursive_call_is_reported_not_followed():
    b = ModelBuilder()
    x = b.tensor("x", [2])
    y = b.tensor("y", [2])
    b.op("CALL_ONCE", [], [], init_subgraph_index=0)
    b.op("RELU", [x], [y])
    (problem,) = report(load_model(b.build([x], [y])))
    assert problem.kind == "format" and "recursive subgraph call" in problem.text


def test_a_hybrid_op_is_named_by_its_data_input_not_its_first():
    """TRANSPOSE_CONV's first input is its constant output shape: the float data input
    (2) with uint8 weights -- which LiteRT's hybrid kernel refuses -- is 'hybrid'."""
    b = ModelBuilder()
    shape = b.tensor("shape", (4,), np.int32, data=np.array([1, 4, 4, 2]))
    w = b.tensor("w", (2, 3, 3, 3), np.uint8, data=np.ones((2, 3, 3, 3)), scale=0.1,
                 zero_point=128)
    x, y = b.tensor("x", (1, 4, 4, 3)), b.tensor("y", (1, 4, 4, 2))
    b.op("TRANSPOSE_CONV", [shape, w, x], [y], padding="SAME", stride_w=1, stride_h=1)
    (problem,) = report(load_model(b.build([x], [y])))
    assert problem.kind == "hybrid" and "dynamic-range" in str(problem)


# ------------------------------------------------ what allocate_tensors() folds or defers


def _with_missing(b: ModelBuilder, x: int) -> int:
    """A CUSTOM op without a kernel on ``x``: allocation fails, the report is raised."""
    y = b.tensor("missing_out", (1,))
    b.op("CUSTOM", [x], [y], custom_code="Missing")
    return y


def shape_chain_model(missing: bool) -> bytes:
    """x [1, 8] (signature [-1, -1]) framed by shapes from SHAPE chains: RESHAPE to
    [batch, time // 4, 4] (STRIDED_SLICE, FLOOR_DIV, PACK), a GATHER of RANGE(0, time, 2);
    and a RESHAPE to the values of an int32 input ``dims`` (prepared at invoke)."""
    b = ModelBuilder()
    i32 = np.int32
    x = b.tensor("x", (1, 8), shape_signature=(-1, -1))
    dims = b.tensor("dims", (2,), i32)
    shape, batch, time, frames, packed, steps, evens, framed, wide = (
        b.tensor(n, s, d) for n, s, d in (
            ("shape", (2,), i32), ("batch", (), i32), ("time", (), i32),
            ("frames", (), i32), ("packed", (3,), i32), ("steps", (4,), i32),
            ("evens", (1, 4), np.float32), ("framed", (1, 2, 4), np.float32),
            ("wide", (4, 2), np.float32)))
    b.op("SHAPE", [x], [shape], out_type="INT32")
    for name, out, at in (("batch", batch, 0), ("time", time, 1)):
        b.op("STRIDED_SLICE", [shape, b.const(f"{name}_begin", i32([at])),
                               b.const(f"{name}_end", i32([at + 1])),
                               b.const(f"{name}_step", i32([1]))], [out], shrink_axis_mask=1)
    b.op("FLOOR_DIV", [time, b.const("four", i32(4))], [frames])
    b.op("PACK", [batch, frames, b.const("width", i32(4))], [packed], values_count=3)
    b.op("RESHAPE", [x, packed], [framed])
    b.op("RANGE", [b.const("start", i32(0)), time, b.const("delta", i32(2))], [steps])
    b.op("GATHER", [x, steps], [evens], axis=1)
    b.op("RESHAPE", [x, dims], [wide])
    outputs = [framed, evens, wide] + ([_with_missing(b, x)] if missing else [])
    return b.build([x, dims], outputs)


def test_shape_chains_and_computed_shapes_are_no_problem():
    """SHAPE chains fold at allocation, a shape from an input's values is prepared at
    invoke: neither is a problem (they were listed as "computed at run time")."""
    assert report(load_model(shape_chain_model(missing=False))) == []
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=shape_chain_model(missing=True)).allocate_tensors()
    assert str(info.value).startswith(
        "operator 9 CUSTOM 'Missing' (output 'missing_out'): custom op, no kernel [custom:")


@pytest.mark.parametrize("kernels", ("reference", "default"))
def test_shape_chain_model_runs_as_litert(kernels):
    from tests.support import run_edgelite, run_litert

    data = shape_chain_model(missing=False)
    x, dims = np.arange(8, dtype=np.float32).reshape(1, 8), np.int32([4, 2])
    ours = run_edgelite(data, [x, dims], kernels=kernels)
    theirs = run_litert(data, [x, dims], kernels)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours[1], x[:, ::2])


def fp16_filter_model(missing: bool) -> bytes:
    """CONV_2D whose filter [128, 3, 3, 512] is a DEQUANTIZE of a float16 constant (1.2 MB;
    2.4 MB once float32), as TF's float16 conversion writes it."""
    rng = np.random.default_rng(25)
    b = ModelBuilder()
    x = b.tensor("x", (1, 3, 3, 512))
    half = b.const("filter_fp16", rng.normal(0, 0.05, (128, 3, 3, 512)).astype(np.float16))
    w = b.tensor("filter", (128, 3, 3, 512))
    y = b.tensor("y", (1, 3, 3, 128))
    b.op("DEQUANTIZE", [half], [w], version=3)
    b.op("CONV_2D", [x, w, b.const("bias", np.zeros(128, np.float32))], [y], padding="SAME",
         stride_w=1, stride_h=1)
    return b.build([x], [y] + ([_with_missing(b, x)] if missing else []))


def test_a_float16_filter_over_a_mib_is_folded_not_reported():
    """allocate_tensors() folds a DEQUANTIZE up to FOLD_GROWTH times its source's bytes;
    the report folded only up to 1 MiB and listed the CONV_2D ("must be a constant")."""
    assert report(load_model(fp16_filter_model(missing=False))) == []
    (problem,) = report(load_model(fp16_filter_model(missing=True)))
    assert problem.kind == "custom" and problem.op == 2


@pytest.mark.parametrize("kernels", ("reference", "default"))
def test_fp16_filter_model_runs_as_litert(kernels):
    from tests.support import assert_close, run_edgelite, run_litert

    data = fp16_filter_model(missing=False)
    x = np.random.default_rng(4).normal(0, 1, (1, 3, 3, 512)).astype(np.float32)
    (ours,) = run_edgelite(data, [x], kernels=kernels)
    (theirs,) = run_litert(data, [x], kernels)
    assert_close(ours, theirs, rtol=1e-4, atol_factor=1e-5)
