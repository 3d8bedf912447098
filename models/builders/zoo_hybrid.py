"""Dynamic-range (hybrid) .tflite files from TensorFlow's own converter (dev-only, needs
TensorFlow): a small Keras CNN converted with ``Optimize.DEFAULT`` and no representative
dataset, so TF stores the int8 weights of every layer with >= 1024 weights and keeps the
activations float.

    /work/wt/threads/.venv/bin/python models/builders/zoo_hybrid.py      (from the repo root)

Writes models/hybrid_*.tflite (deterministic: fixed seeds; TF 2.21, tf-keras):

  hybrid_cnn.tf_dr.tflite             per-channel weights (TF's default); TF sets
                                      asymmetric_quantize_inputs on FULLY_CONNECTED and
                                      BATCH_MATMUL (it always does; CONV_2D /
                                      DEPTHWISE_CONV_2D have no such option)
  hybrid_cnn.tf_dr_sym.tflite         the same file with asymmetric_quantize_inputs
                                      cleared (TF 2.21 has no converter flag for it)
  hybrid_cnn_pt.tf_dr.tflite          per-tensor weights (_experimental_disable_per_channel)
  hybrid_cnn_pt.tf_dr_sym.tflite      the same, symmetric inputs

The CNN (every layer with weights hybrid, the per-tensor model's depthwise layer
excepted): CONV_2D, CONV_2D stride 2, DEPTHWISE_CONV_2D x4, a 1x1 CONV_2D, a dilated
CONV_2D, MEAN, FULLY_CONNECTED, a batched MATMUL with a constant (BATCH_MATMUL:
[2, 4, 16] @ [2, 16, 40] -- one batch dimension: with more, LiteRT's reference kernel
misindexes its scales, see kernels/batch_matmul.py), FULLY_CONNECTED; plus an Embedding
(TF writes an int8 GATHER + DEQUANTIZE, not EMBEDDING_LOOKUP). The per-tensor model
keeps its depthwise layer under 1024 weights (float): LiteRT's hybrid depthwise kernel
misreads a per-tensor filter scale.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402

MODELS = Path(__file__).resolve().parents[1]
BATCH = 2


def cnn(depth_multiplier: int) -> keras.Model:
    keras.utils.set_random_seed(0)
    image = keras.Input((12, 12, 3), batch_size=BATCH, name="image")
    x = keras.layers.Conv2D(40, 3, padding="same", activation="relu")(image)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.DepthwiseConv2D(3, depth_multiplier=depth_multiplier, padding="same",
                                     activation="relu6")(x)
    x = keras.layers.Conv2D(32, 1, activation="relu")(x)
    x = keras.layers.Conv2D(16, 3, dilation_rate=2, padding="same")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    x = keras.layers.Reshape((4, 16))(x)
    w = tf.constant(np.random.default_rng(0).standard_normal((BATCH, 16, 40))
                    .astype(np.float32) * np.float32(0.2))
    x = keras.layers.Lambda(lambda t: tf.matmul(t, w), output_shape=(4, 40))(x)
    x = keras.layers.Flatten()(x)
    logits = keras.layers.Dense(10, name="logits")(x)
    ids = keras.Input((5,), batch_size=BATCH, dtype=tf.int32, name="ids")
    embedded = keras.layers.Embedding(200, 16, name="embedding")(ids)
    return keras.Model([image, ids], [logits, embedded])


def convert(model: keras.Model, per_channel: bool) -> bytes:
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter._experimental_disable_per_channel = not per_channel
    return converter.convert()


# The operator version TF's op_version.cc gives once asymmetric_quantize_inputs is off.
SYMMETRIC_VERSION = {("FULLY_CONNECTED", 9): 3, ("BATCH_MATMUL", 4): 1}


def clear_asymmetric(data: bytes) -> bytes:
    """The model with every operator's asymmetric_quantize_inputs option set to False,
    and its operator version set as TF would write it for that."""
    m = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    for sg in m.subgraphs:
        for op in sg.operators:
            if getattr(op.builtinOptions, "asymmetricQuantizeInputs", False):
                op.builtinOptions.asymmetricQuantizeInputs = False
                code = m.operatorCodes[op.opcodeIndex]
                key = (names[max(code.builtinCode, code.deprecatedBuiltinCode)], code.version)
                code.version = SYMMETRIC_VERSION.get(key, code.version)
    import flatbuffers

    b = flatbuffers.Builder(len(data))
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def main() -> None:
    for name, per_channel, multiplier in (("hybrid_cnn", True, 4), ("hybrid_cnn_pt", False, 1)):
        data = convert(cnn(multiplier), per_channel)
        for suffix, content in (("tf_dr", data), ("tf_dr_sym", clear_asymmetric(data))):
            path = MODELS / f"{name}.{suffix}.tflite"
            path.write_bytes(content)
            print(f"{path.name}: {len(content)} bytes")


if __name__ == "__main__":
    main()
