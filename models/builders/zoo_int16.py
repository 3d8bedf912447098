"""16x8 quantized sample files (int16 activations, int8 weights) from TensorFlow's converter.

    /work/wt/threads/.venv/bin/python models/builders/zoo_int16.py      (from the repo root)

Small Keras models, converted with a representative dataset and
``target_spec.supported_ops = [EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]``
(TFLite's 16x8 mode: symmetric int16 activations, int8 weights, int64 conv / dense bias):

* models/int16_cnn.tflite   -- CONV_2D, DEPTHWISE_CONV_2D, MAX / AVERAGE_POOL_2D, ADD, MUL,
  CONCATENATION, RESIZE_*, LEAKY_RELU, FULLY_CONNECTED, SOFTMAX; int16 input and output.
* models/int16_audio.tflite -- FULLY_CONNECTED with TANH / LOGISTIC / RELU activations,
  SUB, MUL, RESHAPE; float input and output (QUANTIZE / DEQUANTIZE at the edges).

TF's 16x8 conversions of the sample GraphDefs themselves are in models/tf_modes/
(models/builders/zoo_tf_modes.py, tests/models/test_tf_modes.py).

Deterministic: fixed seeds, fixed calibration data. tests/models/test_int16_models.py runs
them bit-exact against LiteRT.

The names carry no ".tf" kind on purpose: TF 2.21's 16x8 converter (the TFLite quantizer's
operator properties) writes the int8 operator versions -- CONV_2D 3, FULLY_CONNECTED 4,
ADD / SOFTMAX / pools 2, DEQUANTIZE 2 -- not op_version.cc's 16x8 ones (CONV_2D 8 with
quantized_bias_type, ADD 3 without pot_scale_int16, SOFTMAX 3, ...), which the version
rules (and LiteRT) follow; tests/interpreter/kernels/test_versions.py compares the rules
with TF's "*.tf*.tflite" files only.
"""

from __future__ import annotations

import os
import pathlib

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

keras = tf.keras
L = keras.layers
MODELS = pathlib.Path(__file__).resolve().parent.parent
SEED = 1614


def cnn() -> keras.Model:
    x = L.Input((12, 12, 3), batch_size=1)
    a = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    b = L.DepthwiseConv2D(3, padding="same", activation="relu6")(a)
    s = L.Add()([a, b])
    m = L.MaxPooling2D(2)(s)                                   # 6x6
    c = L.Conv2D(6, 1, strides=1)(m)
    c = L.LeakyReLU(0.2)(c)
    p = L.AveragePooling2D(2)(s)                               # 6x6
    p = L.Conv2D(6, 3, padding="valid")(L.ZeroPadding2D(1)(p))
    q = L.Multiply()([c, p])
    u = L.UpSampling2D(2, interpolation="bilinear")(L.MaxPooling2D(2)(q))   # 6x6
    v = L.UpSampling2D(2, interpolation="nearest")(L.AveragePooling2D(2)(c))
    cat = L.Concatenate()([m, q, u, v])
    g = L.Flatten()(L.AveragePooling2D(3)(cat))
    d = L.Dense(16, activation="relu")(g)
    y = L.Dense(10)(d)
    y = L.Softmax()(y)
    return keras.Model(x, y)


def audio() -> keras.Model:
    x = L.Input((40,), batch_size=1)
    h = L.Dense(32, activation="tanh")(x)
    g = L.Dense(32, activation="sigmoid")(x)
    h = L.Multiply()([h, g])
    r = L.Dense(32, activation="relu")(h)
    h = L.Subtract()([r, h])
    h = L.Reshape((4, 8))(h)
    h = L.Flatten()(h)
    y = L.Dense(4)(h)
    return keras.Model(x, y)


def convert(model: keras.Model, shape, int16_io: bool) -> bytes:
    rng = np.random.RandomState(SEED + 1)
    samples = [rng.normal(0.0, 1.0, (1,) + shape).astype(np.float32) for _ in range(32)]

    def representative():
        for s in samples:
            yield [s]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
    if int16_io:
        conv.inference_input_type = tf.int16
        conv.inference_output_type = tf.int16
    return conv.convert()


def main() -> None:
    for name, make, shape, int16_io in (("cnn", cnn, (12, 12, 3), True),
                                        ("audio", audio, (40,), False)):
        tf.keras.utils.set_random_seed(SEED)
        model = make()
        data = convert(model, shape, int16_io)
        path = MODELS / f"int16_{name}.tflite"
        path.write_bytes(data)
        print(f"{path.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
