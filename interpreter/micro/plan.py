"""TensorFlow Lite Micro's memory plan, recomputed: which buffers its arena holds, when each
is alive, and where TFLM's GreedyMemoryPlanner puts it.

This is the non-persistent ("head") part of TFLM's tensor arena (arena.py adds the
persistent tail). Everything here follows TFLM's sources, in our own words:

- lifetimes: tensorflow/lite/micro/micro_allocation_info.cc (AllocationInfoBuilder).
  Scopes are counted over the whole model: subgraph 0's inputs are created at scope 0,
  operator i of a subgraph runs at the next scope, an IF / WHILE / CALL_ONCE walks its
  subgraphs at further scopes before its own inputs' last use is set, and the subgraph's
  outputs live until the last scope of that subgraph.
- which tensors: a tensor is planned when it has no constant data, is not a variable
  (variables are persistent), is not a resource handle and has a non-zero size.
- sizes: each buffer's byte size rounded up to MicroArenaBufferAlignment() = 16
  (micro_allocator.cc CreatePlan).
- placement: memory_planner/greedy_memory_planner.cc. Offline-planned buffers keep their
  offsets and are placed first; the online ones are sorted by size, largest first, with a
  stable bubble sort over the list TFLM fills from the back (so among equal sizes the
  buffer with the higher index comes first); each is put at the lowest offset where it
  fits between the buffers already placed that are alive at the same time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgelite.errors import ModelFormatError
from ..kernels import OPS
from ..loader.model_objects import num_elements

ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment() (micro_arena_constants.h)
ONLINE = -1  # kOnlinePlannedBuffer
OFFLINE_METADATA = "OfflineMemoryAllocation"
# IF / WHILE / CALL_ONCE: the option keys naming the subgraphs each one runs, in the
# order MarkSubgraphLifetimesIfNecessary walks them.
CONTROL_FLOW = {name: tuple(key for _, key in op.subgraphs)
                for name, op in OPS.items() if op.subgraphs}  # OpDef.subgraphs
# TfLiteType sizes TFLM uses for tensor byte lengths (TfLiteTypeSizeOf); by TensorType code.
TYPE_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 5: 0, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16,
              12: 8, 13: 4, 14: 8, 15: 4, 16: 4, 17: 1, 18: 1}


def align_up(n: int, alignment: int = ARENA_ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class PlannedBuffer:
    """One buffer of TFLM's plan: a tensor (``tensor`` >= 0) or an op's scratch buffer
    (``op`` >= 0, ``tensor`` = -1)."""
    subgraph: int
    tensor: int  # -1 for a scratch buffer
    op: int  # the op that requested a scratch buffer, else -1
    size: int  # bytes, rounded up to 16
    first: int  # scope it is created at
    last: int  # last scope it is used at
    offset: int  # bytes from the start of the head
    offline: bool = False


def called_subgraphs(model, sg_index: int, op, running: tuple[int, ...]) -> list[int]:
    """The subgraphs an IF / WHILE / CALL_ONCE op runs, in TFLM's order; ModelFormatError
    for an index out of range or a subgraph that would run itself (``running``: the
    subgraphs being walked)."""
    out = []
    for key in CONTROL_FLOW.get(op.name, ()):
        sub = op.options.get(key)
        if sub is None:
            continue
        if not 0 <= int(sub) < len(model.subgraphs):
            raise ModelFormatError(f"{op.name} op {op.index} of subgraph {sg_index} runs "
                                   f"subgraph {int(sub)}; the model has "
                                   f"{len(model.subgraphs)}")
        if int(sub) in running:
            raise ModelFormatError(f"{op.name} op {op.index} of subgraph {sg_index} runs "
                                   f"subgraph {int(sub)}, which is already running: "
                                   "TFLM's planner would never end")
        out.append(int(sub))
    return out


def tensor_bytes(tensor) -> int:
    """TfLiteEvalTensorByteLength: elements x element size (0 for a type TFLM has no
    size for)."""
    return num_elements(tensor.shape) * TYPE_BYTES.get(tensor.type_code, 0)


def offline_offsets(model) -> list[int] | None:
    """The per-tensor offsets of TFLM's OfflineMemoryAllocation metadata (version, subgraph,
    count, then one int32 per tensor of all subgraphs; -1 = plan online), or None."""
    raw = model.metadata.get(OFFLINE_METADATA) if model.metadata else None
    if raw is None or len(raw) < 12:
        return None
    words = np.frombuffer(raw[:len(raw) // 4 * 4], dtype="<i4")
    count = int(words[2])
    return [int(v) for v in words[3:3 + count]]


def lifetimes(model, scratch: dict[tuple[int, int], list[int]]):
    """[(subgraph, tensor or -1, op, bytes, first, last, offline offset)] in TFLM's
    AllocationInfo order (all tensors of all subgraphs, then scratch buffers in request
    order); ``scratch[(subgraph, op)]`` lists the byte sizes an op requested in Prepare.
    Only the buffers TFLM plans are returned."""
    offsets = offline_offsets(model)
    tensor_info = []  # per subgraph: list of [bytes, first, last, needs, offline]
    k = 0
    for sg in model.subgraphs:
        rows = []
        for t in sg.tensors:
            off = offsets[k] if offsets is not None and k < len(offsets) else ONLINE
            k += 1
            needs = t.data is None and not t.is_sparse and not t.is_variable
            # a RESOURCE tensor (13) gets its data in VAR_HANDLE's Prepare (var_handle.cc),
            # before planning: never planned
            needs = needs and tensor_bytes(t) != 0 and t.type_code != 13
            if t.is_variable and off != ONLINE:
                needs = True
            rows.append([tensor_bytes(t), -1, -1, needs, off])
        tensor_info.append(rows)
    order = sorted(scratch)  # requests are made op by op in the order Prepare runs
    scratch_rows = {key: [[b, -1, -1] for b in scratch[key]] for key in order}
    scope = [0]

    def first(row, s):
        if row[1] == -1:
            row[1] = s

    def mark(sg_index: int, running: tuple[int, ...]) -> None:
        sg = model.subgraphs[sg_index]
        rows = tensor_info[sg_index]
        for i in sg.inputs:
            first(rows[i], scope[0])
            rows[i][2] = scope[0]
        for op in sg.operators:
            scope[0] += 1
            for i in op.outputs:
                first(rows[i], scope[0])
            start = scope[0]
            for sub in called_subgraphs(model, sg_index, op, running):
                scope[0] += 1
                mark(sub, (*running, sub))
            for i in op.inputs:
                if i >= 0:
                    rows[i][2] = scope[0]
            for i in op.outputs:
                rows[i][2] = scope[0]
            for row in scratch_rows.get((sg_index, op.index), ()):
                first(row, start)
                row[2] = scope[0]
        for i in sg.outputs:
            first(rows[i], scope[0])
            rows[i][2] = scope[0]

    mark(0, (0,))
    out = []
    for s, rows in enumerate(tensor_info):
        for t, (nbytes, f, last, needs, off) in enumerate(rows):
            if needs:
                out.append((s, t, -1, nbytes, f, last, off))
    for (s, op), rows in scratch_rows.items():
        for nbytes, f, last in rows:
            out.append((s, -1, op, nbytes, f, last, ONLINE))
    return out


def greedy_offsets(sizes, firsts, lasts, offline) -> list[int]:
    """GreedyMemoryPlanner::CalculateOffsetsIfNeeded: the offset of each buffer."""
    n = len(sizes)
    if n == 0:
        return []
    head = [i for i in range(n) if offline[i] != ONLINE]
    tail = [i for i in reversed(range(n)) if offline[i] == ONLINE]
    # TFLM's bubble sort only swaps strictly smaller values forward: stable, descending
    tail.sort(key=lambda i: -sizes[i])
    ids = head + tail
    offsets = [-1] * n
    placed: list[int] = []  # buffer ids ordered by offset (ties: earlier placed first)
    for i in ids:
        if offline[i] != ONLINE:
            offset = offline[i]
        else:
            offset = 0
            for j in placed:  # walk the placed buffers that overlap i in time
                if firsts[j] > lasts[i] or firsts[i] > lasts[j]:
                    continue
                if offsets[j] - offset >= sizes[i]:
                    break
                offset = max(offset, offsets[j] + sizes[j])
        offsets[i] = offset
        pos = len(placed)
        for p, j in enumerate(placed):
            if offsets[j] > offset:
                pos = p
                break
        if not placed or offsets[placed[0]] > offset:
            pos = 0
        placed.insert(pos, i)
    return offsets


def plan(model, scratch: dict[tuple[int, int], list[int]] | None = None
         ) -> tuple[PlannedBuffer, ...]:
    """TFLM's memory plan of ``model`` (with the scratch buffers each op requests)."""
    rows = lifetimes(model, scratch or {})
    sizes = [align_up(r[3]) for r in rows]
    offsets = greedy_offsets(sizes, [r[4] for r in rows], [r[5] for r in rows],
                             [r[6] for r in rows])
    return tuple(PlannedBuffer(s, t, op, size, f, last, offset, off != ONLINE)
                 for (s, t, op, _, f, last, off), size, offset in zip(rows, sizes, offsets))


def peak(buffers) -> int:
    """GetMaximumMemorySize: the end of the highest buffer."""
    return max((b.offset + b.size for b in buffers), default=0)
