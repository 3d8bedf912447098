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
  sm_keras_cnn_export / sm_keras_cnn_save
                  a tf-keras digits CNN (conv, batch norm, depthwise, dense, softmax) written
                  by `model.export()` and by `tf.saved_model.save`
  sm_keras_lstm   a tf-keras text model: Embedding -> LSTM -> Dense, int32 token ids (batch 1),
                  written by keras.export.ExportArchive
  sm_module_two   a tf.Module with two signatures ("serving_default", "encode": two inputs)
  sm_tf1_builder  a TF1 graph (VariableV2) saved by tf.compat.v1.saved_model.Builder
  ckpt_tf1/       a TF1 checkpoint (model.ckpt.index / .data / .meta) of the same kind of graph

Per SavedModel <name>.golden.npz holds, per signature, its inputs (`<sig>/in/<name>`) and TF's
outputs (`<sig>/out/<name>`); <name>.json the signatures' names and TF's from_saved_model op
list per signature.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .common import (MODELS_DIR, SEED, keras, load_data, np, seed_everything, tf, write_json,
                     write_npz)

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


N_GOLDEN = 4


def _golden(dest_name: str, signatures: dict) -> None:
    """signatures: key -> (concrete function, {input name: array})."""
    arrays, info = {}, {"signatures": {}}
    for key, (fn, feeds) in signatures.items():
        out = fn(**{k: tf.constant(v) for k, v in feeds.items()})
        for k, v in feeds.items():
            arrays[f"{key}/in/{k}"] = v
        for k, v in out.items():
            arrays[f"{key}/out/{k}"] = np.asarray(v)
        info["signatures"][key] = {"inputs": sorted(feeds), "outputs": sorted(out)}
        conv = tf.lite.TFLiteConverter.from_saved_model(str(OUT / dest_name), signature_keys=[key])
        try:
            model = conv.convert()
        except Exception as exc:  # record it
            info["signatures"][key]["tf_error"] = f"{type(exc).__name__}: {exc}"[:2000]
            continue
        interp = tf.lite.Interpreter(model_content=model)
        ops = [d["op_name"] for d in interp._get_ops_details()]
        info["signatures"][key].update({"tf_ops": ops, "tf_n_ops": len(ops)})
    write_npz(OUT / f"{dest_name}.golden.npz", **arrays)
    info["built_with"] = f"tensorflow {tf.__version__}"
    write_json(OUT / f"{dest_name}.json", info, compact=True)


def _digits():
    x_train, y_train, x_test, _ = load_data()
    return x_train, y_train, x_test[:N_GOLDEN]


def _keras_cnn():
    seed_everything(SEED)
    layers = keras.layers
    inp = keras.Input((8, 8, 1), name="image")
    h = layers.Conv2D(8, 3, padding="same", use_bias=False, name="conv")(inp)
    h = layers.BatchNormalization(name="bn")(h)
    h = layers.ReLU(6.0, name="relu6")(h)
    h = layers.DepthwiseConv2D(3, padding="same", name="dw")(h)
    h = layers.ReLU(name="relu")(h)
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    out = layers.Dense(10, activation="softmax", name="probs")(h)
    model = keras.Model(inp, out, name="digits_cnn")
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    x_train, y_train, _ = _digits()
    model.fit(x_train, y_train, batch_size=64, epochs=3, verbose=0)
    return model


def _save(fn_save, name: str) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        fn_save(tmp)
        return _copy(Path(tmp), name)


def build_keras_cnn() -> None:
    model = _keras_cnn()
    _, _, x = _digits()
    _save(lambda d: model.export(d), "sm_keras_cnn_export")
    loaded = tf.saved_model.load(str(OUT / "sm_keras_cnn_export"))
    _golden("sm_keras_cnn_export", {"serving_default": (loaded.signatures["serving_default"],
                                                        {"image": x})})
    _save(lambda d: tf.saved_model.save(model, d), "sm_keras_cnn_save")
    loaded = tf.saved_model.load(str(OUT / "sm_keras_cnn_save"))
    _golden("sm_keras_cnn_save", {"serving_default": (loaded.signatures["serving_default"],
                                                      {"image": x})})


def build_keras_lstm() -> None:
    seed_everything(SEED)
    rng = np.random.RandomState(SEED + 1701)
    layers = keras.layers
    inp = keras.Input((12,), dtype="int32", name="tokens")
    h = layers.Embedding(50, 8, name="embed")(inp)
    h = layers.LSTM(12, name="lstm")(h)
    out = layers.Dense(3, activation="softmax", name="probs")(h)
    model = keras.Model(inp, out, name="text_lstm")
    x = rng.randint(1, 50, (1, 12)).astype(np.int32)

    def export(d):  # batch 1: TF's converter needs the LSTM loop's shapes static
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serve", model.call,
                             input_signature=[tf.TensorSpec([1, 12], tf.int32, name="tokens")])
        archive.write_out(d)
    _save(export, "sm_keras_lstm")
    loaded = tf.saved_model.load(str(OUT / "sm_keras_lstm"))
    _golden("sm_keras_lstm", {"serving_default": (loaded.signatures["serving_default"],
                                                  {"tokens": x})})


def build_module_two() -> None:
    rng = np.random.RandomState(SEED + 1702)

    class Two(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(rng.normal(size=(4, 6)).astype(np.float32), name="w")
            self.table = tf.Variable(rng.normal(size=(10, 4)).astype(np.float32), name="table")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def serve(self, x):
            return {"y": tf.nn.relu(tf.matmul(x, self.w))}

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.int32, name="ids"),
                                      tf.TensorSpec([None, 4], tf.float32, name="bias")])
        def encode(self, ids, bias):
            e = tf.reduce_mean(tf.gather(self.table, ids), axis=1) + bias
            return {"code": tf.tanh(tf.matmul(e, self.w)), "norm": tf.norm(e, axis=1)}

    m = Two()
    _save(lambda d: tf.saved_model.save(m, d, signatures={"serving_default": m.serve,
                                                           "encode": m.encode}), "sm_module_two")
    loaded = tf.saved_model.load(str(OUT / "sm_module_two"))
    x = rng.normal(size=(N_GOLDEN, 4)).astype(np.float32)
    ids = rng.randint(0, 10, (N_GOLDEN, 3)).astype(np.int32)
    _golden("sm_module_two", {
        "serving_default": (loaded.signatures["serving_default"], {"x": x}),
        "encode": (loaded.signatures["encode"], {"ids": ids, "bias": x})})


def _tf1_graph(rng):
    """A TF1 MLP with ref variables (VariableV2): x [None, 5] -> relu(x W1 + b1) W2 -> softmax."""
    v1 = tf.compat.v1
    x = v1.placeholder(tf.float32, [None, 5], name="x")
    w1 = v1.get_variable("w1", initializer=rng.normal(size=(5, 8)).astype(np.float32),
                         use_resource=False)
    b1 = v1.get_variable("b1", initializer=rng.normal(size=(8,)).astype(np.float32),
                         use_resource=False)
    w2 = v1.get_variable("w2", initializer=rng.normal(size=(8, 3)).astype(np.float32),
                         use_resource=False)
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    y = tf.nn.softmax(tf.matmul(h, w2), name="probs")
    return x, y


def build_tf1() -> None:
    v1 = tf.compat.v1
    rng = np.random.RandomState(SEED + 1703)
    feeds = rng.normal(size=(N_GOLDEN, 5)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default(), v1.Session(graph=graph) as sess:
        x, y = _tf1_graph(rng)
        sess.run(v1.global_variables_initializer())
        probs = sess.run(y, {x: feeds})
        dest = OUT / "sm_tf1_builder"
        if dest.exists():
            shutil.rmtree(dest)
        with tempfile.TemporaryDirectory() as tmp:
            builder = v1.saved_model.Builder(str(Path(tmp) / "m"))
            sig = v1.saved_model.predict_signature_def({"x": x}, {"probs": y})
            builder.add_meta_graph_and_variables(sess, ["serve"],
                                                 signature_def_map={"serving_default": sig})
            builder.save()
            _copy(Path(tmp) / "m", "sm_tf1_builder")
        ckpt = OUT / "ckpt_tf1"
        if ckpt.exists():
            shutil.rmtree(ckpt)
        ckpt.mkdir(parents=True)
        v1.train.Saver().save(sess, str(ckpt / "model.ckpt"))
        (ckpt / "checkpoint").unlink()
    write_npz(OUT / "sm_tf1_builder.golden.npz", **{"serving_default/in/x": feeds,
                                                     "serving_default/out/probs": probs})
    write_npz(OUT / "ckpt_tf1.golden.npz", **{"x": feeds, "probs": probs})
    conv = tf.lite.TFLiteConverter.from_saved_model(str(OUT / "sm_tf1_builder"))
    ops = [d["op_name"] for d in tf.lite.Interpreter(model_content=conv.convert())._get_ops_details()]
    write_json(OUT / "sm_tf1_builder.json", {
        "built_with": f"tensorflow {tf.__version__} tf.compat.v1.saved_model.Builder",
        "signatures": {"serving_default": {"inputs": ["x"], "outputs": ["probs"],
                                           "tf_ops": ops, "tf_n_ops": len(ops)}}}, compact=True)


def main() -> None:
    build_bundle_dtypes()
    build_keras_cnn()
    build_keras_lstm()
    build_module_two()
    build_tf1()
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            print(f"  {p.relative_to(MODELS_DIR.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
