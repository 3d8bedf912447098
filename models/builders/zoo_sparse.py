"""Pruned Keras models saved sparse by TF's converter (issue 14: sparse weights).

Run from the repo root (TensorFlow is only in the threads venv):

    /work/wt/threads/.venv/bin/python models/builders/zoo_sparse.py

TF's model-optimization toolkit is not needed: the weights are pruned here by zeroing them
(fixed seeds), which is all ``Optimize.EXPERIMENTAL_SPARSITY`` looks at -- it stores a
constant sparse when enough of it is zero, block-sparse where TFLite has a kernel for the
block shape (1x4 for float FULLY_CONNECTED, 1x16 for int8), CSR otherwise (with a DENSIFY op
in front of ops that cannot read sparse weights). Writes models/sparse_*.tflite and
models/sparse_golden.npz (each file's inputs and the Keras model's outputs on them, the
weights rounded to float16 for the float16 file):

* sparse_mlp.tf_f32:  float, 1x4 block-sparse FULLY_CONNECTED weights (FC version 8, no
  DENSIFY: LiteRT's sparse float FC kernel);
* sparse_cnn.tf_f32:  float CNN, randomly pruned: CSR conv / FC weights behind DENSIFY;
* sparse_cnn.tf_int8: the same, full-integer: int8 DENSIFY;
* sparse_mlp16.tf_int8: full-integer MLP, 1x16 block-sparse int8 FULLY_CONNECTED weights;
* sparse_mlp.tf_f16:  float16 weights: sparse float16 constants read by DEQUANTIZE.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from builders.common import write_npz  # noqa: E402  (deterministic TF settings, npz)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

SEED = 1414
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
N_GOLDEN = 4


def prune(kernel: np.ndarray, block: tuple[int, int], fraction: float,
          rng: np.random.RandomState) -> np.ndarray:
    """Zero ``fraction`` of the blocks of a Keras kernel. Blocks are (output, input)
    channels of TFLite's weight layout: [out, in] for FULLY_CONNECTED (Keras [in, out]),
    and any block (1, 1) prunes single elements of any kernel."""
    if kernel.ndim != 2:
        mask = rng.rand(*kernel.shape) >= fraction
        return kernel * mask
    w = kernel.T  # [out, in]
    bo, bi = block
    o, i = w.shape
    keep = rng.rand(o // bo, i // bi) >= fraction
    mask = np.repeat(np.repeat(keep, bo, axis=0), bi, axis=1)
    return (w * mask).T


def prune_model(model, block, fraction, rng) -> None:
    for layer in model.layers:
        weights = layer.get_weights()
        if weights and weights[0].ndim >= 2:
            layer.set_weights([prune(weights[0], block, fraction, rng)] + weights[1:])


def mlp(rng) -> keras.Model:
    x = keras.Input((64,), name="x")
    h = keras.layers.Dense(64, activation="relu")(x)
    h = keras.layers.Dense(32, activation="relu")(h)
    y = keras.layers.Dense(16)(h)
    return keras.Model(x, y)


def cnn(rng) -> keras.Model:
    x = keras.Input((12, 12, 3), name="x")
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    h = keras.layers.Conv2D(16, 3, strides=2, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(32, activation="relu")(h)
    y = keras.layers.Dense(10)(h)
    return keras.Model(x, y)


def convert(model, kind: str, rng, sample) -> bytes:
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]
    if kind == "int8":
        conv.optimizations.append(tf.lite.Optimize.DEFAULT)
        calib = [rng.randn(1, *sample.shape[1:]).astype(np.float32) for _ in range(32)]
        conv.representative_dataset = lambda: ([c] for c in calib)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    elif kind == "f16":
        conv.optimizations.append(tf.lite.Optimize.DEFAULT)
        conv.target_spec.supported_types = [tf.float16]
    return conv.convert()


def main() -> int:
    tf.random.set_seed(SEED)
    keras.utils.set_random_seed(SEED)
    rng = np.random.RandomState(SEED)
    golden = {}
    for name, build, block, fraction, kinds in (
            ("sparse_mlp", mlp, (1, 4), 0.8, ("f32", "f16")),
            ("sparse_cnn", cnn, (1, 1), 0.8, ("f32", "int8")),
            ("sparse_mlp16", mlp, (1, 16), 0.75, ("int8",))):
        model = build(rng)
        prune_model(model, block, fraction, rng)
        shape = (N_GOLDEN,) + tuple(model.input_shape[1:])
        for kind in kinds:
            x = rng.randn(*shape).astype(np.float32)
            m = model
            if kind == "f16":  # the float16 file computes with float16-rounded weights
                m = keras.models.clone_model(model)
                m.set_weights([w.astype(np.float16).astype(np.float32)
                               for w in model.get_weights()])
            data = convert(model, kind, rng, x)
            fname = f"{name}.tf_{kind}.tflite"
            with open(os.path.join(OUT, fname), "wb") as f:
                f.write(data)
            golden[f"{fname}:x"] = x
            golden[f"{fname}:y"] = m.predict(x, verbose=0)
            print(fname, len(data), "bytes")
    write_npz(Path(OUT) / "sparse_golden.npz", **golden)
    return 0


if __name__ == "__main__":
    sys.exit(main())
