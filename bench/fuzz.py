#!/usr/bin/env python
"""Mutation fuzzing of edgelite's readers (a benchmark-style script, not a test).

    python bench/fuzz.py --cases 5000 --seed 0              # both kinds, 2 workers
    python bench/fuzz.py --kind graphdef --seed 123 --cases 1 --show   # one case, in-process

Byte mutants of the committed .tflite files go through Interpreter load + allocate_tensors +
invoke on zeros; structured mutants of the committed GraphDefs through converter.check and
converter.convert (and a model that converts is run the same way). Every case runs in a
worker process with a per-case time limit and an address-space limit (RLIMIT_AS); the pass
condition is success or an EdgeliteError -- any other exception (MemoryError included), a
signal death or a timeout is a finding. Prints counts, then each distinct finding with the
seeds that hit it and a one-line reproducer; exits 1 if there is any finding.
tests/fuzz/test_fuzz.py runs a few hundred of the same cases in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.mutate import KINDS, Case, build  # noqa: E402
from tests.fuzz.runner import Limits, make_cases, run_cases, summary  # noqa: E402


def show(case: Case) -> int:
    """Print the case's mutations, then run it in this process with a full traceback."""
    from tests.fuzz import worker
    data, notes = build(case)
    print(f"{case.label}: {len(data)} bytes; " + "; ".join(notes))
    try:
        (worker.run_tflite if case.kind == "tflite" else worker.run_graphdef)(data)
        print("accepted")
    except Exception as e:  # noqa: BLE001 -- shown as is
        from edgelite.errors import EdgeliteError
        if isinstance(e, EdgeliteError):
            print(f"error: {e}")
            return 0
        traceback.print_exc()
        return 1
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kind", choices=(*KINDS, "both"), default="both")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    p.add_argument("--mem-gib", type=float, default=3.0, help="RLIMIT_AS per worker")
    p.add_argument("--batch", type=int, default=40, help="cases per worker process")
    p.add_argument("--show", action="store_true",
                   help="run the cases in this process, printing mutations and tracebacks")
    args = p.parse_args()
    kinds = KINDS if args.kind == "both" else (args.kind,)
    cases = make_cases(args.seed, args.cases, kinds)
    limits = Limits(args.timeout, int(args.mem_gib * (1 << 30)), args.jobs, args.batch)
    if args.show:
        from tests.fuzz.worker import limit_memory
        limit_memory(limits.mem_bytes)  # as in the workers: a huge allocation fails here too
        return max((show(c) for c in cases), default=0)
    start = time.perf_counter()
    outcomes = run_cases(cases, limits)
    print(summary(outcomes, time.perf_counter() - start))
    return 0 if all(o.good for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
