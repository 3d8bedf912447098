"""Batches split by sample over the Interpreter's threads.

A batch of N samples through a network whose ops never mix samples can run as
independent chunks: each of ``num_threads`` workers owns a private interpreter of the
same model (batch = ``chunk``, its own arena) and runs its share of the samples through
the WHOLE network, copying inputs in and outputs out. Two reasons this beats splitting
each op's rows (parallel.py) for a batch:

* one hand-off per chunk instead of one per big op, and no thread waits at every op;
* a chunk's activations stay in cache from op to op, where a batch of 32 MobileNetV2
  images streams ~150 MB tensors through memory at every op.

``chunk`` is as many samples as fit ``CHUNK_BYTES`` of arena (at least 1): MobileNetV2
(6.6 MB per sample) runs one sample at a time per worker. Small networks (under
``MIN_SAMPLE_BYTES`` of arena per sample) stay batched: their ops are a few microseconds
of numpy calls that hold the GIL, so two workers do not overlap -- measured on the digits
CNN, batch 32 int8: 0.024 ms per sample batched, 0.036 split.

Results are those of the same interpreter at batch ``chunk`` (every op computes each
sample on its own). Only graphs that provably keep samples apart are split
(``unsplittable`` says why not); anything else runs batched as before.
Intermediate tensors of the batched interpreter are not written in this mode, so
``preserve_all_tensors=True`` turns it off.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .kernels import OPS
from .loader.model import Subgraph
from edgelite.names import quoted
from .runloop import quiet, run

CHUNK_BYTES = 4 << 20
MIN_SAMPLE_BYTES = 128 << 10

# Which ops keep samples apart is a fact of each op's record (OpDef.per_sample: every
# sample, index along dim 0, computed from that sample alone as long as every non-constant
# tensor keeps dim 0 == N, checked per tensor; OpDef.reduction: so do reductions whose
# constant axes leave out dim 0; OpDef.last_axis: ops along the last axis need rank >= 2).


def unsplittable(subgraph: Subgraph, shapes, arrays, constants, batch: int) -> str | None:
    """Why this allocation cannot be split by sample (None: it can). The private
    interpreters are checked too (``same_shapes``): a constant that only broadcasts at
    batch N fails there."""
    tensors = subgraph.tensors
    for op in subgraph.operators:
        record = OPS.get(op.name)
        if record is None or not (record.per_sample or record.reduction):
            return f"{op.name} is not known to keep samples apart"
        for t in [i for i in op.inputs if i >= 0] + list(op.outputs):
            shape = shapes[t]
            if t not in constants and (not shape or shape[0] != batch):
                return (f"tensor {quoted(tensors[t].name)} {list(shape)} does not lead with "
                        "the batch")
        if record.last_axis and len(shapes[op.inputs[0]]) < 2:
            return f"{op.name} {quoted(tensors[op.outputs[0]].name)} works along the batch axis"
        if record.reduction:
            rank = len(shapes[op.inputs[0]])
            axes = arrays[op.inputs[1]] if op.inputs[1] in constants else None
            if axes is None or 0 in {int(a) % rank for a in np.reshape(axes, -1)}:
                return f"{op.name} {quoted(tensors[op.outputs[0]].name)} may reduce over the batch"
    return None


def same_shapes(shapes, chunk_shapes, constants, batch: int, chunk: int) -> bool:
    """Every non-constant tensor of the chunk interpreter is the batched one's with
    ``chunk`` samples."""
    return all(t in constants or s is None or c == (chunk,) + tuple(s[1:])
               for t, (s, c) in enumerate(zip(shapes, chunk_shapes)) if s and s[0] == batch)


def chunk_size(batch: int, threads: int, arena_bytes_per_sample: int) -> int:
    """Samples per private invoke; 0: do not split (a small network)."""
    if arena_bytes_per_sample < MIN_SAMPLE_BYTES:
        return 0
    share = -(-batch // threads)
    return max(1, min(share, CHUNK_BYTES // max(1, arena_bytes_per_sample)))


class BatchSplit:
    """The workers' private interpreters and the copy-in / run / copy-out loop."""

    def __init__(self, make: Callable[[int], tuple], inputs: list[int], outputs: list[int],
                 arrays, batch: int, threads: int, chunk: int) -> None:
        """``make(n)``: a new private allocation at batch n, as (steps, arrays); it raises
        an EdgeliteError when the graph cannot be split after all."""
        self.inputs, self.outputs = inputs, outputs
        self.arrays = arrays                    # the batched interpreter's I/O arrays
        bounds = [batch * i // threads for i in range(threads + 1)]
        self.ranges = [(bounds[i], bounds[i + 1]) for i in range(threads)
                       if bounds[i + 1] > bounds[i]]
        self.chunk = chunk
        self.workers: list[dict[int, tuple]] = []
        for start, stop in self.ranges:         # every size a worker will need, now
            sizes = {min(chunk, stop - lo) for lo in range(start, stop, chunk)}
            self.workers.append({n: make(n) for n in sorted(sizes)})

    def run_range(self, worker: int, start: int, stop: int) -> None:
        cache = self.workers[worker]
        with quiet():  # (numpy's error state is per thread)
            for lo in range(start, stop, self.chunk):
                hi = min(lo + self.chunk, stop)
                steps, arrays = cache[hi - lo]
                for t in self.inputs:
                    np.copyto(arrays[t], self.arrays[t][lo:hi])
                run(steps)
                for t in self.outputs:
                    np.copyto(self.arrays[t][lo:hi], arrays[t])

    def tasks(self) -> list[tuple]:
        return [(w, a, b) for w, (a, b) in enumerate(self.ranges)]
