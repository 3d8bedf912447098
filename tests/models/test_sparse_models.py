"""TF's pruned models saved sparse (Optimize.EXPERIMENTAL_SPARSITY) run in edgelite as in LiteRT.

models/builders/zoo_sparse.py wrote the files (their encodings are asserted below) and
models/sparse_golden.npz (inputs, and the Keras model's outputs on them). Float outputs
stay within LiteRT's own spread between its default and reference kernels, or 1e-5
relative where that spread is smaller (here it is 0 to a few float32 ulp); the int8 files' outputs (DEQUANTIZE of int8) are bit-exact.

Two files LiteRT cannot run as written, so LiteRT runs their *dense twin* -- the same graph
with the sparse constants stored dense and the DENSIFY ops dropped -- and edgelite the
file itself:

* sparse_mlp.tf_f16: LiteRT's DEQUANTIZE reads a sparse float16 constant's compressed
  buffer as if it were dense (its outputs are NaN / garbage with both kernel sets);
* sparse_cnn.tf_int8, kernels="default": LiteRT's default resolver fails to allocate
  ("failed to delegate FULLY_CONNECTED": XNNPACK takes no int8 weights from a DENSIFY).

sparse_mlp16.tf_int8 stores its int8 weights 1x16 block-sparse: LiteRT's FULLY_CONNECTED
(both kernel sets) runs optimized_ops::FullyConnectedSparseWeight1x16 on them, which
requantizes with the fixed-point MultiplyByQuantizedMultiplier (per-channel
QuantizeMultiplier multipliers), not as the dense kernels do; edgelite's FULLY_CONNECTED does
the same for such weights (test_sparse_int8_fc_requantizes_in_fixed_point), so the file is
compared with LiteRT directly.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.quant_math import multiply_by_quantized_multiplier, quantize_multiplier
from edgelite.schema import generated_tflite as tfl
from edgelite.schema import model_io
from tests.conftest import MODELS, litert_module
from tests.support import KERNEL_SETS, litert_interpreter

GOLDEN = MODELS / "sparse_golden.npz"
CSR, BLOCK_1X4, BLOCK_1X16 = "csr", "1x4", "1x16"
# file -> (ops in order, encodings of its sparse constants)
FILES = {
    "sparse_mlp.tf_f32.tflite": (["FULLY_CONNECTED"] * 3, [BLOCK_1X4] * 3),
    "sparse_mlp.tf_f16.tflite": (["DEQUANTIZE"] * 3 + ["FULLY_CONNECTED"] * 3, [BLOCK_1X4] * 3),
    "sparse_cnn.tf_f32.tflite": (["DENSIFY", "CONV_2D"] * 2 + ["MEAN"] +
                              ["DENSIFY", "FULLY_CONNECTED"] * 2, [CSR] * 4),
    "sparse_cnn.tf_int8.tflite": (["QUANTIZE"] + ["DENSIFY", "CONV_2D"] * 2 + ["MEAN"] +
                               ["DENSIFY", "FULLY_CONNECTED"] * 2 + ["DEQUANTIZE"], [CSR] * 4),
    "sparse_mlp16.tf_int8.tflite": (["QUANTIZE"] + ["FULLY_CONNECTED"] * 3 + ["DEQUANTIZE"],
                                 [BLOCK_1X16] * 3),
}
TWIN_ONLY = {("sparse_mlp.tf_f16.tflite", "reference"), ("sparse_mlp.tf_f16.tflite", "default"),
             ("sparse_cnn.tf_int8.tflite", "default")}
FC_1X16 = "sparse_mlp16.tf_int8.tflite"


def _data(fname: str) -> bytes:
    return (MODELS / fname).read_bytes()


def _encoding(tensor) -> str:
    sp = tensor.sparsity
    if sp.block_map:
        return f"1x{sp.dim_metadata[-1].dense_size}"
    assert [m.is_csr for m in sp.dim_metadata] == [False] * (len(tensor.shape) - 1) + [True]
    return CSR


def dense_twin(data: bytes) -> bytes:
    """The model with every sparse constant stored dense (edgelite's densified value) and
    every DENSIFY op dropped (its readers read its input)."""
    model = tfl.ModelT.InitFromObj(tfl.Model.GetRootAs(data, 0))
    ours = load_model(data)
    for sg, sg_ours in zip(model.subgraphs, ours.subgraphs):
        for t, t_ours in zip(sg.tensors, sg_ours.tensors):
            if t.sparsity is not None:
                model.buffers[t.buffer].data = np.ascontiguousarray(t_ours.data).view(np.uint8)
                t.sparsity = None
        alias = {}
        kept = []
        for op, op_ours in zip(sg.operators, sg_ours.operators):
            if op_ours.name == "DENSIFY":
                alias[int(op.outputs[0])] = int(op.inputs[0])
            else:
                kept.append(op)
        for op in kept:
            op.inputs = [alias.get(int(i), int(i)) for i in op.inputs]
        sg.operators = kept
    return model_io.pack_model(model)


def _run(interp, xs) -> np.ndarray:
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    ys = []
    for x in xs:
        interp.set_tensor(inp["index"], x[None])
        interp.invoke()
        ys.append(interp.get_tensor(out["index"])[0])
    return np.array(ys)


def run_litert(data: bytes, kernels: str, xs) -> np.ndarray:
    return _run(litert_interpreter(data, kernels), xs)


@pytest.fixture(scope="module")
def golden():
    return np.load(GOLDEN)


def test_files_use_the_encodings_tf_writes():
    for fname, (ops, encodings) in FILES.items():
        sg = load_model(_data(fname)).subgraphs[0]
        assert [op.name for op in sg.operators] == ops, fname
        sparse = [t for t in sg.tensors if t.is_sparse]
        assert [_encoding(t) for t in sparse] == encodings, fname
        for t in sparse:  # pruned: most of each weight is zero, stored dense at load
            assert t.data.shape == t.shape and np.mean(t.data == 0) > 0.6, (fname, t.name)
    assert sum((MODELS / f).stat().st_size for f in FILES) + GOLDEN.stat().st_size < 100_000


@pytest.mark.parametrize("fname", sorted(FILES))
def test_sparse_model_matches_litert(fname, golden):
    data, xs = _data(fname), golden[f"{fname}:x"]
    twin = dense_twin(data)
    expected = {k: run_litert(twin if (fname, k) in TWIN_ONLY else data, k, xs)
                for k in KERNEL_SETS}
    ours = {k: _run(Interpreter(model_content=data, kernels=k), xs) for k in KERNEL_SETS}
    if fname.endswith(".tf_int8.tflite"):
        for k in KERNEL_SETS:
            np.testing.assert_array_equal(ours[k], expected[k], err_msg=k)
    else:
        scale = np.max(np.abs(expected["reference"]))
        spread = np.max(np.abs(expected["reference"] - expected["default"]))
        tol = max(spread, 1e-5 * scale)  # a spread of a few ulp: 1e-5 relative still
        for k in KERNEL_SETS:
            assert np.max(np.abs(ours[k] - expected[k])) <= tol, k
        # and the Keras model's own outputs (float16-rounded weights for the .f16 file)
        np.testing.assert_allclose(ours["reference"], golden[f"{fname}:y"], rtol=0,
                                   atol=1e-5 * scale)


def test_sparse_int8_fc_requantizes_in_fixed_point(golden):
    """LiteRT's 1x16 block-sparse int8 FULLY_CONNECTED (sparse_mlp16.tf_int8) on more
    inputs: every layer's output is round(acc * m * 2^(shift - 31)) in fixed point,
    (m, shift) = QuantizeMultiplier(s_x s_w[c] / s_out), double rounding -- not what the
    dense kernels compute (the module docstring); edgelite matches it with both sets."""
    data = _data(FC_1X16)
    sg = load_model(data).subgraphs[0]
    litert = litert_module()
    xs = np.random.default_rng(14).normal(size=(64, 64)).astype(np.float32)
    twin = run_litert(dense_twin(data), "reference", xs)
    sparse_out = {k: run_litert(data, k, xs) for k in KERNEL_SETS}
    assert np.array_equal(sparse_out["reference"], sparse_out["default"])
    assert not np.array_equal(sparse_out["reference"], twin)  # not the dense arithmetic
    for k in KERNEL_SETS:
        np.testing.assert_array_equal(_run(Interpreter(model_content=data, kernels=k), xs),
                                      sparse_out[k], err_msg=k)
    interp = litert.Interpreter(model_content=data, experimental_preserve_all_tensors=True,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    checked = 0
    for x in xs:
        interp.set_tensor(sg.inputs[0], x[None])
        interp.invoke()
        for op in (op for op in sg.operators if op.name == "FULLY_CONNECTED"):
            t_x, t_w, t_y = (sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]],
                             sg.tensors[op.outputs[0]])
            qx, qw, qy = t_x.quantization, t_w.quantization, t_y.quantization
            acc = ((interp.get_tensor(t_x.index).astype(np.int64) - int(qx.zero_point[0]))
                   @ t_w.data.astype(np.int64).T)
            m, shift = np.array([quantize_multiplier(float(qx.scale[0]) * float(s) /
                                                     float(qy.scale[0]))
                                 for s in qw.scale]).T
            y = multiply_by_quantized_multiplier(acc, m, shift) + int(qy.zero_point[0])
            relu = op.options["fused_activation_function"] == 1
            y = np.clip(y, int(qy.zero_point[0]) if relu else -128, 127)
            np.testing.assert_array_equal(y, interp.get_tensor(t_y.index))
            checked += y.size
    assert checked == 64 * (64 + 32 + 16)


def test_litert_runs_the_twins_files_as_the_module_says():
    """The files above LiteRT is compared on through their twin: it cannot run them."""
    litert = litert_module()
    with pytest.raises(RuntimeError, match="failed to delegate FULLY_CONNECTED"):
        run_litert(_data("sparse_cnn.tf_int8.tflite"), "default", np.zeros((1, 12, 12, 3),
                                                                        np.float32))
    sg = load_model(_data("sparse_mlp.tf_f16.tflite")).subgraphs[0]
    weights = sg.operators[0].inputs[0]
    interp = litert.Interpreter(model_content=_data("sparse_mlp.tf_f16.tflite"),
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    # LiteRT holds the sparse constant as its compressed values (a 1-D tensor)
    assert interp.get_tensor(weights).shape != sg.tensors[weights].shape
