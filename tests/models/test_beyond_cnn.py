"""Issue 16's models beyond CNN classifiers (transformers, detection heads, sparse / partitioned
embeddings, the misc ops; built by models/builders/zoo_*.py through builders/beyond.py): every
model whose <name>.tf_ops.json names a "family".

Float: tests/models/test_real_world.py runs them like every model with a tf_ops.json (outputs
within 1e-4 x max |TF| in edgelite and LiteRT, op count no higher than TF's builtin-only file).
Here: `edgelite check` passes; where TF's converter needs Flex, edgelite's file holds builtins
only; int8 converts, loads and runs in both LiteRT kernel sets and in edgelite, each float
output within SQNR_MARGIN dB of TensorFlow's int8 file in the same kernel set (or better)
against TF's float outputs.
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, check, convert_detailed
from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS

SQNR_MARGIN = 0.5   # dB below TF's int8 file allowed (the acceptance)
MIN_SQNR = 25.0     # dB, where TF's converter cannot write an int8 file at all


def _infos() -> dict[str, dict]:
    infos = {}
    for path in sorted(MODELS.glob("*.tf_ops.json")):
        info = json.loads(path.read_text())
        if "family" in info:
            infos[info["model"]] = info
    return infos


INFOS = _infos()
NAMES = sorted(INFOS)
FLEX = [n for n in NAMES if INFOS[n].get("ops") is None]


def _options(info: dict, **kwargs) -> ConvertOptions:
    return ConvertOptions(inputs=info["inputs"], outputs=info["outputs"],
                          input_shapes={k: tuple(v) for k, v in info["input_shapes"].items()},
                          **kwargs)


def _golden(name: str, info: dict):
    npz = np.load(MODELS / f"{name}.golden.npz")
    ins = ({info["inputs"][0]: npz["input"]} if "input" in npz.files
           else {k: npz[f"inputs/{k}"] for k in info["inputs"]})
    outs = ({info["outputs"][0]: npz["output"]} if "output" in npz.files
            else {k: npz[f"outputs/{k}"] for k in info["outputs"]})
    return ins, outs


def _sqnr(ref, test) -> float:
    ref, test = np.asarray(ref, np.float64), np.asarray(test, np.float64)
    noise = np.sum((ref - test) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(ref ** 2) / noise))


def _run_all(interp, ins: dict) -> dict:
    """Each golden sample at batch 1; outputs stacked, keyed by output tensor name."""
    interp.allocate_tensors()
    by_name = {d["name"]: d for d in interp.get_input_details()}
    outs = {}
    for i in range(len(next(iter(ins.values())))):
        for k, v in ins.items():
            interp.set_tensor(by_name[k]["index"], v[i:i + 1])
        interp.invoke()
        for d in interp.get_output_details():
            outs.setdefault(d["name"], []).append(interp.get_tensor(d["index"])[0].copy())
    return {k: np.stack(v) for k, v in outs.items()}


def _output_key(out: str, got: dict) -> str:
    return out if out in got else out.split(":")[0]


@pytest.mark.parametrize("name", NAMES)
def test_check_passes(name):
    info = INFOS[name]
    report = check(MODELS / f"{name}.pb", info["inputs"], info["outputs"],
                   {k: tuple(v) for k, v in info["input_shapes"].items()})
    assert report.ok, report.table()


@pytest.mark.parametrize("name", FLEX)
def test_where_tensorflow_needs_flex_edgelite_writes_builtins(name):
    info = INFOS[name]
    # TF really needs Flex here (or cannot convert it even with Flex: ResizeArea)
    assert info["tf_flex"].get("flex_ops") or "error" in info["tf_flex"], info["tf_flex"]
    model = convert_detailed(MODELS / f"{name}.pb", _options(info)).model
    ops = [op.name for op in load_model(model).subgraphs[0].operators]
    assert "CUSTOM" not in ops


@pytest.fixture(scope="module", params=[n for n in NAMES if "tf_int8" in INFOS[n]])
def int8_model(request):
    name = request.param
    info = INFOS[name]
    q = QuantizeOptions(calib=str(MODELS / f"{name}.calib.npz"))
    return name, info, convert_detailed(MODELS / f"{name}.pb", _options(info, quantize=q)).model


# edgelite's default kernels are LiteRT's default set's arithmetic (XNNPACK where it takes the op)
TF_RUNTIME = {"edgelite": "default", "reference": "reference", "default": "default"}


def _floor(info: dict, out: str, runtime: str) -> float:
    """TF's int8 file's SQNR in the same LiteRT kernel set, less the margin; MIN_SQNR where
    TF writes no int8 file (or that kernel set cannot run it)."""
    tf_int8 = info["tf_int8"]
    if "error" in tf_int8:
        return MIN_SQNR
    measured = tf_int8["sqnr_db_by_runtime"][TF_RUNTIME[runtime]]
    if "error" in measured:
        return MIN_SQNR
    return measured[out] - SQNR_MARGIN


@pytest.mark.parametrize("runtime", ["edgelite", "reference", "default"])
def test_int8_runs_within_tensorflows_sqnr(int8_model, runtime, litert):
    name, info, model = int8_model
    if runtime == "edgelite":
        interp = Interpreter(model_content=model)
    else:
        kind = litert.OpResolverType.BUILTIN_REF if runtime == "reference" \
            else litert.OpResolverType.AUTO
        interp = litert.Interpreter(model_content=model, experimental_op_resolver_type=kind)
    ins, ref = _golden(name, info)
    got = _run_all(interp, ins)
    for out, r in ref.items():
        y = got[_output_key(out, got)]
        if not np.issubdtype(r.dtype, np.floating):
            continue  # indices, counts: checked through the float outputs that use them
        assert _sqnr(r, y) >= _floor(info, out, runtime), \
            f"{name}/{out} in {runtime}: {_sqnr(r, y):.2f} dB, TF int8 {info['tf_int8']}"


@pytest.mark.parametrize("name", [n for n in NAMES if (MODELS / f"{n}.tf.tflite").exists()])
def test_tensorflows_float_file_runs_in_edgelite(name):
    """TF's own builtin-only float file of the same graph: edgelite within 1e-4 x max |TF|."""
    info = INFOS[name]
    ins, ref = _golden(name, info)
    got = _run_all(Interpreter(model_content=(MODELS / f"{name}.tf.tflite").read_bytes()), ins)
    for out, r in ref.items():
        y = np.asarray(got[_output_key(out, got)], np.float64)
        err = np.abs(y - r).max() if r.size else 0.0
        assert err <= 1e-4 * max(np.abs(r).max(), 1e-6), f"{name}/{out}: {err:.3g}"


def test_every_family_is_there():
    """The suite cannot shrink silently: each kind has its models, and some need Flex in TF."""
    families = {info["family"] for info in INFOS.values()}
    assert families == {"transformer", "detection", "embedding", "segmentation", "misc", "audio"}
    assert len(NAMES) >= 17 and len(FLEX) >= 6
