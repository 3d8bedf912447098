"""Issue 16's misc models beyond the shared harness (models/builders/zoo_misc.py).

* QAT graphs in float mode (converter/lower/fake_quant.py): the float conversion keeps TF's
  quantize-dequantize, so it computes what TensorFlow computes (qat_cnn: 39.7 dB against TF's
  golden outputs when FakeQuant passed values through; TF's own float file: 142 dB).
* misc_logsumexp's int8 file (kept out of tests/models/test_beyond_cnn.py: LiteRT's
  reference SUM kernel reads int8 data as uint8, so no int8 SUM -- TF's included -- computes
  in LiteRT's reference runtime): TF's bar in edgelite and LiteRT's default kernels, and
  bit-exact with LiteRT's reference kernels (edgelite's kernels="reference").
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.models.test_beyond_cnn import SQNR_MARGIN, _golden, _options, _run_all, _sqnr

QAT_MIN_SQNR = 135.0  # dB against TF's golden outputs (TF's own float file: 142 dB)


def _info(name: str) -> dict:
    return json.loads((MODELS / f"{name}.tf_ops.json").read_text())


def _qat_float(name: str):
    if name == "qat_cnn":  # (models/build_quantized.py: no tf_ops.json)
        golden = np.load(MODELS / "qat_cnn.golden.npz")
        result = convert_detailed(MODELS / "qat_cnn.pb", ConvertOptions())
        return result, {"input": golden["input"]}, {"probs": golden["output"]}
    info = _info(name)
    ins, outs = _golden(name, info)
    return convert_detailed(MODELS / f"{name}.pb", _options(info)), ins, outs


@pytest.mark.parametrize("name, tf_ops", [("qat_cnn", 22), ("misc_qat", 20)])
@pytest.mark.parametrize("runtime", ["edgelite", "litert"])
def test_qat_graph_in_float_mode_computes_what_tensorflow_computes(name, tf_ops, runtime,
                                                                    litert):
    result, ins, ref = _qat_float(name)
    counts = result.graph.op_counts()
    assert counts["QUANTIZE"] == counts["DEQUANTIZE"] >= 4  # one pair per activation FakeQuant
    assert sum(counts.values()) < tf_ops  # TF's float file also quantizes its weights at run time
    interp = Interpreter(model_content=result.model) if runtime == "edgelite" \
        else litert.Interpreter(model_content=result.model)
    got = _run_all(interp, ins)
    for out, r in ref.items():
        assert _sqnr(r, got[out]) >= QAT_MIN_SQNR, (out, _sqnr(r, got[out]))


@pytest.fixture(scope="module")
def logsumexp_int8():
    info = _info("misc_logsumexp")
    q = QuantizeOptions(calib=str(MODELS / "misc_logsumexp.calib.npz"))
    model = convert_detailed(MODELS / "misc_logsumexp.pb", _options(info, quantize=q)).model
    return info, model


@pytest.mark.parametrize("runtime", ["edgelite", "default"])
def test_logsumexp_int8_within_tensorflows_sqnr(logsumexp_int8, runtime, litert):
    info, model = logsumexp_int8
    interp = Interpreter(model_content=model) if runtime == "edgelite" else \
        litert.Interpreter(model_content=model,
                           experimental_op_resolver_type=litert.OpResolverType.AUTO)
    ins, ref = _golden("misc_logsumexp", info)
    got = _run_all(interp, ins)
    for out, r in ref.items():
        floor = info["tf_int8"]["sqnr_db"][out] - SQNR_MARGIN
        assert _sqnr(r, got[out]) >= floor, (out, _sqnr(r, got[out]), floor)


def test_logsumexp_int8_in_the_reference_runtime_is_reproduced(logsumexp_int8, litert):
    info, model = logsumexp_int8
    ins, _ = _golden("misc_logsumexp", info)
    ours = _run_all(Interpreter(model_content=model, kernels="reference"), ins)
    theirs = _run_all(litert.Interpreter(
        model_content=model, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF),
        ins)
    for out in info["outputs"]:
        np.testing.assert_array_equal(ours[out], theirs[out])
