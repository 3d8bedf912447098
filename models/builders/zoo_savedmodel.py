"""SavedModels written by TensorFlow, for the reader that needs none (issue 17).

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_savedmodel     (repo root)

models/savedmodel/<name>/ is a SavedModel directory as `tf.saved_model.save` writes it
(saved_model.pb, variables/variables.index, variables/variables.data-00000-of-00001; the
fingerprint and the empty assets folder are left out) and <name>.json records what TF
reads back: every checkpoint key with its dtype, shape and values (small tensors), and the
signatures' outputs on fixed inputs.

  bundle_dtypes   a tf.Module with variables of several dtypes (float32 / float16 / float64,
                  int8 / int32 / int64, uint8, bool, a 0-d one, an empty one) and a string
                  variable, one signature reading them all
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .common import MODELS_DIR, SEED, np, tf, write_json

OUT = MODELS_DIR / "savedmodel"


def _copy(saved: Path, name: str) -> Path:
    dest = OUT / name
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "variables").mkdir(parents=True)
    shutil.copy(saved / "saved_model.pb", dest / "saved_model.pb")
    for f in (saved / "variables").iterdir():
        shutil.copy(f, dest / "variables" / f.name)
    return dest


def build_bundle_dtypes() -> None:
    rng = np.random.RandomState(SEED + 1700)

    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="w")
            self.h = tf.Variable(rng.normal(size=(5,)).astype(np.float16), name="h")
            self.d = tf.Variable(rng.normal(size=(2, 2)).astype(np.float64), name="d")
            self.i8 = tf.Variable(rng.randint(-128, 128, (6,)).astype(np.int8), name="i8")
            self.i32 = tf.Variable(rng.randint(-1000, 1000, (2, 3)).astype(np.int32), name="i32")
            self.i64 = tf.Variable(np.array([1, -2, 2**40], np.int64), name="i64")
            self.u8 = tf.Variable(np.arange(7, dtype=np.uint8), name="u8")
            self.flag = tf.Variable(np.array([True, False, True]), name="flag")
            self.scalar = tf.Variable(np.float32(2.5), name="scalar")
            self.empty = tf.Variable(np.zeros((0, 3), np.float32), name="empty")
            self.words = tf.Variable(np.array([b"alpha", b"", b"gamma" * 40]), name="words")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def serve(self, x):
            y = tf.matmul(x, self.w) + self.scalar + tf.reduce_sum(tf.cast(self.h, tf.float32))
            return {"y": y, "n": tf.size(self.words) + tf.reduce_sum(tf.cast(self.i8, tf.int32))}

    module = Module()
    with tempfile.TemporaryDirectory() as tmp:
        tf.saved_model.save(module, tmp, signatures={"serving_default": module.serve})
        dest = _copy(Path(tmp), "bundle_dtypes")
    reader = tf.train.load_checkpoint(str(dest / "variables" / "variables"))
    keys = {}
    for key, shape in sorted(reader.get_variable_to_shape_map().items()):
        value = reader.get_tensor(key)
        if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
            keys[key] = {"dtype": "string", "shape": [], "bytes": len(value)}
            continue
        arr = np.asarray(value)
        listed = [v.decode() if isinstance(v, bytes) else v for v in arr.ravel().tolist()]
        keys[key] = {"dtype": str(arr.dtype) if arr.dtype != object else "string",
                     "shape": list(shape), "values": listed}
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    out = module.serve(tf.constant(x))
    write_json(OUT / "bundle_dtypes.json", compact=True, obj={
        "built_with": f"tensorflow {tf.__version__} tf.saved_model.save of a tf.Module",
        "checkpoint_keys": keys,
        "signature_serving_default": {"inputs": {"x": x.tolist()},
                                      "outputs": {k: np.asarray(v).tolist()
                                                  for k, v in out.items()}}})


def main() -> None:
    build_bundle_dtypes()
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            print(f"  {p.relative_to(MODELS_DIR.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
