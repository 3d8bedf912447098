"""TensorFlow's dynamic-range (hybrid) LSTM files (models/hybrid_rnn_*.tf_dr.tflite, built
by models/builders/zoo_hybrid_rnn.py): what the converter wrote -- int8 weights with one
scale per tensor, float32 input, output and states, asymmetric_quantize_inputs as named --
and edgelite runs each bit-exactly as LiteRT does on both kernel sets (which agree on
these files), over consecutive invokes (the state carries) and again after
reset_all_variables, for several random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS, litert_module

FILES = {  # file -> asymmetric_quantize_inputs, UNIDIRECTIONAL_SEQUENCE_LSTM ops
    "hybrid_rnn_lstm.tf_dr.tflite": (True, 1),
    "hybrid_rnn_lstm_sym.tf_dr.tflite": (False, 1),
    "hybrid_rnn_lstm_stack.tf_dr.tflite": (True, 2),
}
SEEDS = (0, 1, 2)


def _run(interp, feeds) -> list[np.ndarray]:
    """Outputs of consecutive invokes, then of the first feed again after a reset."""
    interp.allocate_tensors()
    index = interp.get_input_details()[0]["index"]
    out = interp.get_output_details()[0]["index"]
    results = []
    for f in feeds:
        interp.set_tensor(index, f)
        interp.invoke()
        results.append(interp.get_tensor(out).copy())
    interp.reset_all_variables()
    interp.set_tensor(index, feeds[0])
    interp.invoke()
    return results + [interp.get_tensor(out).copy()]


@pytest.mark.parametrize("name", sorted(FILES))
def test_tensorflow_wrote_a_hybrid_lstm(name):
    asymmetric, count = FILES[name]
    model = load_model((MODELS / name).read_bytes())
    sg = model.subgraphs[0]
    lstms = [op for op in sg.operators if op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
    assert len(lstms) == count
    for op in lstms:
        assert op.options["asymmetric_quantize_inputs"] is asymmetric
        assert op.version == (3 if asymmetric else 2)
        tensors = [sg.tensors[i] for i in op.inputs]
        assert tensors[0].dtype == np.float32
        for w in tensors[1:9]:  # input and recurrent weights of the four gates
            assert w.dtype == np.int8 and len(w.quantization.scale) == 1
        assert all(t.dtype == np.float32 for t in tensors[12:16])  # biases
        assert tensors[18].is_variable and tensors[19].is_variable
    assert (MODELS / name).stat().st_size < 100_000


@pytest.mark.parametrize("kernels", ["reference", "default"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_edgelite_runs_the_hybrid_lstm_as_litert(name, kernels):
    litert = litert_module()
    data = (MODELS / name).read_bytes()
    resolver = {"reference": litert.OpResolverType.BUILTIN_REF,
                "default": litert.OpResolverType.AUTO}[kernels]
    shape = litert.Interpreter(model_content=data).get_input_details()[0]["shape"]
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        first, second = (rng.normal(0, 1, shape).astype(np.float32) for _ in range(2))
        feeds = [first, first, second]
        theirs = _run(litert.Interpreter(model_content=data,
                                         experimental_op_resolver_type=resolver), feeds)
        ours = _run(Interpreter(model_content=data, kernels=kernels), feeds)
        for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
            np.testing.assert_array_equal(a, b, err_msg=f"seed {seed} invoke {step}")
        assert not np.allclose(ours[0], ours[1])  # the same input again: the state carries
        np.testing.assert_array_equal(ours[0], ours[-1])  # after the reset: as at first
