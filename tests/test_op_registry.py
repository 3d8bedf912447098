"""The op registry (interpreter/kernels/opdef.py, kernels.OPS) agrees with everything that
names an op: the schema, the converter (lowering rules, passes, quantizer), the derived
tables, and the tests. A record removed, or added without its kernel, schema entry or
test, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter.allocation import STATEFUL_OPS
from edgelite.interpreter.kernels import OPS
from edgelite.interpreter.kernels.base import Kernel, OpContext, TensorInfo
from edgelite.interpreter.kernels.opdef import TYPE_GENERIC, QuantRule
from edgelite.interpreter.loader.model_objects import Quantization
from edgelite.schema import ops as schema_ops

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("api", "cli", "converter", "interpreter", "schema")  # the kernel modules excepted
# Builtin names the converter may write without an interpreter kernel (WHILE / IF /
# CALL_ONCE: the interpreter's control-flow kernels come in their own branch of issue 13;
# the converter infers shapes through them itself, control_flow/shapes.py).
NO_KERNEL = frozenset({"CUSTOM"})


def _string_literals(folder: str) -> dict[str, list[str]]:
    """Every string constant that is exactly a TFLite builtin name -> where it appears."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        if path == Path(__file__).resolve():
            continue  # this file names ops to check them, not to test them
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value in schema_ops.BUILTIN_CODE:
                found.setdefault(node.value, []).append(f"{path.relative_to(ROOT)}:"
                                                        f"{node.lineno}")
    return found


def test_every_record_has_a_kernel_and_stateful_ops_are_never_folded():
    # (names against the schema, KERNELS against OPS: tests/interpreter/kernels/test_opdef.py)
    for name, op in OPS.items():
        assert isinstance(op.float, Kernel) or isinstance(op.integer, Kernel), name
    assert STATEFUL_OPS == {"WHILE", "IF", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE",
                            "ASSIGN_VARIABLE"}


def test_every_op_the_converter_names_has_a_kernel():
    # Lowering rules, passes and the quantizer name the ops they emit or match by their
    # builtin name; each must run in the interpreter (shape inference, folding and
    # calibration run there too).
    named = _string_literals("converter")
    missing = {n: where[:3] for n, where in named.items() if n not in OPS and n not in NO_KERNEL}
    assert not missing, f"ops the converter names without a kernel: {missing}"
    assert {"QUANTIZE", "DEQUANTIZE"} <= set(OPS)  # what the quantizer inserts


def test_quantization_traits_agree():
    for name, op in OPS.items():
        quantized = op.quant is not QuantRule.FLOAT_ONLY
        assert quantized == (op.integer is not None), \
            f"{name}: an integer path exactly when the quantizer may run it in integer"
        if op.fixed_output is not None:  # (and int16 for the ops with 16x8 kernels)
            assert set(op.fixed_output) == {np.int8, np.uint8} | (
                {np.int16} if op.has_int16 else set()), name
        if op.has_int16 or not op.uint8:  # facts about an integer kernel
            assert quantized, name
        if op.integer == TYPE_GENERIC:  # the float kernel only moves values around
            assert op.quant in (QuantRule.SAME_AS_INPUT, QuantRule.SHARED), name
        if op.exact:
            assert op.quant is not QuantRule.FIXED_OUTPUT, name
        a = op.affine
        if a is not None:
            assert len({a.data, a.weights, a.bias}) == 3, name
            assert 0 <= a.out_axis <= 3 and 0 <= a.in_axis <= 3, name


def test_derived_tables_follow_the_records():
    from edgelite.converter.passes.fuse_activation import TAKES_ACTIVATION
    from edgelite.converter.passes.patterns import AFFINE, BIAS_INDEX
    from edgelite.converter.quantize import rules
    from edgelite.converter.quantize.selective import EXACT_OPS

    assert rules.INTEGER_OPS == {n for n, op in OPS.items() if op.integer is not None}
    assert rules.INTEGER_OPS <= set(OPS) and set(rules.WEIGHT_AXIS) <= rules.INTEGER_OPS
    assert set(rules.FIXED_OUTPUT) | rules.SAME_AS_INPUT | rules.SHARED_INPUTS \
        <= rules.INTEGER_OPS
    assert EXACT_OPS <= rules.INTEGER_OPS and TAKES_ACTIVATION <= set(OPS)
    assert AFFINE <= set(BIAS_INDEX)
    # The drift the registry removed: integer RELU_N1_TO_1 / RELU_0_TO_1 are quantizable.
    assert {"RELU_N1_TO_1", "RELU_0_TO_1"} <= rules.INTEGER_OPS


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_is_named_by_a_test(name, _test_literals):
    # A record added alone -- without a test that builds a model with the op -- fails.
    assert name in _test_literals, f"no test under tests/ names {name}"


@pytest.fixture(scope="module")
def _test_literals() -> set[str]:
    return set(_string_literals("tests"))


# --------------------------------------------------------------------------- op tables
# A table of TFLite op names (a named collection holding two or more registered ops)
# belongs in the records: a trait on OpDef, the table derived from it. These stay outside,
# each for its reason (a key is a folder, a module, or "module:NAME").
_TFLM = ("TFLite Micro's own per-op facts (its op resolver, the dtypes its kernels take, "
         "their persistent bytes, inputs read once in Prepare), measured against tflite-micro: "
         "another runtime's build, kept in one module beside the TFLM model")
_COVERAGE = "the ops a transform's own code handles case by case (not a trait of the op)"
ALLOWED_TABLES = {
    "converter/lower/": "a lowering rule's own choice of the ops it emits for a TF op",
    "schema/ops.py": "the schema: which options table each builtin has (tflite.fbs)",
    "schema/layout.py": "generated from tflite.fbs (layout_gen.py): the schema's enums",
    "converter/runner.py": "the two conversions a batched integer run may hold (value by "
                           "value, exact at any batch): a fact of the batching, not of the ops",
    "converter/micro_ops.py": _TFLM,
    "interpreter/micro/uint8.py": _TFLM,
    "interpreter/micro/arena.py": _TFLM,
    "converter/passes/narrow_int64_arithmetic.py": "its interval arithmetic's cases, by op",
    "converter/passes/:REQUIRES": "a pass's pattern: the op types it is made of (run_passes "
                                  "skips the pass when the graph lacks one)",
    "converter/passes/identify_dilated_conv.py:CONVS": _COVERAGE,
    "converter/quantize/adaround.py:LAYERS": _COVERAGE,
    "converter/quantize/equalize.py:FIRST": _COVERAGE,
    "converter/quantize/equalize.py:SECOND": _COVERAGE,
}


def _op_names(node: ast.AST) -> list[str]:
    """The registered op names of the largest literal collection in ``node`` (tuple, list,
    set, dict keys, or a string of names split at whitespace)."""
    best: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            words = [e.value for e in n.elts if isinstance(e, ast.Constant)]
        elif isinstance(n, ast.Dict):
            words = [k.value for k in n.keys if isinstance(k, ast.Constant)]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            words = n.value.split()
        else:
            continue
        names = [w for w in words if isinstance(w, str) and w in OPS]
        best = names if len(names) > len(best) else best
    return best


def op_tables(source: str) -> dict[str, list[str]]:
    """{NAME: op names} for every table of op names in ``source``: an assignment to one
    UPPER_CASE name (anywhere) or to any name at module or class level whose value holds
    two or more registered ops. (A pattern test inside a function -- ``op.type in ("MUL",
    "DIV")`` -- is not a table.)"""
    tree = ast.parse(source)
    top = {id(s) for s in tree.body} | {id(s) for c in tree.body if isinstance(c, ast.ClassDef)
                                        for s in c.body}
    found = {}
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target = stmt.target
        else:
            continue
        if not isinstance(target, ast.Name) or not (target.id.isupper() or id(stmt) in top):
            continue
        names = _op_names(stmt.value)
        if len(names) >= 2:
            found[target.id] = names
    return found


def _allowed(module: str, name: str) -> str | None:
    """The allow-list entry covering table ``name`` of ``module``, if any."""
    for key in ALLOWED_TABLES:
        folder, _, table = key.partition(":") if "/:" in key else (key, "", "")
        if key in (f"{module}:{name}", module) or (folder.endswith("/") and
                                                    module.startswith(folder) and
                                                    table in ("", name)):
            return key
    return None


def test_no_table_of_op_names_outside_the_records():
    tables, used = [], set()
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            if module.startswith("interpreter/kernels/"):
                continue  # the records and their kernels
            for name, names in op_tables(path.read_text()).items():
                key = _allowed(module, name)
                if key is None:
                    tables.append(f"{module}:{name} {names[:4]}")
                used.add(key)
    assert not tables, ("tables of op names outside the records (make them OpDef traits and "
                        f"derive the table, interpreter/kernels/opdef.py): {tables}")
    assert used >= set(ALLOWED_TABLES), f"stale allow-list entries: {set(ALLOWED_TABLES) - used}"


def test_the_table_scan_finds_tables():
    found = op_tables('''
LAYOUT = frozenset({"RESHAPE", "SQUEEZE"})
ranks = {"ADD": 6, "MUL": 6}
ALSO = """CONV_2D FULLY_CONNECTED"""
class Pass:
    KINDS = ("TANH", "LOGISTIC")
def run(op):
    if op.type in ("MUL", "DIV"):  # a pattern, not a table
        local = ["ADD", "SUB"]
    ONE = ("ADD", "Relu")
    return local
''')
    assert found == {"LAYOUT": ["RESHAPE", "SQUEEZE"], "ranks": ["ADD", "MUL"],
                     "ALSO": ["CONV_2D", "FULLY_CONNECTED"], "KINDS": ["TANH", "LOGISTIC"]}


# --------------------------------------------------------------------------- kernel slots


def _ctx(op: str, *operands) -> OpContext:
    """A context whose inputs are (dtype, quantized) pairs (None: an omitted input)."""
    def info(i, operand):
        if operand is None:
            return None
        dtype, quantized = operand
        q = Quantization(np.array([0.5], np.float32), np.array([0]), 0, None, None) \
            if quantized else None
        return TensorInfo(i, f"t{i}", (1, 4), np.dtype(dtype), None, q)
    return OpContext(0, op, {}, tuple(info(i, o) for i, o in enumerate(operands)), ())


F32, I8, I8Q, U8Q, I16, I16Q = ((np.float32, False), (np.int8, False), (np.int8, True),
                                (np.uint8, True), (np.int16, False), (np.int16, True))


@pytest.mark.parametrize("name, operands, slot", [
    ("CONV_2D", (F32, F32, F32), "float"),
    ("CONV_2D", (F32, I8Q, F32), "hybrid"),       # dynamic range: float data, int8 weights
    ("CONV_2D", (I8Q, I8Q, None), "integer"),
    ("CONV_2D", (U8Q, U8Q, None), "integer"),
    ("CONV_2D", (I16Q, I8Q, None), "int16"),      # 16x8
    ("FULLY_CONNECTED", (F32, (np.uint8, True)), "hybrid"),
    ("BATCH_MATMUL", (F32, I8Q), "hybrid"),       # no affine: the weights are input 1
    ("TRANSPOSE_CONV", ((np.int32, False), I8Q, F32), "hybrid"),  # the data is input 2
    ("TRANSPOSE_CONV", ((np.int32, False), I8Q, I16Q), "int16"),
    ("TRANSPOSE_CONV", ((np.int32, False), I8Q, I8Q), "integer"),
    ("ADD", (I16Q, I16Q), "int16"),
    ("ADD", (I16, I16), "float"),                 # int16 without parameters: plain integers
    ("ADD", (I8, I8), "float"),
    ("EQUAL", (I16Q, I16Q), "int16"),             # runs 16x8 files, quantize16=False
    ("LESS", (I16Q, I16Q), "float"),              # no int16 slot: the float kernel decides
    ("RESHAPE", (I16Q, None), "float"),           # TYPE_GENERIC: the float kernel moves bytes
    ("MEAN", (I16Q, None), "int16"),
])
def test_one_dispatcher_picks_the_slot(name, operands, slot):
    op = OPS[name]
    assert op.choose(_ctx(name, *operands)) is getattr(op, slot)


def test_slot_traits_agree():
    for name, op in OPS.items():
        if op.hybrid is not None:
            assert isinstance(op.float, Kernel), name  # hybrid data is float
        if op.int16 is not None:
            assert op.integer is not None, f"{name}: a 16x8 kernel without an 8-bit one"
        assert op.has_int16 == (op.int16 is not None and op.quantize16), name
    # the ops whose 16x8 kernels the quantizer leaves alone
    assert {n for n, op in OPS.items() if op.int16 is not None and not op.has_int16} == \
        {"EQUAL", "NOT_EQUAL", "SUM", "REDUCE_PROD"}
