"""models/build_rnn.py: build, check and write the issue-13 models and models/rnn_models.json.

Per model <name> (builders/rnn.py): <name>.pb (default lowering: TF1 control-flow frames),
<name>.functional.pb (lower_control_flow=False) where the model has a loop or a cond,
<name>.golden.npz (inputs per input node name, TF's output "output", LiteRT's outputs of each
TF .tflite: "litert_<suffix>" raw, "litert_<suffix>_x" the input as fed), and TF's .tflite
files (builders/rnn_tflite.py).  The streaming keyword spotter is builders/rnn_kws.py.

Checks (the build stops if one fails): both lowerings give the same outputs as the live
Keras model / each other (rel. 1e-5), LiteRT on TF's float files matches TF within 1e-4 x
max|ref|, and every model has the ops of interest it was built for.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .rnn import BUILDERS, OUTPUT, Frozen, graph_facts, run_graph  # first: TF setup
from .common import MODELS_DIR, as_float32, np, write_graph, write_json, write_npz
from .rnn_tflite import (FLOAT_REL_TOL, edgelite_ops, keep, litert_outputs, rel_err, sqnr_db,
                         tf_conversions)
from .rnn_kws import build_kws

MANIFEST = MODELS_DIR / "rnn_models.json"
SAME_REL_TOL = 1e-5  # the two lowerings and the live Keras model agree to float rounding

# ops each model must show somewhere (graph or function library), per GraphDef suffix
EXPECT = {
    "rnn_tf1_dynamic_rnn": {"": ("Enter", "Exit", "LoopCond", "TensorArrayV3",
                                 "TensorArrayReadV3", "TensorArrayWriteV3")},
    "rnn_tf1_cond": {"": ("Switch", "Merge")},
    "rnn_cond": {".functional": ("StatelessIf",)},
    "rnn_partitioned_call": {"": ("PartitionedCall",)},
    "rnn_grouped_conv": {"": ("PartitionedCall",)},
    "rnn_while_loop": {"": ("Enter", "Exit", "LoopCond"), ".functional": ("StatelessWhile",)},
}
LOOPED = ("rnn_lstm", "rnn_gru", "rnn_convlstm", "rnn_convlstm_seq", "rnn_bilstm",
          "rnn_simple_rnn")
NO_LOOP = ("rnn_lstm_unrolled", "rnn_tf1_static_rnn")


def _check_ops(name: str, suffix: str, facts: dict) -> None:
    total = facts["ops_of_interest"]["total"]
    expect = EXPECT.get(name, {}).get(suffix, ())
    if name in LOOPED:
        expect = ("Enter", "Exit", "LoopCond") if suffix == "" else ()
        if suffix == ".functional":
            assert total.get("While", 0) + total.get("StatelessWhile", 0) >= 1, (name, total)
    if name in NO_LOOP:
        assert not total, (name, total)
    missing = [op for op in expect if not total.get(op)]
    assert not missing, f"{name}{suffix}.pb lacks {missing}: {total}"


def build_one(frozen: Frozen) -> dict:
    name = frozen.name
    print(f"{name}: {frozen.description}")
    ref = None
    entry: dict = {"description": frozen.description,
                   "inputs": [{"name": k, "shape": list(s), "dtype": d}
                              for k, (s, d) in frozen.inputs.items()],
                   "outputs": list(frozen.outputs), "golden": f"{name}.golden.npz",
                   "golden_samples": len(next(iter(frozen.golden.values()))), "graphs": {}}
    for suffix, gd in frozen.graphs.items():
        fname = f"{name}{suffix}.pb"
        write_graph(gd, fname, as_text=False)
        y = run_graph(gd, frozen.golden)[OUTPUT]
        if ref is None:
            ref = y
        assert rel_err(y, ref) <= SAME_REL_TOL, (fname, rel_err(y, ref))
        facts = graph_facts(gd)
        _check_ops(name, suffix, facts)
        entry["graphs"][fname] = facts
        print(f"  {fname}: {facts['nodes']} nodes, {len(facts['functions'])} functions, "
              f"{facts['frames']} frames, {facts['ops_of_interest']['total']}")
    if "keras_output" in frozen.notes:
        assert rel_err(frozen.notes["keras_output"], ref) <= SAME_REL_TOL, name
    entry["output_shape"] = [1, *ref.shape[1:]]
    arrays = {**frozen.golden, OUTPUT: ref.astype(np.float32)}
    entry["tflite"], entry["tf_failures"] = {}, {}
    for suffix, (data, why) in tf_conversions(frozen).items():
        fname = f"{name}.{suffix}.tflite"
        if not keep(entry, fname, data, why):
            continue
        run = litert_outputs(data, frozen.golden)
        arrays[f"litert_{suffix}"] = run["raw"]
        if run["fed"].dtype != next(iter(frozen.golden.values())).dtype:
            arrays[f"litert_{suffix}_x"] = run["fed"]
        info = {"source": _source(frozen, suffix), "io": run["io"],
                "repeat_same_output": run["repeat_same"]}
        if run["raw"].dtype == np.float32 and "int8" not in suffix:
            err = rel_err(run["float"], ref)
            assert err <= FLOAT_REL_TOL, f"{fname}: LiteRT vs TF {err:.2e}"
            info["litert_rel_err"] = as_float32(err)
        else:
            info["sqnr_db"] = round(sqnr_db(run["float"], ref), 2)
        entry["tflite"][fname] = info
        print(f"  {fname}: {len(data)} bytes, {info.get('litert_rel_err', info.get('sqnr_db'))}"
              f"{'' if run['repeat_same'] else ', STATE PERSISTS across invokes'}")
    write_npz(MODELS_DIR / f"{name}.golden.npz", **arrays)
    return entry


def _source(frozen: Frozen, suffix: str) -> str:
    if suffix == "tf_frozen":
        return f"tf.compat.v1.lite.TFLiteConverter.from_frozen_graph({frozen.name}.pb)"
    how = "from_keras_model" if frozen.keras is not None else "from_concrete_functions"
    q = {"tf_float": "float", "tf_int8": "int8, float I/O", "tf_int8_io": "int8, int8 I/O"}
    return f"tf.lite.TFLiteConverter.{how}, {q[suffix]}"


def finish_manifest(models: dict) -> dict:
    """Sizes of every file, and edgelite's op list of every .tflite."""
    tflites = sorted(f for e in models.values() for f in e.get("tflite", {}))
    ops = edgelite_ops([MODELS_DIR / f for f in tflites])
    for entry in models.values():
        names = [*entry.get("graphs", {}), entry["golden"], *entry.get("tflite", {})]
        entry["files"] = {f: (MODELS_DIR / f).stat().st_size for f in names}
        for f, info in entry.get("tflite", {}).items():
            info["subgraphs"] = len(ops[f])
            info["ops"] = ops[f]
    return models


def build_in_subprocess(name: str) -> dict:
    """build_one(name) in a fresh Python: TF names nodes and functions after process-global
    uids, so a model's files depend on nothing built before it (and --only gives the same
    files as a full build)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "entry.json")
        subprocess.run([sys.executable, "-m", "builders.rnn_main", "--one", name, str(out)],
                       cwd=MODELS_DIR, check=True)
        return json.loads(out.read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="model names (default: all)")
    parser.add_argument("--one", nargs=2, metavar=("NAME", "ENTRY_JSON"),
                        help=argparse.SUPPRESS)  # build_in_subprocess' worker
    args = parser.parse_args(argv)
    if args.one:
        name, out = args.one
        entry = build_kws() if name == "kws_stream" else build_one(BUILDERS[name]())
        Path(out).write_text(json.dumps(entry))
        return 0
    old = json.loads(MANIFEST.read_text())["models"] if MANIFEST.exists() else {}
    models = dict(old) if args.only else {}
    for name in [*BUILDERS, "kws_stream"]:
        if not args.only or name in args.only:
            models[name] = build_in_subprocess(name)
    manifest = {
        "about": "issue-13 models built by models/build_rnn.py (builders/rnn*.py); sizes in "
                 "bytes; ops_of_interest counts GraphDef nodes (graph + function library); "
                 "tflite ops are edgelite's reading, per subgraph",
        "models": finish_manifest({k: models[k] for k in [*BUILDERS, "kws_stream"]
                                   if k in models}),
    }
    write_json(MANIFEST, manifest, compact=True)
    print(f"wrote {MANIFEST.relative_to(MODELS_DIR.parent)} and the files it lists "
          f"({sum(sum(e['files'].values()) for e in manifest['models'].values())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
