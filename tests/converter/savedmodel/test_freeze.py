"""freeze.py: variables -> constants, resource reads -> Identity / GatherV2 (in the main graph
and inside functions), the library pruned to what the kept nodes call."""

import numpy as np

from edgelite.converter.savedmodel.freeze import freeze, needed_nodes, prune_library
from edgelite.converter.tf_tensor import tensor_to_numpy
from edgelite.schema import graph_pb2 as pb
from tests.conftest import MODELS


def _graph() -> pb.GraphDef:
    sm = pb.SavedModel()
    sm.ParseFromString((MODELS / "savedmodel" / "sm_module_two" / "saved_model.pb").read_bytes())
    return sm.meta_graphs[0].graph_def


def _ops(gd) -> list[str]:
    return [n.op for n in gd.node] + [n.op for f in gd.library.function for n in f.node_def]


def test_variables_become_constants_and_reads_identities():
    gd = _graph()
    assert "ReadVariableOp" in _ops(gd) and "ResourceGather" in _ops(gd)
    w = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = freeze(gd, {"w": w})
    node = next(n for n in out.node if n.name == "w")
    assert node.op == "Const" and node.attr["dtype"].type == 1
    np.testing.assert_array_equal(tensor_to_numpy(node.attr["value"].tensor, "w"), w)
    ops = _ops(out)
    assert "ReadVariableOp" not in ops and "ResourceGather" not in ops
    gather = [n for f in out.library.function for n in f.node_def if n.op == "GatherV2"]
    assert len(gather) == 1 and gather[0].input[2].endswith("/axis:output:0")
    assert gather[0].attr["Tparams"].type == 1 and gather[0].attr["Taxis"].type == 3
    assert "ReadVariableOp" in _ops(gd)  # the input is left as it was


def test_the_library_keeps_what_the_signature_calls():
    gd = _graph()
    names = {f.signature.name for f in gd.library.function}
    keep = needed_nodes(gd, ["StatefulPartitionedCall_1:0"])  # serving_default's output
    prune_library(gd, keep)
    kept = {f.signature.name for f in gd.library.function}
    assert kept < names and not any("traced_restore" in k or "traced_save" in k for k in kept)
    assert any("signature_wrapper_serve" in k for k in kept)
