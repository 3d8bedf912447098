"""Fuzz worker process: runs cases one by one under an address-space limit.

    python tests/fuzz/worker.py MEM_BYTES < cases.jsonl

Reads one JSON case per line ({"kind": ..., "seed": ...}); for each prints `start LABEL`, runs
it, then prints `done LABEL {json result}` (flushing both), so the parent knows which case a
hang or a signal death belongs to. Results: {"status": "ok"} (accepted), {"status":
"error", "type": ...} (an EdgeliteError: the wanted outcome for a bad file) or {"status":
"fail", "exc": ..., "msg": ..., "where": ...} (any other exception: a finding).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def limit_memory(mem_bytes: int) -> None:
    """RLIMIT_AS: an allocation beyond it fails (MemoryError) instead of swapping the host."""
    resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))


def run_tflite(data: bytes) -> None:
    import numpy as np

    from edgelite.interpreter import Interpreter
    interp = Interpreter(model_content=data)
    interp.allocate_tensors()
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    interp.invoke()
    for d in interp.get_output_details():
        interp.get_tensor(d["index"])


def run_graphdef(data: bytes) -> None:
    """check, then convert; a model that converts is also run (load, allocate, invoke)."""
    from edgelite import converter
    from edgelite.errors import EdgeliteError
    try:
        converter.check(data)
    except EdgeliteError:
        pass
    run_tflite(converter.convert(data))


def where(exc: BaseException) -> str:
    """file:line in function of the innermost frame (inside edgelite if possible)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/tests/fuzz/" not in f.filename] or frames
    f = ours[-1]
    path = Path(f.filename)
    try:
        path = path.resolve().relative_to(ROOT)
    except ValueError:
        pass
    return f"{path}:{f.lineno} in {f.name}"


def misbehave(seed: int) -> None:
    """Kind "selftest": what the harness must catch, one behaviour per seed."""
    if seed == 1:
        raise ValueError("a raw exception")
    if seed == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    if seed == 3:
        time.sleep(3600)
    if seed == 4:
        bytearray(64 << 30)  # beyond any RLIMIT_AS the harness sets: MemoryError


def run_case(kind: str, seed: int) -> dict:
    from edgelite.errors import EdgeliteError
    from tests.fuzz.mutate import Case, build
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy overflow warnings are no finding
            if kind == "selftest":
                misbehave(seed)
            else:
                data, _ = build(Case(kind, seed))
                (run_tflite if kind == "tflite" else run_graphdef)(data)
        return {"status": "ok"}
    except EdgeliteError as e:
        result = {"status": "error", "type": type(e).__name__}
        cause = e.__cause__
        if cause is not None and not isinstance(cause, EdgeliteError):
            # Turned into a clean error by a catch-all (the lowering's error boundary, the
            # .tflite reader's): fine for the user, but a check is missing before it.
            result["net"] = f"{type(cause).__name__} at {where(cause)}"
        return result
    except Exception as e:  # noqa: BLE001 -- every other exception is what we look for
        return {"status": "fail", "exc": type(e).__name__, "msg": str(e)[:300],
                "where": where(e)}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    limit_memory(int(sys.argv[1]))
    import edgelite.converter  # noqa: F401 -- imported once, before the first case's clock
    for line in sys.stdin:
        case = json.loads(line)
        label = f"{case['kind']}:{case['seed']}"
        print(f"start {label}", flush=True)
        result = run_case(case["kind"], case["seed"])
        print(f"done {label} {json.dumps(result)}", flush=True)
    os._exit(0)  # skip interpreter teardown: nothing to flush, and it is faster


if __name__ == "__main__":
    main()
