"""What the issue-16 builders share ("beyond CNNs": transformers, detection heads, sparse and
partitioned embeddings, the misc ops): `finish_beyond` writes one model's files and records
what TensorFlow's own converter does with it (dev-only; needs TensorFlow).

On top of real_world.finish (frozen <name>.pb, <name>.golden.npz, TF's float <name>.tf.tflite
and <name>.tf_ops.json) it writes

  <name>.calib.npz     calibration inputs, one array per input node (first axis = samples)

and adds to <name>.tf_ops.json

  "family"             transformer | detection | embedding | segmentation | misc (tests/models/test_beyond_cnn.py
                       runs every model that has one)
  "tf_flex"            where TF's converter refuses the graph with builtins only: the op list of
                       its SELECT_TF_OPS conversion (Flex ops named "Flex<Op>"), or its error
  "tf_int8"            TF's int8 conversion (Optimize.DEFAULT + representative_dataset = the
                       calibration inputs in order, float input / output, builtins with float
                       fallback): its op list and the SQNR (dB) of each float output against
                       TF's float golden outputs on the golden inputs -- in LiteRT's builtin
                       kernels without delegate (`sqnr_db`), and per kernel set as the tests
                       run edgelite's file (`sqnr_db_by_runtime`: reference = BUILTIN_REF,
                       default = AUTO, XNNPACK included); or its error.
"""

from __future__ import annotations

import json

from .real_world import Built, Spec, finish  # first: sets TF_USE_LEGACY_KERAS
from .common import MODELS_DIR, litert_run, np, tf, v1_converter, write_json, write_npz

FAMILIES = ("transformer", "detection", "embedding", "segmentation", "misc", "audio")


def sqnr_db(ref: np.ndarray, test: np.ndarray) -> float:
    """10 log10(sum ref^2 / sum (ref - test)^2) over every element (float64); inf if equal."""
    ref, test = np.asarray(ref, np.float64), np.asarray(test, np.float64)
    noise = float(np.sum((ref - test) ** 2))
    signal = float(np.sum(ref ** 2))
    return float("inf") if noise == 0 else round(10 * np.log10(signal / noise), 3)


def _shapes(built: Built) -> dict:
    return {k: [1] + list(v[0][1:]) for k, v in built.inputs.items()}


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:2000]


def _flex(pb_path, built: Built) -> dict:
    """TF's conversion with Flex allowed: which ops it needs from TensorFlow."""
    conv = v1_converter(pb_path, _shapes(built), built.outputs)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    try:
        model = conv.convert()
    except Exception as exc:  # record it, keep the model
        return {"error": _error(exc)}
    ops = _op_names(model)
    return {"ops": ops, "flex_ops": sorted({o for o in ops if o.startswith("Flex")})}


def _op_names(model: bytes) -> list[str]:
    """Operator names in execution order: builtins by name, custom ops by custom code."""
    from edgelite.interpreter.loader.model import load_model

    return [op.custom_code or op.name for op in load_model(model).subgraphs[0].operators]


def _tf_int8(pb_path, built: Built, calib: dict, golden_out: dict) -> dict:
    conv = v1_converter(pb_path, _shapes(built), built.outputs)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    n = len(next(iter(calib.values())))

    def representative_dataset():
        for i in range(n):
            yield [calib[k][i:i + 1] for k in built.inputs]

    conv.representative_dataset = representative_dataset
    feeds = {k: np.ascontiguousarray(v) for k, v in built.golden.items()}
    try:
        model = conv.convert()
        out, ops, _ = litert_run(model, feeds, built.outputs)
    except Exception as exc:  # record it, keep the model
        return {"error": _error(exc)}
    floats = [o for o in built.outputs if np.issubdtype(golden_out[o].dtype, np.floating)]
    by_runtime = {}
    for runtime, resolver in (("reference", "ref"), ("default", "default")):
        try:
            got, _, _ = litert_run(model, feeds, built.outputs, resolver)
        except Exception as exc:  # e.g. the reference resolver lacks an op version
            by_runtime[runtime] = {"error": _error(exc)}
            continue
        by_runtime[runtime] = {o: sqnr_db(golden_out[o], got[o]) for o in floats}
    return {"ops": ops, "n_ops": len(ops),
            "sqnr_db": {o: sqnr_db(golden_out[o], out[o]) for o in floats},
            "sqnr_db_by_runtime": by_runtime, "size": len(model)}


def finish_beyond(spec: Spec, built: Built, family: str, calib: dict) -> dict:
    """real_world.finish, then the calibration file and TF's Flex / int8 conversions."""
    assert family in FAMILIES, family
    result = finish(spec, built)
    name = spec.name
    calib = {k: np.ascontiguousarray(np.asarray(calib[k]).astype(built.inputs[k][1]))
             for k in built.inputs}
    write_npz(MODELS_DIR / f"{name}.calib.npz", **calib)
    info_path = MODELS_DIR / f"{name}.tf_ops.json"
    info = json.loads(info_path.read_text())
    info["family"] = family
    pb_path = MODELS_DIR / f"{name}.pb"
    if info.get("ops") is None:
        info["tf_flex"] = _flex(pb_path, built)
        print(f"  TF with Flex: {info['tf_flex']}")
    golden = np.load(MODELS_DIR / f"{name}.golden.npz")
    outs = ({built.outputs[0]: golden["output"]} if "output" in golden.files
            else {o: golden[f"outputs/{o}"] for o in built.outputs})
    info["tf_int8"] = _tf_int8(pb_path, built, calib, outs)
    print(f"  TF int8: { {k: v for k, v in info['tf_int8'].items() if k != 'ops'} }")
    write_json(info_path, info)
    return result


def build_all(models: dict, family: str, seed: int, names=None) -> int:
    """A builder's main: each model of `models` (name -> build(rng) -> (Built, calib)), or only
    `names`, finished with its own RandomState(seed + its position)."""
    for i, (name, build) in enumerate(models.items()):
        if names and name not in names:
            continue
        print(name)
        built, calib = build(np.random.RandomState(seed + i))
        finish_beyond(Spec(name, None), built, family, calib)
    return 0
