"""TF1 training graphs (models/tf1_train/, built by models/builders/tf1_training.py): a digits
CNN whose batch norm and dropouts sit behind `is_training`, `keep_prob` and `mode`
placeholders, as a frozen .pb and as the checkpoint + .meta of the whole training graph,
with TF1 conds (v1: Switch / Merge) and functional ones (v2: If). With the placeholders
bound (--set) each converts to TF's inference model -- 7 ops, no control flow, no random
ops -- matching TensorFlow's outputs in edgelite and in LiteRT (both kernel sets); without
them the report says which placeholder to bind."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.converter.quantize import IOType
from edgelite.interpreter import Interpreter
from edgelite.errors import UnsupportedOpError
from tests.conftest import MODELS

FOLDER = MODELS / "tf1_train"
INFERENCE = {"v1": {"is_training": False, "keep_prob": 1.0, "batch_size": 1,
                    "class_bias": [0.0] * 10},
             "v2": {"is_training": "false", "keep_prob": "1.0", "mode": "0"}}
OPS = {"CONV_2D": 2, "FULLY_CONNECTED": 2, "MAX_POOL_2D": 1, "RESHAPE": 1, "SOFTMAX": 1}
SOURCES = [(v, form) for v in INFERENCE for form in ("pb", "meta")]
REL_TOL = 1e-5


def _convert(variant: str, form: str, **options):
    options.setdefault("set_values", INFERENCE[variant])
    if form == "meta":
        options.update(checkpoint=str(FOLDER / variant / "model.ckpt"), outputs=["probs"])
        return convert_detailed(FOLDER / variant / "model.ckpt.meta", ConvertOptions(**options))
    return convert_detailed(FOLDER / f"{variant}.pb", ConvertOptions(**options))


def _run(interp, x: np.ndarray) -> np.ndarray:
    """One sample at a time (the converted model has batch 1)."""
    interp.allocate_tensors()
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    rows = []
    for sample in x:
        interp.set_tensor(inp["index"], sample[None].astype(inp["dtype"]))
        interp.invoke()
        rows.append(interp.get_tensor(out["index"])[0].copy())
    return np.stack(rows)


def _interpreters(model: bytes, litert):
    """edgelite and LiteRT, each with its default and its reference kernels."""
    return {"edgelite": Interpreter(model_content=model),
            "edgelite reference": Interpreter(model_content=model, kernels="reference"),
            "litert": litert.Interpreter(model_content=model),
            "litert reference": litert.Interpreter(
                model_content=model,
                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)}


@pytest.mark.parametrize("variant, form", SOURCES)
def test_bound_training_graph_is_tensorflows_inference_model(variant, form, litert):
    golden = np.load(FOLDER / f"{variant}.golden.npz")
    result = _convert(variant, form)
    assert result.graph.op_counts() == OPS
    assert [t.name for t in result.graph.inputs] == ["input"]
    for name, interp in _interpreters(result.model, litert).items():
        got = _run(interp, golden["input"])
        err = np.abs(got - golden["probs"]).max()
        assert err <= REL_TOL * np.abs(golden["probs"]).max(), (name, err)
    # the model is still a classifier: TF's top-1 on the golden digits
    assert (got.argmax(1) == golden["probs"].argmax(1)).all()


def test_an_array_value(litert):
    """class_bias, a float [10] placeholder added to the logits, bound to an array."""
    golden = np.load(FOLDER / "v1.golden.npz")
    bias = np.linspace(-1.0, 1.0, 10).astype(np.float32).tolist()
    values = dict(INFERENCE["v1"], class_bias=bias)
    model = _convert("v1", "pb", set_values=values).model
    for name, interp in _interpreters(model, litert).items():
        err = np.abs(_run(interp, golden["input"]) - golden["probs_bias"]).max()
        assert err <= REL_TOL, (name, err)


@pytest.mark.parametrize("variant", list(INFERENCE))
def test_int8_from_the_checkpoint_is_bit_exact_in_litert(variant, litert):
    golden = np.load(FOLDER / f"{variant}.golden.npz")
    q = QuantizeOptions(calib=str(FOLDER / f"{variant}.golden.npz"), io_type=IOType.INT8)
    model = _convert(variant, "meta", quantize=q).model
    outs = {name: _run(interp, _quantized(interp, golden["input"]))
            for name, interp in _interpreters(model, litert).items()}
    np.testing.assert_array_equal(outs["edgelite"], outs["litert"])
    np.testing.assert_array_equal(outs["edgelite reference"], outs["litert reference"])
    top1 = outs["edgelite"].argmax(1) == golden["probs"].argmax(1)
    assert top1.mean() >= 0.9


def _quantized(interp, x: np.ndarray) -> np.ndarray:
    interp.allocate_tensors()
    scale, zero = interp.get_input_details()[0]["quantization"]
    return np.clip(np.round(x / scale) + zero, -128, 127).astype(np.int8)


def test_unbound_v1_says_what_to_set():
    with pytest.raises(UnsupportedOpError) as e:
        _convert("v1", "pb", set_values={})
    lines = str(e.value).splitlines()
    assert lines[0] == "2 node(s) use 1 op type(s) edgelite cannot convert:"
    assert lines[2] == ("  RandomUniform                    2  UNSUPPORTED: "
                        "drop2/random_uniform/RandomUniform, "
                        "drop1/cond/dropout/random_uniform/RandomUniform")
    hints = [line for line in lines if line.startswith("  hint: ")]
    assert hints == [
        "  hint: input 'is_training' (bool []) decides tf.cond 'bn1/cond/If', "
        "'drop1/cond/If' at run time, so every branch is converted; --set is_training=false "
        "keeps the one it selects",
        "  hint: input 'keep_prob' (float32 []) sets the rate of dropout noise "
        "'drop2/random_uniform/RandomUniform'; --set keep_prob=VALUE (e.g. keep_prob=1.0) "
        "makes the mask a constant and the noise goes"]


def test_unbound_v2_names_the_default_and_the_int_placeholder():
    with pytest.raises(UnsupportedOpError) as e:
        _convert("v2", "meta", set_values={})
    hints = [line for line in str(e.value).splitlines() if line.startswith("  hint: ")]
    assert hints[:2] == [
        "  hint: placeholder 'is_training' (bool []) takes its default, which decides "
        "tf.cond 'bn1/cond', 'drop1/cond'; --set is_training=false overrides it",
        "  hint: input 'mode' (int32 []) decides tf.cond 'drop3' at run time, so every "
        "branch is converted; --set mode=VALUE keeps the one it selects"]


def test_placeholders_left_out_of_the_inputs_are_named():
    with pytest.raises(UnsupportedOpError) as e:
        _convert("v1", "pb", set_values={"keep_prob": 1.0}, inputs=["input"])
    lines = str(e.value).splitlines()
    assert lines[2] == ("  Placeholder                      4  UNSUPPORTED: is_training, "
                        "batch_size, class_bias")
    hints = [line for line in lines if line.startswith("  hint: ")]
    assert hints[0] == ("  hint: placeholder 'is_training' (bool []) is not an input; it "
                        "decides tf.cond 'bn1/cond/If', 'drop1/cond/If': give it a value with "
                        "--set is_training=false (or list it in --inputs)")
