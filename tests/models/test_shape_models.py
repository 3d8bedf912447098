"""TensorFlow's files with shapes computed at run time (models/builders/zoo_shapes.py).

* shape_audio: input signature [-1, -1], a pad and reshapes whose shapes come from
  tf.shape (SHAPE -> STRIDED_SLICE -> PACK -> PAD / RESHAPE); resized to several shapes on one
  interpreter, it folds every shape at allocation.
* shape_values: outputs whose shapes come from the values of an int32 input ``n``,
  several values on one allocation (dynamic outputs, prepared at invoke).

Each runs in edgelite against LiteRT with the same kernel set: float outputs within
LiteRT's own spread between its default and reference kernels (1e-5 relative where that
spread is 0), integer outputs bit-exact; float outputs within 1e-5 relative of TF's.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.conftest import MODELS, litert_module

KERNEL_SETS = ("reference", "default")
AUDIO = ("shape_audio.tf.tflite", "shape_audio.tf_int8.tflite")
VALUES = ("shape_values.tf.tflite", "shape_values.tf_int8.tflite")
AUDIO_SHAPES = ((1, 160), (2, 50), (3, 321), (1, 160))  # the last: back to the first
VALUE_CASES = (1, 3, 4, 3)
REL_TOL = 1e-5
INT8_TOL = 0.1  # the int8 file vs TF's float outputs, relative to max |TF| (measured 0.054)


def _litert(path, kernels: str):
    mod = litert_module()
    resolver = {"reference": mod.OpResolverType.BUILTIN_REF,
                "default": mod.OpResolverType.AUTO}[kernels]
    return mod.Interpreter(model_path=str(path), experimental_op_resolver_type=resolver)


def _runtimes(name: str) -> dict:
    path = MODELS / name
    found = {f"litert-{k}": _litert(path, k) for k in KERNEL_SETS}
    found.update({f"edgelite-{k}": Interpreter(model_path=path, kernels=k)
                  for k in KERNEL_SETS})
    return found


def _quantize(x: np.ndarray, detail) -> np.ndarray:
    if detail["dtype"] != np.int8:
        return x
    scale, zero = detail["quantization"]
    return np.clip(np.round(x / scale) + zero, -128, 127).astype(np.int8)


def _dequantize(y: np.ndarray, detail) -> np.ndarray:
    scale, zero = detail["quantization"]
    return (y.astype(np.float32) - zero) * scale if y.dtype == np.int8 else y


def _assert_agree(outs: dict, what: str) -> None:
    """edgelite-k equals litert-k: integers exactly, floats within LiteRT's spread."""
    for k in KERNEL_SETS:
        got, want = outs[f"edgelite-{k}"], outs[f"litert-{k}"]
        assert got.shape == want.shape and got.dtype == want.dtype, (what, k)
        if got.dtype.kind != "f":
            np.testing.assert_array_equal(got, want, err_msg=f"{what} {k}")
            continue
        spread = np.max(np.abs(outs["litert-default"] - outs["litert-reference"]),
                        initial=0.0)
        tol = max(spread, REL_TOL * np.max(np.abs(want), initial=0.0))
        assert np.max(np.abs(got - want), initial=0.0) <= tol, (what, k)


@pytest.mark.parametrize("name", AUDIO)
def test_audio_resized_matches_litert_and_tf(name):
    golden = np.load(MODELS / "shape_audio.golden.npz")
    runtimes = _runtimes(name)
    for b, t in AUDIO_SHAPES:
        outs = {}
        for key, interp in runtimes.items():
            detail = interp.get_input_details()[0]
            assert detail["shape_signature"].tolist() == [-1, -1]
            interp.resize_tensor_input(detail["index"], [b, t], strict=True)
            interp.allocate_tensors()
            interp.set_tensor(detail["index"], _quantize(golden[f"{b}x{t}/wave"], detail))
            interp.invoke()
            out = interp.get_output_details()[0]
            assert out["shape"].tolist() == [b, -(-t // 16) * 4]  # 4 per (padded) frame
            outs[key] = interp.get_tensor(out["index"])
        _assert_agree(outs, f"{b}x{t}")
        for k in KERNEL_SETS:  # every shape folded at allocation: nothing dynamic
            assert not runtimes[f"edgelite-{k}"]._alloc.dynamic
        want = golden[f"{b}x{t}/features"]  # TF's own outputs
        got = _dequantize(outs["edgelite-reference"], out)
        tol = REL_TOL if got is outs["edgelite-reference"] else INT8_TOL
        assert np.max(np.abs(got - want)) <= tol * np.max(np.abs(want))


@pytest.mark.parametrize("name", VALUES)
def test_values_fix_output_shapes_as_in_litert_and_tf(name):
    golden = np.load(MODELS / "shape_values.golden.npz")
    runtimes = _runtimes(name)
    for interp in runtimes.values():
        interp.allocate_tensors()  # once: every n below runs on this allocation
    for n in VALUE_CASES:
        results = {}
        for key, interp in runtimes.items():
            runner = interp.get_signature_runner()
            x = _quantize(golden[f"{n}/x"], runner.get_input_details()["x"])
            results[key] = runner(x=x, n=np.array(n, np.int32))
        outputs = results["litert-reference"]
        assert "reshaped" in outputs and len(outputs) == (9 if "int8" not in name else 7)
        for out in outputs:
            _assert_agree({k: r[out] for k, r in results.items()}, f"n={n} {out}")
            want, got = golden[f"{n}/{out}"], results["edgelite-reference"][out]
            assert got.shape == want.shape, (n, out)
            if name.endswith(".tf.tflite"):
                np.testing.assert_allclose(got, want, rtol=REL_TOL, atol=0)
