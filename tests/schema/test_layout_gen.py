"""schema/layout.py (written by schema/layout_gen.py from tflite.fbs): current, equal to the
flatc bindings' facts, and the interpreter's options reader built on it gives what the
object API gives -- for every options table, with every field set. Also: reading and
running a model never imports the bindings (generated_tflite)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from edgelite.interpreter.loader.model import load_model
from edgelite.schema import generated_tflite as tfl
from edgelite.schema import layout, layout_gen, ops
from tests.conftest import ROOT
from tests.interpreter.tflite_builder import ModelBuilder


def test_layout_is_current():
    assert layout_gen.render(layout_gen.FBS.read_text()) == layout_gen.OUTPUT.read_text(), \
        "run python -m edgelite.schema.layout_gen"
    assert layout_gen.main(["--check"]) == 0


def test_enums_and_unions_equal_the_bindings():
    for name, members in layout.ENUMS.items():
        assert ops.enum_values(getattr(tfl, name)) == members, name
    for name, members in layout.UNIONS.items():
        assert ops.enum_names(getattr(tfl, name)) == members, name
    # the name tables ops.py builds from layout.py
    assert ops.BUILTIN_CODE == ops.enum_values(tfl.BuiltinOperator)
    assert ops.TENSOR_TYPE_NAME == ops.enum_names(tfl.TensorType)


@pytest.mark.parametrize("union", sorted(layout.UNIONS))
def test_fields_and_defaults_equal_the_object_api(union):
    tables = [t for v, t in layout.UNIONS[union].items() if v]
    assert len(tables) > 20
    for table in tables:
        default = ops.options_to_dict(getattr(tfl, table + "T")())
        assert [(k, d) for k, _, _, d in layout.TABLES[table]] == list(default.items()), table


def _value(kind: str, slot: int, default):
    """A value of a field of this kind other than its default (distinct per slot)."""
    if kind == "str":
        return f"s{slot}"
    if kind[0] == "[":
        return [True, False] if kind == "[?" else [0.5, -2.25] if kind == "[f" \
            else [slot + 1, 2, 3]
    return (not default) if kind == "?" else default + 0.75 + slot if kind in "fd" \
        else default + 1 + slot


def _every_op_with_options():
    return sorted(set(ops._OPTIONS_TABLE_OF) | set(ops._OPTIONS2_TABLE_OF))


def test_every_options_field_reads_as_the_object_api_reads_it():
    """One model with one operator per op that has options, each field of its table set
    to a non-default value: the interpreter's reader (layout.py) against the bindings'
    object API on the same bytes."""
    b = ModelBuilder()
    x = b.tensor("x", [1], np.float32)
    names = _every_op_with_options()
    for name in names:
        table = ops._OPTIONS_TABLE_OF.get(name) or ops._OPTIONS2_TABLE_OF[name]
        fields = {k: _value(kind, slot, d) for k, slot, kind, d in layout.TABLES[table]}
        y = b.tensor(f"y_{name}", [1], np.float32)
        b.op(name, [x], [y], **fields)
    data = b.build(inputs=[x], outputs=[y])
    ours = load_model(data).subgraphs[0].operators
    theirs = tfl.ModelT.InitFromPackedBuf(data, 0).subgraphs[0].operators

    def frozen(v):
        return tuple(frozen(e) for e in v) if isinstance(v, (list, tuple)) else v

    assert len(ours) == len(names) > 150
    for op, op_t in zip(ours, theirs, strict=True):
        want = {k: frozen(v) for k, v in ops.operator_options(op_t).items()}
        assert dict(op.options) == want, op.name
        assert want == {} or any(v != d for v, d in
                                 zip(want.values(), ops.default_options(op.name).values()))


def test_the_interpreter_never_imports_the_bindings():
    """Importing edgelite and the interpreter, loading a model and running it leave the
    690 KB generated module unloaded (it is for writing models)."""
    code = (
        "import sys, numpy as np\n"
        "import edgelite\n"
        "from edgelite.interpreter import Interpreter\n"
        f"it = Interpreter(model_path={str(ROOT / 'models' / 'keras_cnn.tf_int8.tflite')!r})\n"
        "it.allocate_tensors()\n"
        "d = it.get_input_details()[0]\n"
        "it.set_tensor(d['index'], np.zeros(d['shape'], d['dtype']))\n"
        "it.invoke()\n"
        "it.get_tensor(it.get_output_details()[0]['index'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('edgelite.schema')))\n"
        "from edgelite.schema import ops\n"
        "ops.operator_code('ADD')\n"  # writing: the bindings load now
        "print('edgelite.schema.generated_tflite' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split("\n")
    assert out[0] == "['edgelite.schema', 'edgelite.schema.layout', 'edgelite.schema.ops']"
    assert out[1] == "True"
