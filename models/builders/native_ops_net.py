"""models/native_ops_net.tf_int8.tflite: a small int8 CNN (TF's converter, float input and
output) whose ops are the ones edgelite's native element-wise kernels take -- QUANTIZE,
DEQUANTIZE, ADD, MUL (squeeze-excite channel broadcast and swish), LOGISTIC, TANH,
HARD_SWISH, MEAN, AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX -- beside CONV_2D /
DEPTHWISE_CONV_2D. tests/interpreter/kernels/common/test_native_ops.py runs it on both backends.

    python -m models.builders.native_ops_net     (from the repository root; needs TensorFlow)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "native_ops_net.tf_int8.tflite"


def build() -> bytes:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(7)
    layers = tf.keras.layers
    inp = tf.keras.Input((32, 32, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same")(inp)
    x = layers.Lambda(lambda t: t * tf.nn.relu6(t + 3.0) / 6.0)(x)  # HARD_SWISH
    y = layers.DepthwiseConv2D(3, padding="same")(x)
    y = layers.Lambda(lambda t: t * tf.sigmoid(t))(y)  # swish: LOGISTIC, MUL
    se = layers.GlobalAveragePooling2D(keepdims=True)(y)  # MEAN
    se = layers.Conv2D(4, 1, activation="relu")(se)
    se = layers.Conv2D(16, 1, activation="sigmoid")(se)
    y = layers.Multiply()([y, se])  # MUL, channel broadcast
    x = layers.Add()([x, y])
    x = layers.AveragePooling2D(3, strides=1, padding="same")(x)
    x = layers.Activation("tanh")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(24, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(10, activation="softmax")(x)
    model = tf.keras.Model(inp, out)
    rng = np.random.default_rng(0)

    def data():
        for _ in range(16):
            yield [rng.uniform(-1, 1, (1, 32, 32, 3)).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = data
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return conv.convert()


if __name__ == "__main__":
    OUT.write_bytes(build())
    print(OUT, OUT.stat().st_size, "bytes")
