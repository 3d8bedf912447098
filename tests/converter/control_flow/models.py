"""The cf_* graphs (models/builders/cf_models.py), each frozen with v1 frames (Enter / Merge /
Switch / ...) and functionally (StatelessWhile / If): converted and run in LiteRT against
TensorFlow's outputs, in LiteRT and in edgelite's interpreter, with the exact structure of the
result."""

from pathlib import Path

import numpy as np
import edgelite
from edgelite.converter import convert_detailed
from edgelite.converter.ir import all_graphs
from tests.support import edgelite_interpreter, invoke, litert_interpreter

DATA = Path(__file__).resolve().parent.parent / "data" / "control_flow"
V1_OPS = {"Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond"}

# model -> (subgraphs, op counts over all graphs that matter)
STRUCTURE = {
    "cf_counter": (3, {"WHILE": 1, "LESS": 1, "MUL": 1}),
    "cf_rnn": (3, {"WHILE": 1, "FULLY_CONNECTED": 1, "TANH": 1}),
    "cf_nested": (5, {"WHILE": 2, "LESS": 2}),
    "cf_cond": (3, {"IF": 1, "GREATER": 1}),
    "cf_loop_cond": (5, {"WHILE": 1, "IF": 1}),
    "cf_tf1_cond": (3, {"IF": 1, "RELU": 1, "LOGISTIC": 1}),
    "cf_call": (1, {"FULLY_CONNECTED": 2}),
}
FILES = [f"{m}{s}" for m in STRUCTURE for s in ("", ".functional")
         if (DATA / f"{m}{s}.pb").exists()]


def run(model: bytes, feeds: dict, runtime: str = "litert") -> dict[str, np.ndarray]:
    """The outputs by name, run in LiteRT or ("edgelite") in edgelite's interpreter."""
    interp = (edgelite_interpreter(model) if runtime == "edgelite"
              else litert_interpreter(model, "default"))
    outputs = invoke(interp, feeds)
    return {d["name"]: out for d, out in zip(interp.get_output_details(), outputs)}


def converts_and_matches_tensorflow(name):
    gold = np.load(DATA / f"{name}.golden.npz")
    feeds = {k[3:]: gold[k] for k in gold.files if k.startswith("in:")}
    result = convert_detailed(str(DATA / f"{name}.pb"))
    for runtime in ("litert", "edgelite"):
        got = run(result.model, feeds, runtime)
        for key in (k for k in gold.files if k.startswith("out:")):
            ref = gold[key]
            err = np.max(np.abs(got[key[4:]].astype(np.float64) - ref))
            assert err <= 1e-4 * np.max(np.abs(ref)), (runtime, key, err)
    graphs = all_graphs(result.graph)
    n_sub, counts = STRUCTURE[name.split(".")[0]]
    assert len(graphs) == n_sub
    total: dict[str, int] = {}
    for g in graphs:
        for op, k in g.op_counts().items():
            total[op] = total.get(op, 0) + k
    assert {op: total.get(op, 0) for op in counts} == counts


def no_v1_control_flow_is_left(name):
    report = edgelite.converter.check(str(DATA / f"{name}.pb"))
    assert report.ok and not V1_OPS & set(report.ops)
