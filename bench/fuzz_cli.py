#!/usr/bin/env python
"""Mutation fuzzing of the `edgelite` command through a fork server (a benchmark-style
script, not a test).

    python bench/fuzz_cli.py --cases 3000 --kind tflite        # .tflite models with loops
    python bench/fuzz_cli.py --cases 3000 --kind pb            # frozen GraphDefs
    python bench/fuzz_cli.py --cases 3000 --kind savedmodel    # saved_model.pb + variables
    python bench/fuzz_cli.py --cases 3000 --kind checkpoint    # .meta + .index + .data
    python bench/fuzz_cli.py --kind pb --seed 17 --cases 1 --show   # one case, in-process

The parent imports edgelite (and numpy, protobuf) once, builds each mutant into a fresh temp
folder, then forks a child per case that runs the command line in process -- `bench M
--runs 1 --warmup 0 --timeout T` for a .tflite, `convert ... -o out.tflite` for the others --
under an address-space limit (RLIMIT_AS) and a wall-clock limit (the parent SIGKILLs a child
past it). No interpreter start-up per case: thousands of mutants run in minutes.

Outcome of a case, by how the child ended:
  good     exit 0 (accepted), 1 (one `error:` line), 124 (its own --timeout: a loop that never
           ends, stopped cleanly)
  bug      exit 3 (`error: internal error`: an exception edgelite did not expect), any other
           status, "Traceback" on stderr, a failure without its `error:` line, a signal
           (crash) or the wall-clock limit (hang)
Prints counts per kind and each distinct bug with the seeds that hit it and a reproducer;
exits 1 if there is any bug. tests/bench/test_fuzz_cli.py runs a few cases of each kind in CI.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: children are forked
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.mutate import MODELS, Case, _mutate_graphdef, _mutate_tflite  # noqa: E402

KINDS = ("tflite", "pb", "savedmodel", "checkpoint")
GOOD_STATUS = {0: "ok", 1: "error", 124: "timeout (clean)"}
MAX_SOURCE_BYTES = 400_000


@lru_cache(maxsize=None)
def sources(kind: str) -> tuple[Path, ...]:
    """The committed files (or folders) a kind's mutants start from."""
    if kind == "tflite":  # models with WHILE loops: a start value mutated runs forever
        from edgelite.interpreter import load_model
        found = []
        for p in sorted(MODELS.glob("*.tflite")):
            if p.stat().st_size > 100_000:
                continue
            try:
                m = load_model(p.read_bytes())
            except Exception:  # noqa: BLE001 -- a sample the reader refuses: not a source
                continue
            if any(op.name == "WHILE" for sg in m.subgraphs for op in sg.operators):
                found.append(p)
        return tuple(found)
    if kind == "pb":
        return tuple(p for p in sorted(MODELS.glob("*.pb")) if p.stat().st_size <= 100_000)
    if kind == "savedmodel":
        return tuple(d for d in sorted((MODELS / "savedmodel").glob("sm_*")) if d.is_dir()
                     and sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
                     <= MAX_SOURCE_BYTES)
    return (MODELS / "savedmodel" / "ckpt_tf1" / "model.ckpt.meta",)


def prepare(case: Case, folder: Path) -> tuple[list[str], list[str]]:
    """Write the case's mutant into ``folder``: (the command line, notes on the mutations)."""
    rng = random.Random(case.label)
    source = rng.choice(sources(case.kind))
    notes = [source.name]
    out = str(folder / "out.tflite")
    if case.kind == "tflite":
        path = folder / "m.tflite"
        path.write_bytes(_mutate_tflite(rng, source.read_bytes(), notes))
        return ["bench", str(path), "--runs", "1", "--warmup", "0", "--timeout", "5"], notes
    if case.kind == "pb":
        path = folder / "g.pb"
        data = source.read_bytes()
        structured = rng.random() < 0.7
        path.write_bytes(_mutate_graphdef(rng, data, notes) if structured
                         else _mutate_tflite(rng, data, notes))
        return ["convert", str(path), "-o", out], notes
    if case.kind == "savedmodel":
        target = folder / "sm"
        shutil.copytree(source, target)
        _mutate_one_file(rng, target, notes)
        return ["convert", str(target), "-o", out], notes
    for f in source.parent.iterdir():
        shutil.copy(f, folder / f.name)
    _mutate_one_file(rng, folder, notes)
    return ["convert", str(folder / "model.ckpt.meta"), "--checkpoint",
            str(folder / "model.ckpt"), "--outputs", "probs", "-o", out], notes


def _mutate_one_file(rng: random.Random, folder: Path, notes: list[str]) -> None:
    """Byte mutants of one file of a SavedModel / checkpoint: its graph, index or data."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    path = rng.choice(files)
    notes.append(str(path.relative_to(folder)))
    path.write_bytes(_mutate_tflite(rng, path.read_bytes(), notes))


def run_in_child(args: list[str], err_path: str, mem_bytes: int) -> None:
    """The child's side of a fork: the command in process, stderr to a file; never returns."""
    code = 99
    try:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        # the Python streams too: a caller (pytest) may have replaced them with its own
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from edgelite.cli.main import main
        main(args, prog_name="edgelite")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 -- escaped click's handling: a bug, shown
        import traceback
        traceback.print_exc()
        code = 98
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


@dataclass
class Outcome:
    case: Case
    status: str       # ok / error / timeout (clean) / bug
    what: str = ""    # for a bug: what identifies it


def classify(case: Case, wait_status: int | None, stderr: str) -> Outcome:
    if wait_status is None:
        return Outcome(case, "bug", "hang: past the wall-clock limit")
    if os.WIFSIGNALED(wait_status):
        name = signal.Signals(os.WTERMSIG(wait_status)).name
        return Outcome(case, "bug", f"crash: signal {name}")
    code = os.WEXITSTATUS(wait_status)
    lines = stderr.splitlines()
    if "Traceback" in stderr:
        last = lines[-1] if lines else ""
        return Outcome(case, "bug", f"traceback: {last[:160]}")
    if code == 3:
        return Outcome(case, "bug", "internal error: " + (lines[-1][:200] if lines else ""))
    if code not in GOOD_STATUS:
        return Outcome(case, "bug", f"exit {code}: " + (lines[-1][:160] if lines else ""))
    if code and not (lines and lines[0].startswith("error: ")):  # (a table may follow)
        return Outcome(case, "bug", f"exit {code} without an error line: {lines[:2]}")
    return Outcome(case, GOOD_STATUS[code])


def run_cases(cases: list[Case], jobs: int, wall: float, mem_bytes: int) -> list[Outcome]:
    """Fork one child per case, at most ``jobs`` at a time."""
    from edgelite.cli.main import main  # noqa: F401 -- imported once, in the parent
    import edgelite.converter  # noqa: F401
    running: dict[int, tuple[Case, Path, float]] = {}
    outcomes: list[Outcome] = []
    pending = list(reversed(cases))
    while pending or running:
        while pending and len(running) < jobs:
            case = pending.pop()
            folder = Path(tempfile.mkdtemp(prefix="edgelite-fuzz-"))
            args, _ = prepare(case, folder)
            pid = os.fork()
            if pid == 0:
                run_in_child(args, str(folder / "stderr.txt"), mem_bytes)
            running[pid] = (case, folder, time.monotonic())
        time.sleep(0.002)
        for pid, (case, folder, start) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                if time.monotonic() - start < wall:
                    continue
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status = None
            err = folder / "stderr.txt"
            text = err.read_text(errors="replace") if err.exists() else ""
            outcomes.append(classify(case, status, text))
            shutil.rmtree(folder, ignore_errors=True)
            del running[pid]
    return outcomes


def summary(outcomes: list[Outcome], seconds: float) -> str:
    lines = [f"{len(outcomes)} cases in {seconds:.0f} s"]
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        by_kind[o.case.kind][o.status] += 1
    for kind, counts in by_kind.items():
        shown = ", ".join(f"{counts[s]} {s}" for s in (*GOOD_STATUS.values(), "bug"))
        lines.append(f"  {kind}: {sum(counts.values())} cases: {shown}")
    bugs: dict[str, list[Case]] = defaultdict(list)
    for o in outcomes:
        if o.status == "bug":
            bugs[o.what].append(o.case)
    for what, cases in sorted(bugs.items(), key=lambda kv: -len(kv[1])):
        c = cases[0]
        lines.append(f"BUG x{len(cases)}: {what}\n    seeds {[x.seed for x in cases[:10]]}; "
                     f"python bench/fuzz_cli.py --kind {c.kind} --seed {c.seed} --cases 1 "
                     "--show")
    return "\n".join(lines)


def show(case: Case) -> int:
    """Print the case's command line and mutations, then run it here with a traceback."""
    os.environ["EDGELITE_DEBUG"] = "1"
    folder = Path(tempfile.mkdtemp(prefix="edgelite-fuzz-"))
    args, notes = prepare(case, folder)
    print(f"{case.label}: {'; '.join(notes)}\nedgelite {' '.join(args)}", flush=True)
    from edgelite.cli.main import main
    try:
        main(args, prog_name="edgelite")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kind", choices=(*KINDS, "all"), default="all")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--wall", type=float, default=60.0, help="seconds per case, then SIGKILL")
    p.add_argument("--mem-gib", type=float, default=3.0, help="RLIMIT_AS per case")
    p.add_argument("--show", action="store_true", help="run the cases in this process")
    args = p.parse_args()
    kinds = KINDS if args.kind == "all" else (args.kind,)
    cases = [Case(kinds[i % len(kinds)], args.seed + i // len(kinds))
             for i in range(args.cases)]
    if args.show:
        return max((show(c) for c in cases), default=0)
    start = time.perf_counter()
    outcomes = run_cases(cases, args.jobs, args.wall, int(args.mem_gib * (1 << 30)))
    print(summary(outcomes, time.perf_counter() - start))
    return 0 if all(o.status != "bug" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
