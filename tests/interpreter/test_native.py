"""The native (C) kernel set: its output stage equals the numpy one bit for bit on random
cases of every requantization (fixed point double / single rounding, float64, XNNPACK
fp32), models give identical outputs on both backends in every kernel set, and edgelite
runs without the extension (EDGELITE_NATIVE=0, native=False, the module missing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native
from edgelite.interpreter import quant_math as qm
from edgelite.errors import EdgeliteError
from edgelite.interpreter.kernels.common.requantize import (ExactOutputStage, FixedRequant,
                                                            Float64Requant, Fp32OutputStage,
                                                            NativeStage, NATIVE_FP32)

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"

needs_native = pytest.mark.skipif(
    not native.built() and not os.environ.get("CI"),
    reason="native kernels not built (python setup.py build_ext --inplace)")


def _acc(rng, rows, width, dtype, big):
    bound = 2**31 + 2**33 if big else 2**20
    if dtype == np.float32:
        bound = 2**24
    values = rng.integers(-bound, bound, size=(rows, width))
    # a few ties and extremes
    values.flat[:4] = [0, -1, bound - 1, -bound]
    return values.astype(dtype)


def _exact_case(rng, kind, width):
    reals = rng.uniform(1e-6, 2.0, width) if kind != "tiny" else rng.uniform(1e-9, 1e-3, width)
    if kind == "float64":
        return Float64Requant(np.asarray(reals, np.float64))
    rounding = qm.Rounding.SINGLE if kind == "single" else qm.Rounding.DOUBLE
    m, s = qm.quantize_multipliers(reals, rounding)
    return FixedRequant(m, s, rounding)


@needs_native
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["double", "single", "float64", "tiny"])
@pytest.mark.parametrize("acc_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8])
def test_exact_stage_native_equals_numpy(seed, kind, acc_dtype, out_dtype):
    rng = np.random.default_rng(seed)
    width, rows = int(rng.integers(1, 40)), int(rng.integers(1, 30))
    requant = _exact_case(rng, kind, width if seed % 2 else 1)
    bias = rng.integers(-2**20, 2**20, width).astype(np.float64) if seed % 3 else None
    info = np.iinfo(out_dtype)
    zp = int(rng.integers(info.min, info.max + 1))
    lo, hi = sorted(int(v) for v in rng.integers(info.min, info.max + 1, 2))
    if seed % 2:
        lo, hi = info.min, info.max
    wrap = acc_dtype == np.float64 and seed % 2 == 0
    acc = _acc(rng, rows, width, acc_dtype, big=wrap)
    stage = ExactOutputStage(requant=requant, bias=bias, width=width, zp_out=zp, lo=lo,
                             hi=hi, wrap=wrap)
    fast = ExactOutputStage(requant=requant, bias=bias, width=width, zp_out=zp, lo=lo,
                            hi=hi, wrap=wrap,
                            native=NativeStage.exact(requant, bias, width, zp, lo, hi, wrap))
    want, got = np.empty((rows, width), out_dtype), np.empty((rows, width), out_dtype)
    stage(acc.copy(), want)
    fast(acc.copy(), got)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 1 or rows * width < 4  # not all clamped


@needs_native
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("acc_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8])
def test_fp32_stage_native_equals_numpy(seed, acc_dtype, out_dtype):
    rng = np.random.default_rng(100 + seed)
    width, rows = int(rng.integers(1, 64)), int(rng.integers(1, 20))
    mult = rng.uniform(1e-5, 0.02, width).astype(np.float32)
    if seed % 4 == 0:  # multipliers landing many values on .5 ties
        mult[:] = np.float32(0.5)
    bias = rng.integers(-2**16, 2**16, width).astype(acc_dtype) if seed % 3 else None
    info = np.iinfo(out_dtype)
    zp = int(rng.integers(info.min, info.max + 1))
    lo, hi = (info.min, info.max) if seed % 2 else (max(zp, info.min), info.max)
    wrap = acc_dtype == np.float64 and seed % 2 == 1
    acc = _acc(rng, rows, width, acc_dtype, big=wrap)
    if acc_dtype == np.float32:
        acc = (acc / 2**8).round().astype(np.float32)  # acc + bias stays exact
    f32 = np.empty((rows, width), np.float32) if acc_dtype == np.float64 else None
    kw = dict(bias=bias, multiplier=mult, width=width, zp_out=zp,
              bounds=(np.float32(lo - zp), np.float32(hi - zp)), f32=f32, wrap=wrap)
    stage = Fp32OutputStage(**kw)
    fast = Fp32OutputStage(**kw, native=NativeStage(NATIVE_FP32, bias, mult, None, width,
                                                    zp, lo, hi, wrap))
    want, got = np.empty((rows, width), out_dtype), np.empty((rows, width), out_dtype)
    stage(acc.copy(), want)
    fast(acc.copy(), got)
    np.testing.assert_array_equal(got, want)


def _inputs(interp, seed):
    rng = np.random.default_rng(seed)
    feeds = []
    for d in interp.get_input_details():
        info = np.iinfo(d["dtype"]) if np.issubdtype(d["dtype"], np.integer) else None
        x = rng.integers(info.min, info.max + 1, d["shape"]) if info is not None \
            else rng.standard_normal(d["shape"])
        feeds.append(x.astype(d["dtype"]))
    return feeds


def _run(path, feeds, **kw):
    interp = Interpreter(model_path=str(path), **kw)
    interp.allocate_tensors()
    for d, x in zip(interp.get_input_details(), feeds):
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return interp.backend, [interp.get_tensor(d["index"]).copy()
                            for d in interp.get_output_details()]


@needs_native
@pytest.mark.parametrize("name", ["fashion_mobilenet_v2.tf_int8", "keras_cnn.tf_int8",
                                  "keras_cnn.tf_uint8", "fashion_xception.tf_int8"])
@pytest.mark.parametrize("kernels,rounding", [("default", "double"), ("reference", "double"),
                                              ("reference", "single"), ("micro", "double")])
@pytest.mark.parametrize("threads", [1, 2])
def test_models_identical_on_both_backends(name, kernels, rounding, threads):
    path = MODELS / f"{name}.tflite"
    if kernels == "micro" and "uint8" in name:
        pytest.skip("TFLM has no uint8 kernels (micro/uint8.py)")
    probe = Interpreter(model_path=str(path))
    feeds = _inputs(probe, 7)
    kw = dict(kernels=kernels, rounding=rounding, num_threads=threads)
    backend_n, want = _run(path, feeds, native=False, **kw)
    backend_c, got = _run(path, feeds, native=True, **kw)
    assert (backend_n, backend_c) == ("numpy", "native")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_backend_choice(monkeypatch):
    path = str(MODELS / "keras_cnn.tf_int8.tflite")
    assert Interpreter(model_path=path, native=False).backend == "numpy"
    monkeypatch.setenv("EDGELITE_NATIVE", "0")
    assert Interpreter(model_path=path).backend == "numpy"
    monkeypatch.delenv("EDGELITE_NATIVE")
    assert Interpreter(model_path=path).backend == ("native" if native.built() else "numpy")
    monkeypatch.setattr(native, "module", None)  # as if the extension were not built
    assert Interpreter(model_path=path).backend == "numpy"
    with pytest.raises(EdgeliteError, match="native=True but edgelite's native kernels"):
        Interpreter(model_path=path, native=True)
    assert native.available_backend() == "numpy (native kernels not built)"


def test_runs_without_the_extension(tmp_path):
    """A fresh process where importing the extension fails runs a model on numpy, equal to
    the in-process numpy result."""
    path = MODELS / "keras_cnn.tf_int8.tflite"
    code = (
        "import sys, numpy as np\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.endswith('interpreter._native'): raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from edgelite.interpreter import Interpreter, native\n"
        "assert not native.built()\n"
        f"it = Interpreter(model_path={str(path)!r})\n"
        "it.allocate_tensors(); d = it.get_input_details()[0]\n"
        "it.set_tensor(d['index'], np.load(sys.argv[1])); it.invoke()\n"
        "print(it.backend); np.save(sys.argv[2], it.get_tensor(it.get_output_details()[0]['index']))\n"
    )
    probe = Interpreter(model_path=str(path))
    (x,) = _inputs(probe, 3)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ)
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.npy"),
                          str(tmp_path / "y.npy")], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "numpy"
    _, (want,) = _run(path, [x], native=False)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)


def _both_backends(model: bytes, feeds, **kw):
    results = []
    for flag in (False, True):
        interp = Interpreter(model_content=model, native=flag, **kw)
        interp.allocate_tensors()
        for d, x in zip(interp.get_input_details(), feeds):
            interp.set_tensor(d["index"], x)
        interp.invoke()
        results.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    return results


@needs_native
@pytest.mark.parametrize("seed", range(24))
def test_depthwise_sweep_native_equals_numpy(seed):
    """Random int8 / uint8 depthwise convolutions (shapes, strides, dilations, padding,
    depth multipliers, per-channel / per-tensor, activations), each kernel set and
    rounding, 1 and 2 threads: the C kernel's outputs equal the numpy kernel's."""
    from .kernels.test_conv import ACTIVATIONS, quant_conv_model

    rng = np.random.default_rng(seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    c, mult = int(rng.integers(1, 9)), int(rng.integers(1, 4))
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    h = int(rng.integers(kh * dil[0], 20))
    w = int(rng.integers(kw * dil[1], 20))
    model, feeds = quant_conv_model(
        rng, dtype, (int(rng.integers(1, 3)), h, w, c), (1, kh, kw, c * mult),
        op="DEPTHWISE_CONV_2D", padding=str(rng.choice(["SAME", "VALID"])),
        stride=(int(rng.integers(1, 4)), int(rng.integers(1, 4))), dilation=dil,
        act=str(rng.choice(ACTIVATIONS)), per_channel=bool(seed % 3),
        bias=bool(seed % 5))
    kernels = ["default", "reference", "micro"] if dtype == np.int8 else ["default", "reference"]
    for k in kernels:
        for rounding in ("double", "single"):
            for threads in (1, 2):
                want, got = _both_backends(model, feeds, kernels=k, rounding=rounding,
                                           num_threads=threads)
                np.testing.assert_array_equal(got, want, err_msg=f"{k} {rounding} {threads}")
