"""FULLY_CONNECTED with weights stored sparse (ModelBuilder files; edgelite densifies them at
load) against LiteRT's sparse paths (fully_connected.cc):

* int8 weights 1x16 block-sparse: FullyConnectedSparseWeight1x16 on both LiteRT kernel
  sets (XNNPACK does not take sparse weights), requantizing in fixed point -- bit-exact
  (interpreter/kernels/fully_connected.py, _sparse_1x16);
* float weights 1x4 block-sparse: FullyConnectedSparseWeight1x4 -- within LiteRT's own
  spread between its two sets, or 1e-5 relative;
* float input, int8 weights 1x16 block-sparse (hybrid): EvalSparseHybridImpl on LiteRT's
  default set. With asymmetric_quantize_inputs it drops the input offsets (its numbers
  are far from the reference set's; edgelite computes the reference set's, within that
  spread). Symmetric it computes what the reference set computes, but edgelite's default
  set follows XNNPACK's dynamic-range kernel: a known gap (strict xfail below).

LiteRT refuses int8 weights in other sparse encodings (1x4 blocks, plain CSR:
"Unsupported sparse fully-connected weight format"); edgelite runs them densely.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.conftest import litert_module
from tests.interpreter.sparse_encoding import encode
from tests.interpreter.tflite_builder import ModelBuilder

F32 = np.float32
KERNEL_SETS = {"reference": "BUILTIN_REF", "default": "AUTO"}
UNITS, DEPTH = 8, 64


def _block_sparse(rng, dtype, block: int) -> tuple[np.ndarray, object]:
    """[UNITS, DEPTH] weights, about 60% of their 1 x ``block`` blocks zero, and their
    encoding (rows dense, blocks CSR, ``block`` values each)."""
    if dtype == np.int8:
        w = rng.integers(-127, 128, size=(UNITS, DEPTH))
    else:
        w = rng.normal(size=(UNITS, DEPTH))
    w = (w * np.repeat(rng.random((UNITS, DEPTH // block)) < 0.4, block, axis=1)).astype(dtype)
    return w, encode(w, (0, 1, 2), (False, True, False), (1,), (block,))


def _int8_model(seed: int, per_channel: bool, act: str, batch: int) -> tuple[bytes, int]:
    """The model and its input zero point. Output multipliers s_x s_w / s_y near 2^-4 (a
    small right shift: the fixed-point double rounding differs from a float rounding on
    about 1 output in 16 there, on 1 in 2^11 for TF's files)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    _, enc = _block_sparse(rng, np.int8, 16)
    sx, zx = float(rng.uniform(0.01, 0.05)), int(rng.integers(-20, 20))
    x = b.tensor("x", (batch, DEPTH), np.int8, scale=sx, zero_point=zx)
    sw = rng.uniform(0.005, 0.02, size=UNITS if per_channel else 1)
    zeros = np.zeros(sw.size, np.int64)
    w = b.tensor("w", (UNITS, DEPTH), np.int8, data=enc.values, sparsity=enc.flatbuffer(),
                 scale=sw, zero_point=zeros)
    bias = b.tensor("bias", (UNITS,), np.int32, scale=sx * sw, zero_point=zeros,
                    data=rng.integers(-3000, 3000, UNITS).astype(np.int32))
    sy = sx * float(sw.mean()) / rng.uniform(0.03, 0.06)
    y = b.tensor("y", (batch, UNITS), np.int8, scale=sy, zero_point=int(rng.integers(-10, 10)))
    b.op("FULLY_CONNECTED", [x, w, bias], [y], version=8, fused_activation_function=act)
    return b.build([x], [y]), zx


def _float_model(seed: int, hybrid: bool = False, asymmetric: bool = False) -> bytes:
    """float input [3, DEPTH]; float 1x4 weights, or int8 1x16 ones (hybrid)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor("x", (3, DEPTH))
    if hybrid:
        _, enc = _block_sparse(rng, np.int8, 16)
        w = b.tensor("w", (UNITS, DEPTH), np.int8, data=enc.values, sparsity=enc.flatbuffer(),
                     scale=0.02, zero_point=0)
    else:
        _, enc = _block_sparse(rng, F32, 4)
        w = b.tensor("w", (UNITS, DEPTH), F32, data=enc.values, sparsity=enc.flatbuffer())
    y = b.tensor("y", (3, UNITS))
    b.op("FULLY_CONNECTED", [x, w, b.const("bias", rng.normal(size=UNITS).astype(F32))], [y],
         version=9 if asymmetric else 8, asymmetric_quantize_inputs=asymmetric)
    return b.build([x], [y])


def _outputs(model: bytes, x: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """{"litert" / "edgelite": {kernel set: output}}."""
    litert = litert_module()
    out: dict[str, dict[str, np.ndarray]] = {"litert": {}, "edgelite": {}}
    for k, resolver in KERNEL_SETS.items():
        for who, interp in (("litert", litert.Interpreter(
                model_content=model,
                experimental_op_resolver_type=getattr(litert.OpResolverType, resolver))),
                            ("edgelite", Interpreter(model_content=model, kernels=k))):
            interp.allocate_tensors()
            interp.set_tensor(interp.get_input_details()[0]["index"], x)
            interp.invoke()
            out[who][k] = interp.get_tensor(interp.get_output_details()[0]["index"])
    return out


@pytest.mark.parametrize("per_channel,act,batch", [(False, "NONE", 32), (True, "NONE", 32),
                                                   (False, "RELU", 32), (True, "RELU6", 1)])
@pytest.mark.parametrize("seed", range(3))
def test_int8_1x16_is_bit_exact(seed, per_channel, act, batch):
    model, zx = _int8_model(seed, per_channel, act, batch)
    x = zx + np.random.default_rng(seed + 7).integers(-8, 9, (batch, DEPTH))  # acc unsaturated
    x[0, :4] = [-128, 127, -128, 127]  # and some edge values
    out = _outputs(model, x.astype(np.int8))
    for k in KERNEL_SETS:
        np.testing.assert_array_equal(out["edgelite"][k], out["litert"][k], err_msg=k)


def _assert_within_spread(out) -> None:
    theirs = out["litert"]
    spread = np.max(np.abs(theirs["reference"] - theirs["default"]))
    tol = max(spread, 1e-5 * np.max(np.abs(theirs["reference"])))
    for k in KERNEL_SETS:
        assert np.max(np.abs(out["edgelite"][k] - theirs[k])) <= tol, k


@pytest.mark.parametrize("seed", range(3))
def test_float_1x4_within_litert_spread(seed):
    x = np.random.default_rng(seed).normal(size=(3, DEPTH)).astype(F32)
    _assert_within_spread(_outputs(_float_model(seed), x))


@pytest.mark.parametrize("seed", range(3))
def test_hybrid_1x16_asymmetric_within_litert_spread(seed):
    x = (np.random.default_rng(seed).normal(size=(3, DEPTH)) + 0.5).astype(F32)
    out = _outputs(_float_model(seed, hybrid=True, asymmetric=True), x)
    # LiteRT's default set drops the input offsets: far from its reference set
    assert not np.allclose(out["litert"]["default"], out["litert"]["reference"], atol=0.1)
    np.testing.assert_allclose(out["edgelite"]["default"], out["litert"]["reference"],
                               rtol=1e-5, atol=1e-5)
    _assert_within_spread(out)


@pytest.mark.xfail(strict=True, reason="hybrid/fully_connected.py follows XNNPACK's dynamic-range "
                   "kernel on the default set; LiteRT runs EvalSparseHybridImpl there")
def test_hybrid_1x16_symmetric_within_litert_spread():
    x = np.random.default_rng(0).normal(size=(3, DEPTH)).astype(F32)
    _assert_within_spread(_outputs(_float_model(0, hybrid=True), x))
