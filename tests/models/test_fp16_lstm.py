"""TF's float16 conversion of a Keras LSTM (models/builders/zoo_fp16_lstm.py) runs in edgelite
as in LiteRT.

In models/fp16_lstm.tf_fp16.tflite each LSTM state is a variable tensor written by a
DEQUANTIZE of a float16 zero constant. LiteRT runs that DEQUANTIZE on the first invoke
only; the state then carries from invoke to invoke until reset_all_variables() zeroes it.
edgelite keeps the state a variable (interpreter/allocation.py, RUN_ONCE_OPS). Outputs
stay within LiteRT's own spread between its two kernel sets, or 1e-5 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS, litert_module

FILE = MODELS / "fp16_lstm.tf_fp16.tflite"
RESOLVERS = {"reference": "BUILTIN_REF", "default": "AUTO"}
# invokes, with reset_all_variables() before the ones marked True
RESETS = [False, False, False, True, False, True, False]


def _run(interp, xs) -> np.ndarray:
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    ys = []
    for x, reset in zip(xs, RESETS, strict=True):
        if reset:
            interp.reset_all_variables()
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        ys.append(interp.get_tensor(out["index"]).copy())
    return np.array(ys)


def test_file_is_tfs_float16_lstm():
    sg = load_model(FILE.read_bytes()).subgraphs[0]
    lstm = next(op for op in sg.operators if op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    writers = {t: op for op in sg.operators for t in op.outputs}
    for slot in (18, 19):  # the output state and the cell state
        state = sg.tensors[lstm.inputs[slot]]
        assert state.is_variable and state.data is None
        source = sg.tensors[writers[state.index].inputs[0]]
        assert writers[state.index].name == "DEQUANTIZE" and source.dtype == np.float16
        assert not source.data.any()
    assert sum(op.name == "DEQUANTIZE" for op in sg.operators) == 16


def test_fp16_lstm_matches_litert():
    litert = litert_module()
    xs = np.random.default_rng(14).normal(size=(len(RESETS), 1, 5, 8)).astype(np.float32)
    expected = {}
    for k, resolver in RESOLVERS.items():
        interp = litert.Interpreter(
            model_content=FILE.read_bytes(),
            experimental_op_resolver_type=getattr(litert.OpResolverType, resolver))
        expected[k] = _run(interp, xs)
    ours = {k: _run(Interpreter(model_content=FILE.read_bytes(), kernels=k), xs)
            for k in RESOLVERS}
    spread = np.max(np.abs(expected["reference"] - expected["default"]))
    tol = max(spread, 1e-5 * np.max(np.abs(expected["reference"])))
    for k in RESOLVERS:
        assert np.max(np.abs(ours[k] - expected[k])) <= tol, k
    # the state carries: invoke 1 is not invoke 0 again; after a reset it is invoke 0 again
    # on the same state (zero), so only the inputs differ
    assert np.max(np.abs(expected["reference"][1] - expected["reference"][0])) > 100 * tol
    fresh = _run(Interpreter(model_content=FILE.read_bytes()), xs[[3, 4, 3, 3, 4, 3, 4]])
    np.testing.assert_allclose(ours["default"][3:5], fresh[:2], rtol=0, atol=0)
