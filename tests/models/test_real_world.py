"""Issue-3 models (models/build_real_world.py): convert, run in edgelite and LiteRT, match TF.

Small graphs are committed in models/; the Keras applications are built into models/cache/
(too big for git) and their tests are skipped where the cache is absent, e.g. in CI. Each
model's <name>.tf_ops.json (committed) holds its inputs/outputs and TF's converter op counts.
"""

import json
import warnings

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.models.test_sample_models import MODELS as SAMPLE_MODELS

SAMPLES_ON_LARGE = 2  # golden samples run per large model (each is a full 224x224 pass)


def _models():
    for path in sorted(MODELS.glob("*.tf_ops.json")):
        name = path.name[: -len(".tf_ops.json")]
        if name in SAMPLE_MODELS:
            continue  # tests/models/test_sample_models.py
        yield name


def _files(name):
    for folder in (MODELS, MODELS / "cache"):
        if (folder / f"{name}.pb").exists():
            return folder / f"{name}.pb", folder / f"{name}.golden.npz", folder == MODELS
    pytest.skip(f"{name}: not built (python models/build_real_world.py writes models/cache/)")


def _golden(npz, names, single):
    if single in npz.files:
        return {names[0]: npz[single]}
    return {n: npz[f"{single}s/{n}"] for n in names}


def _run(interp_cls, model, feeds, **kwargs):
    interp = interp_cls(model_content=model, **kwargs)
    interp.allocate_tensors()
    by_name = {d["name"]: d for d in interp.get_input_details()}
    for name, x in feeds.items():
        interp.set_tensor(by_name[name]["index"], x)
    interp.invoke()
    return {d["name"]: interp.get_tensor(d["index"]) for d in interp.get_output_details()}


def _close(actual, ref, what):
    ref = np.asarray(ref, np.float64)
    err = np.abs(np.asarray(actual, np.float64) - ref).max() if ref.size else 0.0
    assert err <= 1e-4 * max(np.abs(ref).max(), 1e-6), f"{what}: max abs error {err:.3g}"


@pytest.fixture(scope="module", params=list(_models()))
def converted(request):
    name = request.param
    meta = json.loads((MODELS / f"{name}.tf_ops.json").read_text())
    pb, golden_path, small = _files(name)
    shapes = {k: tuple(v) for k, v in meta["input_shapes"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = convert_detailed(pb, ConvertOptions(inputs=meta["inputs"],
                                                     outputs=meta["outputs"],
                                                     input_shapes=shapes))
    return name, meta, result, np.load(golden_path), small


def test_matches_tensorflow_and_litert(converted, litert):
    name, meta, result, golden, small = converted
    inputs = _golden(golden, meta["inputs"], "input")
    outputs = _golden(golden, meta["outputs"], "output")
    n = len(next(iter(inputs.values())))
    for i in range(n if small else min(n, SAMPLES_ON_LARGE)):
        feeds = {k: v[i:i + 1] for k, v in inputs.items()}
        ours = _run(Interpreter, result.model, feeds)
        theirs = _run(litert.Interpreter, result.model, feeds)
        for out in meta["outputs"]:
            key = out.split(":")[0] if out not in ours else out
            _close(ours[key], outputs[out][i:i + 1], f"{name}/{out} vs TensorFlow")
            _close(ours[key], theirs[key], f"{name}/{out} vs LiteRT")


def test_op_count_not_above_tensorflow(converted):
    name, meta, result, _, _ = converted
    ours = sum(result.graph.op_counts().values())
    if meta["n_ops"] is None:  # TF's converter needs Flex (or fails even with it: ResizeArea)
        assert meta["tf_flex"].get("flex_ops") or "error" in meta["tf_flex"], meta["tf_flex"]
        return
    assert ours <= meta["n_ops"], f"{name}: {result.graph.op_counts()} vs {meta['op_counts']}"
