"""The by-sample plan of an allocation (Interpreter(split_batch=True), batch_split.py):
allocate one sample's program, check every tensor scales with the batch, and size the
chunks the workers run."""

from __future__ import annotations

from dataclasses import replace

from .allocation import Allocation, allocate
from .batch_split import BatchSplit, chunk_size, same_shapes, unsplittable
from edgelite.errors import EdgeliteError, ShapeError
from .settings import Settings


def plan_split(alloc: Allocation, sg, input_shapes: dict, keep_alive: set[int],
               settings: Settings) -> BatchSplit | None:
    """The by-sample plan for ``alloc`` (subgraph ``sg`` at ``input_shapes``), or None."""
    num_threads = settings.threads
    one_sample = replace(settings, threads=1, preserve_all_tensors=False)  # per worker
    leading = {s[0] if s else 0 for s in input_shapes.values()}
    batch = leading.pop() if len(leading) == 1 else 0
    if batch < 2 or unsplittable(sg, alloc.shapes, alloc.arrays, alloc.constants, batch):
        return None

    def shapes_at(n: int) -> dict:
        return {t: (n,) + tuple(s[1:]) for t, s in input_shapes.items()}

    def allocate_at(n: int) -> Allocation:
        return allocate(sg, shapes_at(n), one_sample, keep_alive)

    spare: list[Allocation] = []    # the size probe below, handed to the first worker

    def make(n: int) -> tuple:
        part = spare.pop() if n == 1 and spare else allocate_at(n)
        if not same_shapes(alloc.shapes, part.shapes, alloc.constants, batch, n):
            raise ShapeError("a tensor does not scale with the batch")
        return part.steps, part.arrays

    try:
        spare.append(allocate_at(1))
        chunk = chunk_size(batch, num_threads, spare[0].arena_size)
        if not chunk:
            return None
        outputs = sorted(set(sg.outputs) | (keep_alive - set(sg.inputs)))
        return BatchSplit(make, list(sg.inputs), outputs, alloc.arrays, batch, num_threads,
                          chunk)
    except EdgeliteError:
        return None  # e.g. a constant that only broadcasts against the whole batch
