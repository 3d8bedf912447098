"""Graph -> Graph rewrites, one small module per pass, each with a switch.

`PIPELINE` is the default order. `run_passes` applies them, repeating the pipeline until
nothing changes (a fusion can expose a fold), and reports which pass changed what.

Each pass runs on every graph: the main one and the subgraphs WHILE / IF ops call
(ir.all_graphs). A subgraph's inputs and outputs are its caller's interface: passes keep
their number, order and dtypes (a pass may make an output another tensor of the same value,
as bypassing an Identity does); dead-op removal counts subgraph outputs as uses, and a
WHILE / IF is never folded, merged or bypassed. Before each round the shapes of a graph with
subgraphs are re-inferred (non-strict), so the subgraphs' inputs know their callers' shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from edgelite.errors import EdgeliteError
from ..ir import Graph, all_graphs, has_subgraphs, index_checks_enabled
from ..shape_inference import infer_shapes
from ..sample_data import names_list
from . import (batch_matmul_to_fully_connected, collapse_reshapes, decompose_erf,
               fold_affine_constants, fold_batchnorm, fold_constants, fold_dense_reshapes,
               fold_input_scale, fold_pad, fold_shapes, fold_transpose_into_matmul,
               fuse_activation, fuse_bias, fuse_lstm_loop,
               identify_dilated_conv, identify_gelu, identify_hard_swish, identify_l2_norm,
               identify_leaky_relu, identify_prelu, identify_relu_clamps,
               matmul_to_fully_connected, merge_duplicates, order_for_memory, prune_loop_vars,
               remove_dead, remove_identities, remove_trivial_arithmetic, trim_constants)
from . import div_to_mul, fold_broadcast_to, spell_out_ellipsis, spell_out_new_axes
from . import fold_reshape_of_own_shape, fold_unique_gather
from . import fold_input_affine
from . import collapse_strided_slices
from . import transpose_as_reshape
from . import narrow_int64_arithmetic
from . import hoist_channel_ops
from . import fold_flatten_into_fc


@dataclass(frozen=True)
class Pass:
    name: str
    fn: Callable[[Graph], int]   # returns how many rewrites it made
    doc: str
    # The op types the pass's pattern is made of (its module's REQUIRES): each entry a type
    # or a tuple of alternatives. A graph lacking one of them is skipped in O(1)
    # (Graph.has_ops), so a pass that cannot fire costs nothing on a large graph.
    requires: tuple[tuple[str, ...], ...] = ()

    def can_fire(self, graph: Graph) -> bool:
        return all(graph.has_ops(*types) for types in self.requires)


def _requires(module) -> tuple[tuple[str, ...], ...]:
    return tuple((t,) if isinstance(t, str) else tuple(t)
                 for t in getattr(module, "REQUIRES", ()))


PIPELINE: tuple[Pass, ...] = tuple(
    Pass(m.__name__.rsplit(".", 1)[-1], m.run, (m.__doc__ or "").strip().splitlines()[0],
         _requires(m))
    for m in (remove_identities, fold_constants, matmul_to_fully_connected, fold_shapes,
              remove_trivial_arithmetic, div_to_mul, fold_broadcast_to, spell_out_ellipsis,
              spell_out_new_axes,
              identify_gelu, decompose_erf, fuse_lstm_loop, transpose_as_reshape,
              collapse_reshapes, collapse_strided_slices, fold_dense_reshapes,
              fold_flatten_into_fc, batch_matmul_to_fully_connected,
              identify_dilated_conv, fold_transpose_into_matmul,
              identify_relu_clamps, identify_hard_swish, identify_leaky_relu, identify_prelu,
              identify_l2_norm, merge_duplicates, fold_unique_gather,
              fold_reshape_of_own_shape, fold_pad, hoist_channel_ops,
              fold_batchnorm, fuse_bias,
              fold_affine_constants, fold_input_affine, fold_input_scale, fuse_activation,
              prune_loop_vars, narrow_int64_arithmetic,
              remove_dead, trim_constants, order_for_memory))
PASS_NAMES = tuple(p.name for p in PIPELINE)
# Passes that make the graph legal for export; disabling them is not allowed.
REQUIRED = frozenset({"remove_identities", "matmul_to_fully_connected", "decompose_erf",
                      "narrow_int64_arithmetic"})


@dataclass(frozen=True)
class PassRecord:
    name: str
    rewrites: int
    before: dict[str, int]
    after: dict[str, int]


def run_passes(graph: Graph, disabled: frozenset[str] | set[str] = frozenset(),
               max_rounds: int = 8) -> list[PassRecord]:
    """Run the enabled passes to a fixed point; return a record of every pass that changed."""
    unknown = set(disabled) - set(PASS_NAMES)
    if unknown:
        raise EdgeliteError(f"unknown pass(es) {names_list(sorted(unknown))}; passes are "
                            f"{', '.join(PASS_NAMES)}")
    forbidden = set(disabled) & REQUIRED
    if forbidden:
        raise EdgeliteError(f"pass(es) {sorted(forbidden)} cannot be disabled: without them "
                            "the model cannot be written as TFLite ops")
    records = []
    checking = index_checks_enabled()
    counts = _counts(graph)  # recounted only after a pass that changed something
    for _ in range(max_rounds):
        changed = False
        if has_subgraphs(graph):
            infer_shapes(graph, strict=False)
        for p in PIPELINE:
            if p.name in disabled:
                continue
            n = 0
            for g in all_graphs(graph):
                if not p.can_fire(g):
                    continue
                n += p.fn(g)
                if checking:
                    g.validate_index()
            if n:
                changed = True
                before, counts = counts, _counts(graph)
                records.append(PassRecord(p.name, n, before, counts))
        if not changed:
            break
    for g in all_graphs(graph):
        g.check()
    return records


def _counts(graph: Graph) -> dict[str, int]:
    """Op counts over the main graph and its subgraphs."""
    total: dict[str, int] = {}
    for g in all_graphs(graph):
        for name, k in g.op_counts().items():
            total[name] = total.get(name, 0) + k
    return dict(sorted(total.items()))


def after_quantization(graph: Graph, disabled: frozenset[str] | set[str] = frozenset()) -> int:
    """trim_constants and order_for_memory again on the quantized graph (unless disabled):
    quantization makes the biases integers and adds QUANTIZE / DEQUANTIZE ops (a
    requantization before a CONCATENATION, ...), and the tensors get their final sizes."""
    n = 0
    for g in all_graphs(graph):
        if "trim_constants" not in disabled:
            n += trim_constants.run(g)
        if "order_for_memory" not in disabled:
            n += order_for_memory.run(g, quantized=True)
    return n
