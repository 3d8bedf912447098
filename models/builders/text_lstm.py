"""A real character-level text model with two LSTM layers (issue 25: recurrent state, int8
sequences). Dev-only: needs TensorFlow; edgelite's tests read the files it writes.

    python models/builders/text_lstm.py

Text: Python's own documentation topics (``pydoc_data.topics``, shipped with every CPython:
real English prose and code, offline). Lower-cased, characters outside the 63 most common
mapped to one "other" id (0). The first 85 % of the text trains, the rest is held out.

Model (tf-keras): tokens [1, 32] int32 -> Embedding(64, 16) -> LSTM(64, sequences) ->
LSTM(64, sequences) -> attention-weighted sum over time (Dense(1) scores, softmax over
time, weighted sum) -> Dense(64) -> softmax: the next character. Trained 10 epochs (Adam).

Writes (models/):
  text_lstm.pb               the frozen graph (Keras' LSTM freezes to While loops)
  text_lstm.tf_float.tflite  TF's converter from the Keras model: two fused, stateful
                             UNIDIRECTIONAL_SEQUENCE_LSTMs (h / c carried between invokes)
  text_lstm.tf_dr.tflite     the same, dynamic-range (Optimize.DEFAULT, no dataset)
  text_lstm.tf_int8.tflite   full-integer LSTMs (int16 cell), float output, calibrated on
                             the 64 calibration windows
  text_lstm.calib.npz        tokens [64, 32]: windows of the training text (calibration)
  text_lstm.golden.npz       tokens [64, 32]: held-out windows, next [64]: the characters
                             that follow them, output [64, 64]: Keras' probabilities, and per
                             TF file and LiteRT kernel set the outputs of the 64 windows
                             invoked one after another in one interpreter without a reset
                             (litert_<file>_<set>_in_a_row)
  text_lstm.json             sizes, op lists, TF's own accuracy figures
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.builders.common import (  # noqa: E402
    MODELS_DIR, atomic_write, freeze_keras, interpreter, keras, print_written, seed_everything,
    tf, write_json, write_npz)

import numpy as np  # noqa: E402

NAME = "text_lstm"
SEQ, VOCAB, EMB, UNITS = 32, 64, 16, 64
N_CALIB, N_TEST = 64, 64
EPOCHS = 10
SEED = 25


def corpus() -> tuple[np.ndarray, list[str]]:
    """The documentation text as ids, and the alphabet (id 0: any other character)."""
    import collections

    import pydoc_data.topics as topics
    text = "\n".join(topics.topics[k] for k in sorted(topics.topics)).lower()
    common = [c for c, _ in collections.Counter(text).most_common(VOCAB - 1)]
    index = {c: i + 1 for i, c in enumerate(sorted(common))}
    return np.array([index.get(c, 0) for c in text], np.int32), ["?"] + sorted(common)


def windows(ids: np.ndarray, starts: np.ndarray, seq: int = SEQ) -> tuple[np.ndarray, np.ndarray]:
    x = np.stack([ids[s:s + seq] for s in starts])
    return x.astype(np.int32), ids[starts + seq].astype(np.int32)


def build_model():
    tokens = keras.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCAB, EMB)(tokens)
    x = keras.layers.LSTM(UNITS, return_sequences=True)(x)
    x = keras.layers.LSTM(UNITS, return_sequences=True)(x)
    scores = keras.layers.Dense(1)(x)                        # [1, T, 1]
    weights = keras.layers.Softmax(axis=1)(scores)           # over time
    context = keras.layers.Dot(axes=1)([weights, x])         # [1, 1, U]
    context = keras.layers.Flatten()(context)
    probs = keras.layers.Dense(VOCAB, activation="softmax")(context)
    return keras.Model(tokens, probs, name=NAME)


def train(ids: np.ndarray):
    seed_everything(SEED)
    split = int(len(ids) * 0.85)
    rng = np.random.default_rng(SEED)
    starts = rng.integers(0, split - SEQ - 1, 60000)
    x, y = windows(ids, starts)
    model = build_model()
    # train with a free batch size on a twin of the model, then copy the weights
    twin_in = keras.Input((SEQ,), dtype="int32")
    twin = keras.Model(twin_in, model(twin_in))
    twin.compile(keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy",
                 metrics=["accuracy"])
    twin.fit(x, y, batch_size=128, epochs=EPOCHS, verbose=2)
    calib, _ = windows(ids, rng.integers(0, split - SEQ - 1, N_CALIB))
    test, nxt = windows(ids, rng.integers(split, len(ids) - SEQ - 1, N_TEST))
    return model, calib, test, nxt


def tf_files(model, calib: np.ndarray) -> dict[str, bytes]:
    files = {}
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    files["tf_float"] = conv.convert()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    files["tf_dr"] = conv.convert()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([calib[k:k + 1]] for k in range(len(calib)))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    files["tf_int8"] = conv.convert()
    return files


def in_a_row(data: bytes, x: np.ndarray, resolver: str) -> np.ndarray:
    """LiteRT's outputs for the windows invoked one after another, no reset."""
    interp = interpreter(data, resolver)
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    ys = []
    for k in range(len(x)):
        interp.set_tensor(inp["index"], x[k:k + 1])
        interp.invoke()
        ys.append(interp.get_tensor(out["index"])[0].copy())
    return np.stack(ys)


def main() -> None:
    ids, alphabet = corpus()
    model, calib, test, nxt = train(ids)
    golden = model.predict(test, batch_size=1, verbose=0)
    gd = freeze_keras(model, {"tokens": ([1, SEQ], tf.int32)})
    atomic_write(MODELS_DIR / f"{NAME}.pb", gd.SerializeToString())
    arrays = dict(tokens=test, next=nxt, output=golden)
    facts = {"about": __doc__.strip().splitlines()[0], "alphabet": "".join(alphabet),
             "keras_top1_held_out": float(np.mean(golden.argmax(1) == nxt)), "files": {}}
    for kind, data in tf_files(model, calib).items():
        atomic_write(MODELS_DIR / f"{NAME}.{kind}.tflite", data)
        interp = interpreter(data, "ref")
        facts["files"][f"{NAME}.{kind}.tflite"] = {
            "bytes": len(data), "ops": [d["op_name"] for d in interp._get_ops_details()]}
        for resolver in ("ref", "default"):
            arrays[f"litert_{kind}_{resolver}_in_a_row"] = in_a_row(data, test, resolver)
    write_npz(MODELS_DIR / f"{NAME}.calib.npz", tokens=calib)
    write_npz(MODELS_DIR / f"{NAME}.golden.npz", **arrays)
    write_json(MODELS_DIR / f"{NAME}.json", facts)
    print(facts["keras_top1_held_out"])
    print_written()


if __name__ == "__main__":
    main()
