"""A second real character-level LSTM, trained on other text than text_lstm (issue 25: int8
sequence models). Dev-only: needs TensorFlow.

    python models/builders/license_lstm.py

Text: the licence texts of /usr/share/common-licenses (Debian's base-files: legal English,
offline), lower-cased, the 47 most common characters plus one "other" id (0). The files
are read in name order; the first 85 % of the text trains, the rest is held out.

Model (tf-keras): tokens [1, 40] int32 -> Embedding(48, 12) -> LSTM(48), last state only
-> Dense(48) -> softmax: the next character. One LSTM whose state the head reads once,
where text_lstm stacks two and reads every step. Trained 6 epochs (Adam).

Writes (models/): license_lstm.pb, .tf_int8.tflite (TF's full-integer file, calibrated on
the calibration windows), .calib.npz (tokens [64, 40], training text), .golden.npz
(tokens [64, 40] held-out windows, next, output: Keras' probabilities), .json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.builders.common import (  # noqa: E402
    MODELS_DIR, atomic_write, freeze_keras, interpreter, keras, print_written, seed_everything,
    tf, write_json, write_npz)
from models.builders.text_lstm import windows  # noqa: E402

import numpy as np  # noqa: E402

NAME = "license_lstm"
SEQ, VOCAB, EMB, UNITS = 40, 48, 12, 48
N_CALIB, N_TEST, N_TRAIN = 64, 64, 40000
EPOCHS = 6
SEED = 7
TEXTS = Path("/usr/share/common-licenses")


def corpus() -> tuple[np.ndarray, list[str]]:
    import collections
    text = "\n".join(p.read_text("utf-8", "replace") for p in sorted(TEXTS.iterdir())
                     if p.is_file() and not p.is_symlink()).lower()
    common = [c for c, _ in collections.Counter(text).most_common(VOCAB - 1)]
    index = {c: i + 1 for i, c in enumerate(sorted(common))}
    return np.array([index.get(c, 0) for c in text], np.int32), ["?"] + sorted(common)


def build_model():
    tokens = keras.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCAB, EMB)(tokens)
    x = keras.layers.LSTM(UNITS)(x)
    probs = keras.layers.Dense(VOCAB, activation="softmax")(x)
    return keras.Model(tokens, probs, name=NAME)


def main() -> None:
    ids, alphabet = corpus()
    seed_everything(SEED)
    split = int(len(ids) * 0.85)
    rng = np.random.default_rng(SEED)
    x, y = windows(ids, rng.integers(0, split - SEQ - 1, N_TRAIN), SEQ)
    model = build_model()
    twin_in = keras.Input((SEQ,), dtype="int32")   # free batch size for training
    twin = keras.Model(twin_in, model(twin_in))
    twin.compile(keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy",
                 metrics=["accuracy"])
    twin.fit(x, y, batch_size=128, epochs=EPOCHS, verbose=2)
    calib, _ = windows(ids, rng.integers(0, split - SEQ - 1, N_CALIB), SEQ)
    test, nxt = windows(ids, rng.integers(split, len(ids) - SEQ - 1, N_TEST), SEQ)
    golden = model.predict(test, batch_size=1, verbose=0)
    gd = freeze_keras(model, {"tokens": ([1, SEQ], tf.int32)})
    atomic_write(MODELS_DIR / f"{NAME}.pb", gd.SerializeToString())
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([calib[k:k + 1]] for k in range(len(calib)))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    tf_int8 = conv.convert()
    atomic_write(MODELS_DIR / f"{NAME}.tf_int8.tflite", tf_int8)
    ops = [d["op_name"] for d in interpreter(tf_int8, "ref")._get_ops_details()]
    write_npz(MODELS_DIR / f"{NAME}.calib.npz", tokens=calib)
    write_npz(MODELS_DIR / f"{NAME}.golden.npz", tokens=test, next=nxt, output=golden)
    write_json(MODELS_DIR / f"{NAME}.json", {
        "about": __doc__.strip().splitlines()[0], "alphabet": "".join(alphabet),
        "keras_top1_held_out": float(np.mean(golden.argmax(1) == nxt)),
        "files": {f"{NAME}.tf_int8.tflite": {"bytes": len(tf_int8), "ops": ops}}})
    print(f"held-out top-1 {np.mean(golden.argmax(1) == nxt):.3f}")
    print_written()


if __name__ == "__main__":
    main()
