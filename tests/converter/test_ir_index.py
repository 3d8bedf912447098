"""The IR's producer / reader index: follows every write, refuses inconsistent graphs, and
keeps conversion work linear in the graph's size."""

import copy
from collections import Counter
import cProfile
import pstats

import edgelite.converter as converter

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.export import export_tflite
from edgelite.converter.graphdef import TFGraph, load_graphdef
from edgelite.converter.ir import Graph, Op, all_graphs
from edgelite.converter.lower import lower_graph
from edgelite.converter.passes import run_passes
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.errors import GraphError

from ..conftest import MODELS
from .tfgraph import GraphBuilder


def chain():
    """x -> ABS -> a -> NEG -> b (graph output), and a constant c."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    a, b = g.tensor("a", np.float32), g.tensor("b", np.float32)
    c = g.const("c", np.ones(4, np.float32))
    g.inputs = [x]
    abs_ = g.add_op("ABS", [x], [a])
    neg = g.add_op("NEG", [a], [b])
    g.outputs = [b]
    return g, (x, a, b, c), (abs_, neg)


def test_queries_follow_every_kind_of_write():
    g, (x, a, b, c), (abs_, neg) = chain()
    assert g.producer(a) is abs_ and g.consumers(a) == [neg] and g.use_count(a) == 1
    assert g.is_output(b) and g.use_count(b) == 1 and g.is_input(x) and not g.is_input(a)

    neg.inputs[0] = x                        # item write
    assert g.consumers(a) == [] and g.use_count(x) == 2
    neg.inputs.append(c)                     # list methods
    neg.inputs.extend([a, a])
    assert g.use_count(a) == 2 and g.consumers(a) == [neg] and g.use_count(c) == 1
    neg.inputs.remove(a)
    del neg.inputs[-1]
    assert g.use_count(a) == 0 and g.consumers(a) == []
    neg.inputs[1:] = [a]                     # slice write
    assert neg.inputs == [x, a] and g.use_count(c) == 0 and g.use_count(a) == 1
    neg.inputs = [a]                         # attribute write
    assert g.use_count(x) == 1 and g.use_count(a) == 1
    g.outputs.append(a)                      # graph outputs count as uses
    assert g.is_output(a) and g.use_count(a) == 2
    g.outputs.pop()
    b2 = g.tensor("b2", np.float32)
    neg.outputs[0] = b2                      # outputs move the producer
    assert g.producer(b) is None and g.producer(b2) is neg
    g.validate_index()


def test_op_list_changes_are_indexed():
    g, (x, a, b, c), (abs_, neg) = chain()
    relu = g.insert_op(Op("RELU", [x], [g.tensor("r", np.float32)]), before=neg)
    assert list(g.ops) == [abs_, relu, neg] and g.ops.index(relu) == 1
    assert g.consumers(x) == [abs_, relu]
    g.remove_op(relu)
    assert list(g.ops) == [abs_, neg] and g.consumers(x) == [abs_] and relu not in g.ops
    new = g.replace_op(neg, Op("RELU6", [a], [b]))
    assert list(g.ops) == [abs_, new] and g.producer(b) is new and g.consumers(a) == [new]
    neg.inputs[0] = x                        # a removed op no longer touches the index
    assert g.consumers(x) == [abs_]
    g.validate_index()


def test_op_view_reads_without_materialising_for_short_walks():
    g = Graph()
    t = g.tensor("t0", np.float32, (1,))
    g.inputs = [t]
    ops = []
    for k in range(200):
        u = g.tensor(f"t{k + 1}", np.float32)
        ops.append(g.add_op("ABS", [t], [u]))
        t = u
    view = g.ops
    assert len(view) == 200 and view[-1] is ops[-1] and view[3] is ops[3]
    assert view[197:] == tuple(ops[197:]) and g._ix.cached is None  # walked, not cached
    assert view[100] is ops[100] and g._ix.cached is not None       # far: cached once
    with pytest.raises(AttributeError):
        view.remove(ops[0])                  # the view is read-only: use Graph methods
    for op in g.ops:                         # iterating a snapshot: removal is safe
        if op is not ops[-1]:
            g.remove_op(op)
    assert list(g.ops) == [ops[-1]]


def test_inconsistent_changes_are_refused_and_tampering_is_detected():
    g, (x, a, b, c), (abs_, neg) = chain()
    with pytest.raises(GraphError, match="'a' would have two producers"):
        g.add_op("RELU", [x], [a])
    with pytest.raises(GraphError, match="two producers"):
        neg.outputs.append(a)
    assert list(neg.outputs) == [b]          # a refused write changes nothing
    with pytest.raises(ValueError, match="extended slice"):
        neg.inputs[::2] = [x, x]             # list's own refusal, before the index hears
    other = Graph()
    with pytest.raises(GraphError, match="already in a graph"):
        other.insert_op(abs_)
    g.validate_index()
    list.__setitem__(neg.inputs, 0, x)       # a write that bypasses the index
    with pytest.raises(GraphError, match="index is stale"):
        g.validate_index()


def test_remove_dead_ops_from_roots_and_everywhere():
    g, (x, a, b, c), (abs_, neg) = chain()
    g.add_op("EXP", [x], [g.tensor("d", np.float32)])   # dead from the start
    g.outputs = [a]                                      # NEG is now dead too
    assert g.remove_dead_ops([a]) == 0                   # ABS feeds the output
    assert g.remove_dead_ops([b]) == 1 and neg not in g.ops   # NEG only; EXP not looked at
    assert g.remove_dead_ops() == 1 and g.op_counts() == {"ABS": 1}
    g.validate_index()


def test_unique_names_resume_where_they_stopped():
    g = Graph()
    g.tensor("w_2", np.float32)
    assert [g.unique_name("w") for _ in range(4)] == ["w", "w_1", "w_3", "w_4"]


def test_deepcopy_gets_its_own_index():
    g, (x, a, b, c), (abs_, neg) = chain()
    h = copy.deepcopy(g)
    h.ops[1].inputs[0] = h.inputs[0]
    h.validate_index()
    g.validate_index()
    assert g.consumers(a) == [neg] and h.use_count(h.inputs[0]) == 2


# -- whole conversions -----------------------------------------------------------------------
SAMPLE_MODELS = [p.stem for p in sorted(MODELS.glob("*.pb"))]  # loops and state too
MODES = {"float": None,
         "int8": QuantizeOptions(mode=QuantMode.INT8, default_range=(-8.0, 8.0)),
         "uint8": QuantizeOptions(mode=QuantMode.UINT8, default_range=(-8.0, 8.0)),
         "int16x8": QuantizeOptions(mode=QuantMode.INT16X8, default_range=(-8.0, 8.0)),
         "dynamic": QuantizeOptions(mode=QuantMode.DYNAMIC),
         "float16": QuantizeOptions(mode=QuantMode.FLOAT16)}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SAMPLE_MODELS)
def test_every_pass_keeps_the_index_on_every_sample_model(name, mode):
    """EDGELITE_CHECK_IR=1 (conftest): run_passes validates after each pass and
    Graph.check() after lowering / quantization."""
    result = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=MODES[mode]))
    result.graph.validate_index()
    final = result.passes[-1].after if result.passes else result.lowered_op_counts
    if mode == "float":
        recount = Counter()
        for g in all_graphs(result.graph):  # (less the state resets, made after the passes)
            recount.update(op.type for op in g.ops
                           if not any(t.is_variable for t in op.outputs))
        assert final == dict(recount)  # incremental counts match a recount, subgraphs too


def chain_graphdef(links: int) -> bytes:
    """x[1, 4] -> (Relu, AddV2 c, Mul c, BiasAdd c) * links/4 -> Identity."""
    g = GraphBuilder()
    head = g.placeholder("x", [1, 4])
    f32 = np.dtype(np.float32)
    for k in range(links):
        kind, name = k % 4, f"n{k}"
        if kind == 0:
            head = g.node(name, "Relu", [head], T=f32)
        else:
            c = g.const(f"{name}/c", np.full(4, 0.5 + 0.25 * kind, np.float32))
            op = ("AddV2", "Mul", "BiasAdd")[kind - 1]
            head = g.node(name, op, [head, c], T=f32)
    g.node("y", "Identity", [head], T=f32)
    return g.bytes()


def conversion_calls(links: int) -> int:
    """Python function calls made lowering, optimising and exporting a chain (deterministic,
    unlike time; the interpreter's shape inference is left out)."""
    data = chain_graphdef(links)
    prof = cProfile.Profile()

    def lower():
        tf = TFGraph(load_graphdef(data))
        return lower_graph(tf, tf.default_inputs(), tf.default_outputs())

    graph = prof.runcall(lower)
    prof.runcall(run_passes, graph)
    for t in graph.tensors():
        t.shape = t.shape or (1, 4)
    prof.runcall(export_tflite, graph)
    return pstats.Stats(prof).total_calls


def test_conversion_work_grows_linearly(monkeypatch):
    monkeypatch.delenv("EDGELITE_CHECK_IR")   # the O(n) check after each pass is extra work
    small, large = conversion_calls(600), conversion_calls(1200)
    # Linear work doubles; the scans this replaced (producer / use_count over every op,
    # list.remove, remove_dead_ops to a fixed point) made it 3.5x here.
    assert large / small < 2.1, (small, large)


# -- every step, several graph shapes ---------------------------------------------------------
F32 = np.dtype(np.float32)
STEPS = ("lower_graph", "run_passes", "infer_shapes", "export_tflite")


def constant_expressions(links: int) -> bytes:
    """x -> AddV2(h, Mul(c1, Sub(c2, c3)))*: two ops per link folded while lowering."""
    g = GraphBuilder()
    head = g.placeholder("x", [1, 8])
    for k in range(links):
        c = [g.const(f"n{k}/c{j}", np.full(8, 0.1 * (k % 7 + j), np.float32))
             for j in range(3)]
        diff = g.node(f"n{k}/sub", "Sub", c[1:], T=F32)
        head = g.node(f"n{k}", "AddV2", [head, g.node(f"n{k}/mul", "Mul", [c[0], diff],
                                                           T=F32)], T=F32)
    g.node("y", "Identity", [head], T=F32)
    return g.bytes()


def wide(branches: int) -> bytes:
    """Every branch reads x (one tensor with `branches` readers): Relu(Mul(x, c)), summed
    by a running AddV2."""
    g = GraphBuilder()
    g.placeholder("x", [1, 8])
    total = None
    for k in range(branches):
        c = g.const(f"b{k}/c", np.full(8, 1.0 + 0.01 * (k % 9), np.float32))
        branch = g.node(f"b{k}/relu", "Relu", [g.node(f"b{k}", "Mul", ["x", c], T=F32)], T=F32)
        total = branch if total is None else g.node(f"s{k}", "AddV2", [total, branch], T=F32)
    g.node("y", "Identity", [total], T=F32)
    return g.bytes()


def calls_per_step(data: bytes) -> dict[str, int]:
    """Python calls made inside each step of one convert_detailed call."""
    counts = {}
    with pytest.MonkeyPatch.context() as mp:
        for name in STEPS:
            def counted(*args, _real=getattr(converter, name), _name=name, **kwargs):
                prof = cProfile.Profile()
                try:
                    return prof.runcall(_real, *args, **kwargs)
                finally:
                    counts[_name] = counts.get(_name, 0) + pstats.Stats(prof).total_calls
            mp.setattr(converter, name, counted)
        convert_detailed(data)
    return counts


@pytest.mark.parametrize("build, size", [(chain_graphdef, 400), (constant_expressions, 100),
                                         (wide, 100)], ids=["chain", "constants", "wide"])
def test_every_step_grows_linearly(build, size, monkeypatch):
    """Each step of one real convert_detailed call (lowering, passes, shape inference,
    export), on a plain chain, constant expressions folded while lowering and one tensor read
    by every branch: the Python calls it makes (builtins included) grow 4x with 4x the graph
    (a Python scan of every op per op or per SELECT, repeated topological orders grow
    faster; a scan inside one comprehension is one call: test_callers_are_indexed)."""
    monkeypatch.delenv("EDGELITE_CHECK_IR")  # (the O(n) index check after every pass)
    small, large = calls_per_step(build(size)), calls_per_step(build(4 * size))
    assert set(small) == set(STEPS), small
    ratios = {step: large[step] / small[step] for step in STEPS}
    assert all(r < 4.4 for r in ratios.values()), (ratios, small, large)


def test_callers_are_indexed(monkeypatch):
    """has_subgraphs / all_graphs answer from the index (the pass pipeline asks before every
    pass): an op's subgraphs set before or after it joins the graph, and its removal, are
    followed; a graph without callers is never scanned."""
    from edgelite.converter.ir import has_subgraphs
    from edgelite.converter.ir_index import OpSequence
    g, _, (abs_, neg) = chain()
    body = Graph()
    assert not has_subgraphs(g)
    neg.subgraphs = {"body": body}  # set on an op in the graph
    assert has_subgraphs(g) and all_graphs(g) == [g, body]
    g.validate_index()
    g.remove_op(neg)
    assert not has_subgraphs(g)
    extra = Op("WHILE", [], [g.tensor("w", np.float32)])
    extra.subgraphs = {"cond": body, "body": body}  # set before the op joins
    g.insert_op(extra)
    assert has_subgraphs(g)
    g.validate_index()
    extra.subgraphs = {}
    assert not has_subgraphs(g)
    monkeypatch.setattr(OpSequence, "__iter__", lambda self: (_ for _ in ()).throw(
        AssertionError("all_graphs scanned the ops")))
    assert all_graphs(g) == [g]


# -- ops by type -------------------------------------------------------------------------------
def _by_walk(g, *types):
    return [op for op in g.ops if op.type in types]


def _check_types(g):
    g.validate_index()
    for types in {(op.type,) for op in g.ops} | {("ABS", "NEG"), ("RELU", "NEG", "EXP"),
                                                  ("NONE",)}:
        assert g.ops_of(*types) == _by_walk(g, *types), types
        assert g.has_ops(*types) == bool(_by_walk(g, *types))


def test_ops_of_follows_every_mutation():
    """graph.ops_of answers in graph order after each kind of change the passes make: add,
    insert before an op, remove, replace, retype (op.type = ...), reorder (graph.ops = ...),
    many inserts at one place (the ranks run out and are renumbered), a copy."""
    g, (x, a, b, c), (abs_, neg) = chain()
    _check_types(g)
    relu = g.insert_op(Op("RELU", [x], [g.tensor("r", np.float32)]), before=neg)
    assert g.ops_of("RELU", "ABS") == [abs_, relu] and g.ops_of("NEG", "RELU") == [relu, neg]
    _check_types(g)
    first = g.insert_op(Op("EXP", [x], [g.tensor("e", np.float32)]), before=abs_)
    assert g.ops_of("EXP", "NEG") == [first, neg]
    _check_types(g)
    g.remove_op(relu)
    assert g.ops_of("RELU") == [] and not g.has_ops("RELU")
    _check_types(g)
    new = g.replace_op(neg, Op("RELU6", [a], [b]))
    assert g.ops_of("RELU6") == [new] and g.ops_of("NEG") == []
    _check_types(g)
    new.type = "NEG"                              # retype in the graph
    assert g.ops_of("NEG") == [new] and not g.has_ops("RELU6")
    _check_types(g)
    neg.type = "TANH"                             # retype out of any graph: not indexed
    assert not g.has_ops("TANH")
    g.ops = [abs_, first]                         # reorder (order_for_memory's way)
    assert g.ops_of("ABS", "EXP") == [abs_, first] and not g.has_ops("NEG")
    g.ops = [first, abs_, new]
    _check_types(g)
    inserted = []                                 # 100 inserts between two neighbours
    for k in range(100):
        inserted.append(g.insert_op(Op("RELU", [x], [g.tensor(f"q{k}", np.float32)]),
                                    before=new))
        if k == 30:
            assert g.ops_of("RELU", "NEG") == inserted + [new] and not g._ix.ranks_stale
    assert g._ix.ranks_stale                      # 69 halvings of the gap: out of integers
    assert g.ops_of("RELU", "NEG", "EXP") == [first, *inserted, new]
    assert not g._ix.ranks_stale
    _check_types(g)
    h = copy.deepcopy(g)
    assert [op.type for op in h.ops_of("RELU", "EXP")] == ["EXP"] + ["RELU"] * 100
    _check_types(h)


def test_stale_type_index_is_detected():
    g, _, (abs_, neg) = chain()
    g.validate_index()
    g._ix.by_type["ABS"].pop(abs_)                # tampering the index notices
    with pytest.raises(GraphError, match=r"stale \(by_type\)"):
        g.validate_index()
    g, _, (abs_, neg) = chain()
    g._ix.rank[abs_], g._ix.rank[neg] = g._ix.rank[neg], g._ix.rank[abs_]
    with pytest.raises(GraphError, match=r"stale \(rank\)"):
        g.validate_index()


TYPED_PASSES = ("remove_identities", "matmul_to_fully_connected", "div_to_mul",
                "identify_gelu", "decompose_erf", "fuse_lstm_loop", "transpose_as_reshape",
                "collapse_strided_slices", "fold_dense_reshapes", "fold_flatten_into_fc",
                "batch_matmul_to_fully_connected", "identify_dilated_conv",
                "fold_transpose_into_matmul", "identify_relu_clamps", "identify_hard_swish",
                "identify_leaky_relu", "identify_prelu", "identify_l2_norm",
                "fold_unique_gather", "fold_reshape_of_own_shape", "fold_pad", "fold_batchnorm",
                "fuse_bias", "fold_affine_constants", "fold_input_affine", "fold_input_scale",
                "fuse_activation", "fold_shapes", "fold_broadcast_to", "collapse_reshapes",
                "remove_trivial_arithmetic", "narrow_int64_arithmetic", "hoist_channel_ops",
                "spell_out_ellipsis", "spell_out_new_axes", "prune_loop_vars")


def test_passes_without_their_op_types_do_not_look_at_the_ops(monkeypatch):
    """On a graph with none of the op types a pass rewrites (a chain of ABS), the pass
    makes no change and never walks the op list: it costs one lookup per type."""
    from edgelite.converter.ir_index import GraphIndex
    from edgelite.converter.passes import PIPELINE
    g = Graph()
    t = g.tensor("t0", np.float32, (1, 4))
    g.inputs = [t]
    for k in range(50):
        u = g.tensor(f"t{k + 1}", np.float32, (1, 4))
        g.add_op("ABS", [t], [u])
        t = u
    g.outputs = [t]
    g.ops  # noqa: B018 -- (nothing cached: every walk would go through snapshot)
    monkeypatch.setattr(GraphIndex, "snapshot", lambda self: (_ for _ in ()).throw(
        AssertionError("the pass walked the op list")))
    by_name = {p.name: p for p in PIPELINE}
    # the passes that look at every op, whatever its type
    assert set(by_name) - set(TYPED_PASSES) == {"fold_constants", "merge_duplicates",
                                                "remove_dead", "trim_constants",
                                                "order_for_memory"}
    for name in TYPED_PASSES:
        assert by_name[name].fn(g) == 0, name
