#!/usr/bin/env python
"""Hybrid (dynamic-range) recurrent models for issue 14: small seeded Keras LSTMs that
TensorFlow's converter turns into UNIDIRECTIONAL_SEQUENCE_LSTMs with int8 weights and
float activations (Optimize.DEFAULT, no representative dataset). Dev-only, needs
TensorFlow; deterministic (seeded numpy weights). From the repository root:

    /work/wt/threads/.venv/bin/python models/builders/zoo_hybrid_rnn.py

writes models/hybrid_rnn_*.tf_dr.tflite:

* hybrid_rnn_lstm.tf_dr.tflite -- LSTM(40) over [1, 5, 48], return_sequences: TF's default
  dynamic-range conversion, which writes asymmetric_quantize_inputs = true (op version 3);
* hybrid_rnn_lstm_sym.tf_dr.tflite -- the same file with asymmetric_quantize_inputs set to
  false (version 2: per-row symmetric input quantization, what older converters
  wrote). TF 2.21 writes true with every switch tried (the MLIR and the legacy
  dynamic-range quantizer, ``_experimental_disable_per_channel``), so the option is
  edited in TF's file with TF's own schema module;
* hybrid_rnn_lstm_stack.tf_dr.tflite -- two stacked LSTMs (the second one's state 32 wide)
  over a batch of 2, time-major off, per-channel quantization disabled
  (``_experimental_disable_per_channel``: the LSTM weights are per tensor either way).

TensorFlow only quantizes weight tensors with at least 1024 elements
(quantize_weights' default min_elements), so every weight matrix here has more.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent
SEED = 14


def _seeded(model: keras.Model, seed: int) -> keras.Model:
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(0, 0.25, w.shape).astype(np.float32)
                       for w in model.get_weights()])
    return model


def lstm(batch: int = 1) -> keras.Model:
    x = keras.Input((5, 48), batch_size=batch)
    return _seeded(keras.Model(x, keras.layers.LSTM(40, return_sequences=True)(x)), SEED)


def stacked(batch: int = 2) -> keras.Model:
    x = keras.Input((4, 40), batch_size=batch)
    h = keras.layers.LSTM(36, return_sequences=True)(x)
    y = keras.layers.LSTM(32)(h)
    return _seeded(keras.Model(x, y), SEED + 1)


def symmetric_inputs(data: bytes) -> bytes:
    """``data`` with every LSTM's asymmetric_quantize_inputs false (op version 2)."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    for op in (op for sg in model.subgraphs for op in sg.operators):
        code = model.operatorCodes[op.opcodeIndex]
        if code.builtinCode == schema.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM:
            op.builtinOptions.asymmetricQuantizeInputs = False
            code.version = 2
    builder = flatbuffers.Builder(len(data) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def convert(model: keras.Model, **flags) -> bytes:
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    for key, value in flags.items():
        setattr(converter, key, value)
    return converter.convert()


BUILDS = {
    "hybrid_rnn_lstm": lambda: convert(lstm()),
    "hybrid_rnn_lstm_sym": lambda: symmetric_inputs(convert(lstm())),
    "hybrid_rnn_lstm_stack": lambda: convert(stacked(), _experimental_disable_per_channel=True),
}


def main() -> int:
    tf.keras.utils.set_random_seed(SEED)
    for name, build in BUILDS.items():
        data = build()
        path = MODELS / f"{name}.tf_dr.tflite"
        path.write_bytes(data)
        print(f"{path.relative_to(MODELS.parent)}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
