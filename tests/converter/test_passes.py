"""The pass pipeline (converter/passes/__init__.py): run_passes records what each pass
changed and takes switches; PIPELINE names each pass after its module. (The passes
themselves: tests/converter/passes/.)"""

import pytest

from edgelite.converter import passes
from edgelite.converter.passes import run_passes
from edgelite.errors import EdgeliteError

from .irgraph import NONE, conv_graph, rand, then


def test_run_passes_records_and_switches():
    g, conv = conv_graph()
    m = then(g, "MUL", [conv.outputs[0], g.const("s", rand(4))], "bn/mul", **NONE)
    g.outputs = [then(g, "RELU", [then(g, "ADD", [m, g.const("o", rand(4))], "bn", **NONE)],
                      "relu")]
    for op in g.ops:
        if op.type in ("MUL", "ADD"):
            op.origin = "FusedBatchNormV3"  # as lowering marks them
    records = run_passes(g, disabled={"fold_batchnorm"})
    assert g.op_counts() == {"ADD": 1, "CONV_2D": 1, "MUL": 1}  # relu fused into ADD only
    assert [r.name for r in records] == ["fuse_activation"]
    assert records[0].before == {"ADD": 1, "CONV_2D": 1, "MUL": 1, "RELU": 1}
    with pytest.raises(EdgeliteError, match="unknown pass"):
        run_passes(g, disabled={"fold_batchnrom"})
    with pytest.raises(EdgeliteError, match="cannot be disabled"):
        run_passes(g, disabled={"remove_identities"})


def test_pipeline_names_are_the_modules():
    import importlib
    for name in passes.PASS_NAMES:
        module = importlib.import_module(f"edgelite.converter.passes.{name}")
        assert passes.PIPELINE[passes.PASS_NAMES.index(name)].fn is module.run
