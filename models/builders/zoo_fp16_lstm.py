"""TF's float16 conversion of a small Keras LSTM (issue 14: the files people actually have).

Run from the repository root (TensorFlow is needed; edgelite's tests never import it):

    /work/wt/threads/.venv/bin/python models/builders/zoo_fp16_lstm.py

Writes, deterministically (fixed seed), models/fp16_lstm.tf_fp16.tflite: Input [1, 5, 8] ->
LSTM(16) -> Dense(4), converted with Optimize.DEFAULT and supported_types [tf.float16].
The converter stores the weights as float16 constants read through DEQUANTIZE, and each
LSTM state (a variable tensor) is written by a DEQUANTIZE of a float16 zero constant:
LiteRT runs that DEQUANTIZE on the first invoke, after which the state carries between
invokes until reset_all_variables().
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fp16_lstm.tf_fp16.tflite")
SEED = 14


def build() -> keras.Model:
    tf.keras.utils.set_random_seed(SEED)
    inputs = keras.Input((5, 8), batch_size=1)
    x = keras.layers.LSTM(16)(inputs)
    outputs = keras.layers.Dense(4)(x)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(SEED)
    model.set_weights([rng.normal(scale=0.5, size=w.shape).astype(np.float32)
                       for w in model.get_weights()])
    return model


def main() -> None:
    model = build()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.target_spec.supported_types = [tf.float16]
    data = conv.convert()
    with open(OUT, "wb") as f:
        f.write(data)
    print(f"wrote {OUT} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
