"""Masked recurrent models (models/builders/rnn_masked.py): a Keras RNN behind
Embedding(mask_zero=True) stays a WHILE loop whose step keeps the old state of finished
sequences (SELECT_V2 on the mask). edgelite's file has no more ops than TensorFlow's (all
subgraphs counted): the mask's TILE goes into the SELECT_V2s' broadcast (fold_broadcast_to),
Keras' time-major TRANSPOSEs of a batch of one are RESHAPEs (transpose_as_reshape), and the
one-item output list the loop writes every step is the state it already carries
(prune_loop_vars). Float against Keras in edgelite and LiteRT; int8 bit-exact in LiteRT."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS, litert_module
from tests.support import assert_bit_exact

NAMES = ["rnn_masked_bilstm", "rnn_masked_gru"]


def _total_ops(model: bytes) -> int:
    return sum(len(sg.operators) for sg in load_model(model).subgraphs)


def _in_a_row(interp, tokens) -> np.ndarray:
    interp.allocate_tensors()
    ys = []
    for k in range(len(tokens)):
        interp.set_tensor(interp.get_input_details()[0]["index"], tokens[k:k + 1])
        interp.invoke()
        ys.append(interp.get_tensor(interp.get_output_details()[0]["index"])[0].copy())
    return np.stack(ys)


@pytest.mark.parametrize("name", NAMES)
def test_no_more_ops_than_tensorflow(name):
    ours = convert_detailed(MODELS / f"{name}.pb").model
    theirs = (MODELS / f"{name}.tf_float.tflite").read_bytes()
    assert _total_ops(ours) <= _total_ops(theirs)
    ops = [op.name for sg in load_model(ours).subgraphs for op in sg.operators]
    assert "TILE" not in ops and "TRANSPOSE" not in ops
    if name == "rnn_masked_bilstm":   # the last step only: no output list left in the loops
        assert "DYNAMIC_UPDATE_SLICE" not in ops


@pytest.mark.parametrize("name", NAMES)
def test_float_matches_keras_in_edgelite_and_litert(name):
    golden = np.load(MODELS / f"{name}.golden.npz")
    model = convert_detailed(MODELS / f"{name}.pb").model
    mod = litert_module()
    for interp in (Interpreter(model_content=model),
                   mod.Interpreter(model_content=model,
                                   experimental_op_resolver_type=mod.OpResolverType.BUILTIN_REF),
                   mod.Interpreter(model_content=model)):
        err = np.abs(_in_a_row(interp, golden["tokens"]) - golden["output"]).max()
        assert err <= 1e-5 * np.abs(golden["output"]).max()


@pytest.mark.parametrize("name", NAMES)
def test_int8_bit_exact_in_litert(name, tmp_path):
    golden = np.load(MODELS / f"{name}.golden.npz")
    rng = np.random.default_rng(7)
    calib = rng.integers(0, 30, (16, 12)).astype(np.int32)
    for k in range(16):
        calib[k, rng.integers(1, 13):] = 0
    np.savez(tmp_path / "calib.npz", tokens=calib)
    model = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(
        quantize=QuantizeOptions(calib=str(tmp_path / "calib.npz")))).model
    # the masked average's int8 SUM: LiteRT's reference kernel reads int8 data as uint8
    # (misc_logsumexp), so its divisor can come out as the zero point and its DIV refuses
    kernels = ("default",) if name == "rnn_masked_gru" else ("default", "reference")
    for k in range(len(golden["tokens"])):
        assert_bit_exact(model, [golden["tokens"][k:k + 1]], kernels)
