"""keras.applications models with random weights, as Keras files, for converter/keras/.

    python -m models.builders.keras_applications            # models/keras/mobilenetv2_035
    python -m models.builders.keras_applications --all DIR  # + EfficientNetB0, ResNet50,
                                                            #   DenseNet121 (too big to commit)

Each model gets seeded random weights with spread (BatchNormalization variances in
[0.5, 1.5]) -- `weights=None` would leave BN at identity -- and is saved with Keras' outputs
on two random inputs and TensorFlow's own float op count (from_keras_model, all subgraphs).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import keras  # noqa: E402

from .keras_files import randomize, tf_op_count  # noqa: E402

A = keras.applications
HEAD = {"weights": None, "classes": 10, "classifier_activation": None}  # logits compared
COMMITTED = {"mobilenetv2_035": lambda: A.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35,
                                                      **HEAD)}
LARGE = {
    "efficientnetb0": lambda: A.EfficientNetB0(input_shape=(96, 96, 3), **HEAD),
    "resnet50": lambda: A.ResNet50(input_shape=(64, 64, 3), **HEAD),
    "densenet121": lambda: A.DenseNet121(input_shape=(64, 64, 3), **HEAD),
}


def build(name: str, make, out: Path, seed: int) -> dict:
    keras.utils.set_random_seed(seed)
    model = make()
    rng = np.random.RandomState(seed)
    randomize(model, rng)
    shape = (2,) + tuple(model.inputs[0].shape[1:])
    x = rng.uniform(0, 255, shape).astype("float32") if name.startswith("efficient") else \
        rng.uniform(-1, 1, shape).astype("float32")
    y = np.concatenate([np.asarray(model(x[i:i + 1], training=False)) for i in range(2)])
    model.save(out / f"{name}.keras")
    np.savez(out / f"{name}.golden.npz", in_0=x, out_0=y)
    return {"file": f"{name}.keras", "tf_ops": tf_op_count(model), "keras": keras.__version__}


def main() -> None:
    out = Path(__file__).resolve().parents[1] / "keras"
    models = dict(COMMITTED)
    meta_path = out / "keras_applications.json"
    if "--all" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--all") + 1])
        out.mkdir(parents=True, exist_ok=True)
        models.update(LARGE)
        meta_path = out / "keras_applications.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    for k, (name, make) in enumerate(models.items()):
        meta[name] = build(name, make, out, 310 + k)
        print(name, meta[name], flush=True)
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
