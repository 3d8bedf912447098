"""Dynamic-range (hybrid) TRANSPOSE_CONV files from TensorFlow's own converter (dev-only,
needs TensorFlow): a small Keras decoder of three Conv2DTranspose layers converted with
``Optimize.DEFAULT`` and no representative dataset, so TF stores the int8 weights of every
layer (each has >= 1024 weights) and keeps the activations float.

    /work/wt/threads/.venv/bin/python models/builders/zoo_hybrid_tconv.py   (from the repo root)

Writes (deterministic: fixed seeds; TF 2.21, tf-keras):

  models/hybrid_tconv.tf_dr.tflite      per-channel weights (TF's default)
  models/hybrid_tconv_pt.tf_dr.tflite   per-tensor weights (_experimental_disable_per_channel)

The layers: 3x3 stride 2 SAME + RELU (XNNPACK takes it on LiteRT's default kernels), 1x1
stride 2 SAME (a stride larger than the kernel: XNNPACK declines it, the builtin hybrid
kernel runs), 4x4 stride 2 VALID. TF writes no bias (zero-initialized Keras biases).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

MODELS = Path(__file__).resolve().parents[1]


def decoder() -> keras.Model:
    keras.utils.set_random_seed(0)
    image = keras.Input((6, 6, 16), batch_size=2, name="x")
    y = keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(image)
    y = keras.layers.Conv2DTranspose(40, 1, strides=2, padding="same")(y)
    y = keras.layers.Conv2DTranspose(8, 4, strides=2, padding="valid")(y)
    return keras.Model(image, y)


def convert(model: keras.Model, per_channel: bool) -> bytes:
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter._experimental_disable_per_channel = not per_channel
    return converter.convert()


def main() -> None:
    model = decoder()
    for name, per_channel in (("hybrid_tconv", True), ("hybrid_tconv_pt", False)):
        path = MODELS / f"{name}.tf_dr.tflite"
        path.write_bytes(convert(model, per_channel))
        print(path, path.stat().st_size)


if __name__ == "__main__":
    main()
