"""Issue 17's SavedModels (models/savedmodel/, built by models/builders/zoo_savedmodel.py with
TensorFlow; converted here without it): each signature converts, runs through
get_signature_runner() in edgelite and LiteRT within 1e-5 x max |TF| of TensorFlow's outputs,
with no more ops than TensorFlow's from_saved_model conversion, and converts to int8; a TF1
checkpoint + .meta graph takes the same route; a damaged bundle gets one clear error."""

import json
import shutil

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, RnnState, convert_detailed
from edgelite.interpreter import Interpreter
from edgelite.errors import ModelFormatError
from tests.conftest import MODELS

FOLDER = MODELS / "savedmodel"
SAVED = sorted(p.name for p in FOLDER.glob("sm_*") if p.is_dir())
CASES = [(name, key) for name in SAVED
         for key in json.loads((FOLDER / f"{name}.json").read_text())["signatures"]]
REL_TOL = 1e-5
MIN_INT8_SQNR = 20.0  # dB against TF's float outputs, on the golden inputs


def _golden(name: str, key: str):
    g = np.load(FOLDER / f"{name}.golden.npz")
    feeds = {k.split("/")[-1]: g[k] for k in g.files if k.startswith(f"{key}/in/")}
    outs = {k.split("/")[-1]: g[k] for k in g.files if k.startswith(f"{key}/out/")}
    return feeds, outs


def _run(interp, key: str, feeds: dict) -> dict:
    """Each golden sample at the signature's batch (1 where the model fixes it)."""
    runner = interp.get_signature_runner(key)
    batch = next(iter(feeds.values())).shape[0]
    fixed = runner.get_input_details()[next(iter(feeds))]["shape"][0]
    if fixed == batch or batch == 1:
        return runner(**feeds)
    rows = [runner(**{k: v[i:i + 1] for k, v in feeds.items()}) for i in range(batch)]
    return {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}


def _float(name: str, key: str):
    return convert_detailed(FOLDER / name, ConvertOptions(signature=key))


@pytest.mark.parametrize("name, key", CASES)
def test_signature_matches_tensorflow_in_edgelite_and_litert(name, key, litert):
    feeds, ref = _golden(name, key)
    model = _float(name, key).model
    for interp in (Interpreter(model_content=model), litert.Interpreter(model_content=model)):
        assert interp.get_signature_list()[key] == {"inputs": sorted(feeds),
                                                    "outputs": sorted(ref)}
        got = _run(interp, key, feeds)
        for out, r in ref.items():
            err = np.abs(got[out].astype(np.float64) - r).max()
            assert err <= REL_TOL * np.abs(r).max(), f"{name}/{key}/{out}: {err:.3g}"


@pytest.mark.parametrize("name, key", CASES)
def test_no_more_ops_than_tensorflow(name, key):
    # TF's file of a Keras LSTM keeps h / c from one invoke to the next; edgelite's default
    # file zeroes them first (one SUB per state tensor): compared with its stateful form
    info = json.loads((FOLDER / f"{name}.json").read_text())["signatures"][key]
    ours = convert_detailed(FOLDER / name, ConvertOptions(signature=key,
                                                          rnn_state=RnnState.KEEP)).graph
    assert sum(ours.op_counts().values()) <= info["tf_n_ops"], (ours.op_counts(), info["tf_ops"])
    default = _float(name, key).graph.op_counts()
    assert sum(default.values()) - sum(ours.op_counts().values()) == \
        2 * ours.op_counts().get("UNIDIRECTIONAL_SEQUENCE_LSTM", 0)


@pytest.mark.parametrize("name, key", CASES)
def test_int8_loads_and_runs(name, key, litert, tmp_path):
    feeds, ref = _golden(name, key)
    np.savez(tmp_path / "calib.npz", **feeds)  # keyed by the signature's input names
    model = convert_detailed(FOLDER / name, ConvertOptions(
        signature=key, quantize=QuantizeOptions(calib=str(tmp_path / "calib.npz")))).model
    for interp in (Interpreter(model_content=model), litert.Interpreter(model_content=model)):
        got = _run(interp, key, feeds)
        for out, r in ref.items():
            noise = np.sum((got[out].astype(np.float64) - r) ** 2)
            sqnr = 10 * np.log10(np.sum(r.astype(np.float64) ** 2) / max(noise, 1e-30))
            assert sqnr >= MIN_INT8_SQNR, f"{name}/{key}/{out}: {sqnr:.1f} dB"


def test_tf1_checkpoint_and_meta_graph():
    g = np.load(FOLDER / "ckpt_tf1.golden.npz")
    model = convert_detailed(FOLDER / "ckpt_tf1" / "model.ckpt.meta", ConvertOptions(
        outputs=["probs"], checkpoint=str(FOLDER / "ckpt_tf1" / "model.ckpt"))).model
    interp = Interpreter(model_content=model)
    got = _run(interp, "serving_default", {"x": g["x"]})
    np.testing.assert_allclose(got["probs"], g["probs"], atol=REL_TOL)


@pytest.fixture
def damaged(tmp_path):
    shutil.copytree(FOLDER / "sm_tf1_builder", tmp_path / "m")
    return tmp_path / "m"


def _edit(path, fn):
    data = bytearray(path.read_bytes())
    fn(data)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("file, edit, message", [
    ("variables.data-00000-of-00001", lambda d: d.__setitem__(10, d[10] ^ 0x40), "CRC-32C"),
    ("variables.data-00000-of-00001", lambda d: d.__delitem__(slice(100, None)), "truncated"),
    ("variables.index", lambda d: d.__setitem__(12, d[12] ^ 0x01), "CRC-32C"),
    ("variables.index", lambda d: d.__delitem__(slice(40, None)), "too short"),
])
def test_a_damaged_bundle_is_one_clear_error(damaged, file, edit, message):
    _edit(damaged / "variables" / file, edit)
    with pytest.raises(ModelFormatError, match=message):
        convert_detailed(damaged, ConvertOptions())
