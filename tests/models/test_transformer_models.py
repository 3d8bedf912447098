"""The transformer models (models/builders/zoo_transformer.py, family "transformer") beyond
tests/models/test_beyond_cnn.py's int8 bar: 16x8 and uint8 conversions run in edgelite and
both LiteRT kernel sets, and the masked attention of the encoders survives int8.

Floors are against TF's float outputs, from TF's int8 file's SQNR (<name>.tf_ops.json):
16x8 at least 3 dB above it (int16 activations), uint8 (TOCO's scheme; BATCH_MATMUL, which
has no uint8 kernel, stays float) within 0.5 dB of it. The encoders mask attention with
-1e9: quantized over that range the scores collapse (TF's int8 files: 4 to 14 dB);
quantize/attention_masks.py keeps them, at least 10 dB above TF's int8. The int8 and 16x8
files are bit-exact with LiteRT, edgelite's kernel sets against LiteRT's.
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.converter.quantize import QuantMode
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS

INFOS = {json.loads(p.read_text())["model"]: json.loads(p.read_text())
         for p in sorted(MODELS.glob("tfm_*.tf_ops.json"))}
NAMES = sorted(n for n, info in INFOS.items() if info.get("family") == "transformer")
WITH_TF_INT8 = [n for n in NAMES if "sqnr_db" in INFOS[n]["tf_int8"]]
ENCODERS = [n for n in WITH_TF_INT8 if n.startswith("tfm_encoder")]
MODES = {QuantMode.INT16X8: 3.0, QuantMode.UINT8: -0.5}   # dB over TF's int8 file


def _convert(name: str, mode: QuantMode) -> bytes:
    info = INFOS[name]
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(
        inputs=info["inputs"], outputs=info["outputs"],
        input_shapes={k: tuple(v) for k, v in info["input_shapes"].items()},
        quantize=QuantizeOptions(mode=mode, calib=str(MODELS / f"{name}.calib.npz")))).model


def _golden(name: str):
    info, npz = INFOS[name], np.load(MODELS / f"{name}.golden.npz")
    ins = ({info["inputs"][0]: npz["input"]} if "input" in npz.files
           else {k: npz[f"inputs/{k}"] for k in info["inputs"]})
    outs = ({info["outputs"][0]: npz["output"]} if "output" in npz.files
            else {k: npz[f"outputs/{k}"] for k in info["outputs"]})
    return ins, outs


def _run(interp, ins: dict) -> dict:
    interp.allocate_tensors()
    by_name = {d["name"]: d["index"] for d in interp.get_input_details()}
    outs: dict = {}
    for i in range(len(next(iter(ins.values())))):
        for k, v in ins.items():
            interp.set_tensor(by_name[k], v[i:i + 1])
        interp.invoke()
        for d in interp.get_output_details():
            outs.setdefault(d["name"], []).append(interp.get_tensor(d["index"])[0].copy())
    return {k: np.stack(v) for k, v in outs.items()}


def _sqnr(ref, test) -> float:
    ref, test = np.asarray(ref, np.float64), np.asarray(test, np.float64)
    noise = np.sum((ref - test) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(ref ** 2) / noise))


def _interpreters(model: bytes, litert):
    yield "edgelite", Interpreter(model_content=model)
    for kind in (litert.OpResolverType.BUILTIN_REF, litert.OpResolverType.AUTO):
        yield kind.name, litert.Interpreter(model_content=model,
                                            experimental_op_resolver_type=kind)


@pytest.mark.parametrize("mode", list(MODES), ids=[m.value for m in MODES])
@pytest.mark.parametrize("name", WITH_TF_INT8)
def test_16x8_and_uint8_run_everywhere(name, mode, litert):
    model = _convert(name, mode)
    ins, ref = _golden(name)
    tf_int8 = INFOS[name]["tf_int8"]["sqnr_db"]
    for runtime, interp in _interpreters(model, litert):
        got = _run(interp, ins)
        for out, r in ref.items():
            floor = tf_int8[out] + MODES[mode]
            assert _sqnr(r, got[out]) >= floor, (runtime, out, _sqnr(r, got[out]), floor)


@pytest.mark.parametrize("name", ENCODERS)
def test_masked_attention_survives_int8(name):
    ins, ref = _golden(name)
    got = _run(Interpreter(model_content=_convert(name, QuantMode.INT8)), ins)
    (out,) = ref
    assert _sqnr(ref[out], got[out]) >= INFOS[name]["tf_int8"]["sqnr_db"][out] + 10.0


@pytest.mark.parametrize("mode", [QuantMode.INT8, QuantMode.INT16X8], ids=["int8", "16x8"])
@pytest.mark.parametrize("name", NAMES)
def test_integer_files_are_bit_exact_with_litert(name, mode, litert):
    """Whole encoders (FULLY_CONNECTED, BATCH_MATMUL, SOFTMAX, GELU's LUT, the layer norms'
    MEAN / SQUARED_DIFFERENCE / RSQRT, ...): edgelite's "reference" kernels against
    LiteRT's BUILTIN_REF, its "default" ones against LiteRT's AUTO (XNNPACK)."""
    model = _convert(name, mode)
    ins, _ = _golden(name)
    for kernels, kind in (("reference", litert.OpResolverType.BUILTIN_REF),
                          ("default", litert.OpResolverType.AUTO)):
        ours = _run(Interpreter(model_content=model, kernels=kernels), ins)
        theirs = _run(litert.Interpreter(model_content=model,
                                         experimental_op_resolver_type=kind), ins)
        for out in ours:
            np.testing.assert_array_equal(ours[out], theirs[out], err_msg=f"{kernels} {out}")
