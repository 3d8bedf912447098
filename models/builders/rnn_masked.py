"""Masked recurrent models (issue 25: op counts of a masked BiLSTM). Dev-only: needs TensorFlow.

    TF_USE_LEGACY_KERAS=1 python models/builders/rnn_masked.py

Keras' masking (Embedding(mask_zero=True)) keeps the RNN a loop in TensorFlow's converter
too (no fused op): each step selects the new or the old state per sequence with the mask.
Writes, per model, models/<name>.pb (frozen, control flow lowered), <name>.golden.npz (token
sequences padded with 0 after a varying length, and Keras' outputs), <name>.tf_float.tflite
(TF's converter from the Keras model) and the op counts in rnn_masked.json.

  rnn_masked_bilstm  tokens [1, 12] -> Embedding(30, 8, mask_zero) -> Bidirectional(LSTM(10))
                     -> Dense(5, softmax)
  rnn_masked_gru     tokens [1, 12] -> Embedding(30, 8, mask_zero) -> GRU(10, sequences)
                     -> GlobalAveragePooling1D (masked) -> Dense(5, softmax)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.builders.common import (  # noqa: E402
    MODELS_DIR, atomic_write, freeze_keras, interpreter, keras, print_written, seed_everything,
    tf, write_json, write_npz)

import numpy as np  # noqa: E402

SEQ, VOCAB, SAMPLES = 12, 30, 6
SEED = 2525


def _bilstm(x):
    x = keras.layers.Bidirectional(keras.layers.LSTM(10))(x)
    return keras.layers.Dense(5, activation="softmax")(x)


def _gru(x):
    x = keras.layers.GRU(10, return_sequences=True)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.layers.Dense(5, activation="softmax")(x)


MODELS = {"rnn_masked_bilstm": _bilstm, "rnn_masked_gru": _gru}


def build(name: str):
    seed_everything(SEED)
    tokens = keras.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCAB, 8, mask_zero=True)(tokens)
    model = keras.Model(tokens, MODELS[name](x), name=name)
    rng = np.random.default_rng(SEED)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype(np.float32)
                       for w in model.get_weights()])
    return model


def golden_tokens() -> np.ndarray:
    rng = np.random.default_rng(SEED + 1)
    x = rng.integers(1, VOCAB, (SAMPLES, SEQ)).astype(np.int32)
    for k, length in enumerate((12, 9, 5, 1, 7, 3)):
        x[k, length:] = 0   # padding after each sequence's length
    return x


def main() -> None:
    facts = {}
    x = golden_tokens()
    for name in MODELS:
        model = build(name)
        gd = freeze_keras(model, {"tokens": ([1, SEQ], tf.int32)}, output_name="output")
        atomic_write(MODELS_DIR / f"{name}.pb", gd.SerializeToString())
        write_npz(MODELS_DIR / f"{name}.golden.npz", tokens=x,
                  output=model.predict(x, batch_size=1, verbose=0))
        data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
        atomic_write(MODELS_DIR / f"{name}.tf_float.tflite", data)
        interp = interpreter(data, "ref")
        facts[name] = {"tf_float_main_ops": [d["op_name"] for d in interp._get_ops_details()]}
    write_json(MODELS_DIR / "rnn_masked.json", facts)
    print_written()


if __name__ == "__main__":
    main()
