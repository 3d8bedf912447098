#!/usr/bin/env python
"""Build the sample models committed in models/ (dev-only; needs TensorFlow).

How to run (from the repository root)::

    pip install -e ".[dev]"          # TensorFlow, tf-keras, scikit-learn, ai-edge-litert
    python models/build_models.py

The script is deterministic (fixed seeds, single-threaded TensorFlow, fixed
train/test split) and idempotent: it rewrites every output file in models/ and
prints what it wrote.  It needs no network: the training data is scikit-learn's
bundled 8x8 "digits" data set (sklearn.datasets.load_digits).

Outputs (see models/README.md):

  digits_test.npz             held-out test set: x float32 [N,8,8,1] in [0,1], y int64 [N]
  tf1_cnn.pb / tf1_cnn.pbtxt  frozen TF1-style graph (tf.compat.v1), input "input", output "probs"
  keras_cnn.pb                frozen tf_keras CNN (FusedBatchNormV3, depthwise, ReLU6, Mean)
  <name>.golden.npz           input (first 32 test images), output (frozen-graph TF output), labels
  <name>.tf.tflite            TensorFlow's own float .tflite (batch 1) of the frozen graph
  <name>.tf_ops.json          op list of TensorFlow's .tflite, I/O details, accuracies
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # deterministic, plain Eigen kernels
os.environ.setdefault("PYTHONHASHSEED", "0")

import numpy as np  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
    import tf_keras as keras  # noqa: E402
    from sklearn.datasets import load_digits  # noqa: E402
    from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
        convert_variables_to_constants_v2,
    )
except ImportError as exc:  # pragma: no cover - dev-only script
    sys.exit(
        f"models/build_models.py needs the dev extras ({exc}).\n"
        'Install them with: pip install -e ".[dev]"'
    )

HERE = Path(__file__).resolve().parent
SEED = 1234
N_TRAIN = 1400  # first 1400 digits train, the remaining 397 are the held-out test set
N_GOLDEN = 32
INPUT_NAME = "input"
OUTPUT_NAME = "probs"
TFLITE_ATOL = 1e-5

tf.get_logger().setLevel("ERROR")
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

_written: list[Path] = []


# --------------------------------------------------------------------------- utilities


def _seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    keras.utils.set_random_seed(seed)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600 files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if path not in _written:
        _written.append(path)


def _write_npz(path: Path, **arrays: np.ndarray) -> None:
    import io
    import zipfile

    # np.savez stores zip entries with the current time; write the zip ourselves
    # with a fixed timestamp so rebuilding gives byte-identical files.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    _atomic_write(path, buf.getvalue())


def _write_graph(graph_def: tf.compat.v1.GraphDef, name: str, as_text: bool) -> None:
    if as_text:
        # tf.io.write_graph(as_text=True) writes protobuf text format; write to a
        # temp dir and move atomically into place.
        with tempfile.TemporaryDirectory(dir=HERE) as tmp:
            tf.io.write_graph(graph_def, tmp, name, as_text=True)
            data = Path(tmp, name).read_bytes()
        _atomic_write(HERE / name, data)
    else:
        _atomic_write(HERE / name, graph_def.SerializeToString(deterministic=True))


def _op_types(graph_def: tf.compat.v1.GraphDef) -> dict[str, int]:
    return dict(sorted(Counter(n.op for n in graph_def.node).items()))


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    digits = load_digits()
    x = (digits.images.astype(np.float32) / np.float32(16.0)).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def run_frozen(graph_def: tf.compat.v1.GraphDef, x: np.ndarray) -> np.ndarray:
    """Run a frozen GraphDef with TensorFlow (fresh graph, input:0 -> probs:0)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
    )
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        out = sess.run(f"{OUTPUT_NAME}:0", feed_dict={f"{INPUT_NAME}:0": x})
    return np.asarray(out, dtype=np.float32)


# --------------------------------------------------------------------------- (a) TF1 CNN


def build_tf1_cnn(x_train, y_train) -> tf.compat.v1.GraphDef:
    """TF1-style graph (placeholders, variables, Session), trained, then frozen."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1], name=INPUT_NAME)
        labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")

        def var(name, shape, seed, init="glorot"):
            if init == "zeros":
                initializer = tf.compat.v1.zeros_initializer()
            else:
                initializer = tf.compat.v1.glorot_uniform_initializer(seed=seed)
            return tf.compat.v1.get_variable(name, shape, tf.float32, initializer)

        with tf.compat.v1.variable_scope("conv1"):
            w1 = var("weights", [3, 3, 1, 16], SEED + 1)
            b1 = var("biases", [16], None, "zeros")
            h = tf.nn.conv2d(x, w1, strides=[1, 1, 1, 1], padding="SAME", name="Conv2D")
            h = tf.nn.bias_add(h, b1, name="BiasAdd")
            h = tf.nn.relu(h, name="Relu")
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")  # 4x4x16
        with tf.compat.v1.variable_scope("conv2"):
            w2 = var("weights", [3, 3, 16, 32], SEED + 2)
            b2 = var("biases", [32], None, "zeros")
            h = tf.nn.conv2d(h, w2, strides=[1, 1, 1, 1], padding="VALID", name="Conv2D")
            h = tf.nn.bias_add(h, b2, name="BiasAdd")
            h = tf.nn.relu(h, name="Relu")  # 2x2x32
        flat_n = 2 * 2 * 32
        h = tf.reshape(h, [-1, flat_n], name="flatten")
        with tf.compat.v1.variable_scope("fc"):
            w3 = var("weights", [flat_n, 10], SEED + 3)
            b3 = var("biases", [10], None, "zeros")
            logits = tf.add(tf.matmul(h, w3, name="MatMul"), b3, name="logits")
        tf.nn.softmax(logits, name=OUTPUT_NAME)

        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train_op = tf.compat.v1.train.AdamOptimizer(learning_rate=5e-3).minimize(loss)

        config = tf.compat.v1.ConfigProto(
            intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
        )
        rng = np.random.RandomState(SEED)
        batch = 32
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for epoch in range(15):
                order = rng.permutation(len(x_train))
                losses = []
                for i in range(0, len(order), batch):
                    idx = order[i : i + batch]
                    _, lv = sess.run(
                        [train_op, loss], feed_dict={x: x_train[idx], labels: y_train[idx]}
                    )
                    losses.append(lv)
                print(f"  tf1_cnn epoch {epoch + 1:2d}: loss {np.mean(losses):.4f}")
            frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), [OUTPUT_NAME]
            )
    return frozen


# --------------------------------------------------------------------------- (b) Keras CNN


def build_keras_cnn(x_train, y_train) -> tuple[tf.compat.v1.GraphDef, keras.Model]:
    """tf_keras (Keras 2) CNN with BatchNorm, depthwise conv, ReLU6 and average pooling."""
    _seed_everything(SEED)
    layers = keras.layers
    init = keras.initializers
    inp = keras.Input(shape=(8, 8, 1), name=INPUT_NAME)
    h = layers.Conv2D(
        16, 3, padding="same", use_bias=False, kernel_initializer=init.GlorotUniform(SEED + 11),
        name="conv1",
    )(inp)
    h = layers.BatchNormalization(name="conv1_bn")(h)
    h = layers.ReLU(6.0, name="conv1_relu6")(h)
    h = layers.DepthwiseConv2D(
        3, padding="same", use_bias=False, depthwise_initializer=init.GlorotUniform(SEED + 12),
        name="dw2",
    )(h)
    h = layers.BatchNormalization(name="dw2_bn")(h)
    h = layers.ReLU(name="dw2_relu")(h)
    h = layers.Conv2D(
        32, 1, use_bias=False, kernel_initializer=init.GlorotUniform(SEED + 13), name="pw2"
    )(h)
    h = layers.BatchNormalization(name="pw2_bn")(h)
    h = layers.ReLU(name="pw2_relu")(h)
    h = layers.AveragePooling2D(2, name="avgpool")(h)  # 4x4x32
    h = layers.GlobalAveragePooling2D(name="gap")(h)  # -> Mean
    h = layers.Dense(10, kernel_initializer=init.GlorotUniform(SEED + 14), name="logits")(h)
    out = layers.Softmax(name=OUTPUT_NAME)(h)
    model = keras.Model(inp, out, name="keras_cnn")

    epochs, batch = 40, 32
    steps = epochs * int(np.ceil(len(x_train) / batch))
    lr = keras.optimizers.schedules.CosineDecay(1e-2, steps)  # decays to 0: stable BN stats
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=lr),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, batch_size=batch, epochs=epochs, shuffle=True, verbose=0)
    loss, acc = model.evaluate(x_train, y_train, verbose=0)
    print(f"  keras_cnn trained: train loss {loss:.4f}, train acc {acc:.4f}")

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 1], tf.float32, name=INPUT_NAME)])
    def serve(x):
        return model(x, training=False)

    frozen_func = convert_variables_to_constants_v2(serve.get_concrete_function())
    graph_def = frozen_func.graph.as_graph_def()

    # The concrete function's output is an Identity node called "Identity"; give
    # it the same name as the TF1 model's output so both models read alike.
    (out_tensor,) = frozen_func.outputs
    out_node = out_tensor.op.name
    for node in graph_def.node:
        if node.name == out_node:
            node.name = OUTPUT_NAME
        for i, inp_name in enumerate(node.input):
            if inp_name.split(":")[0].lstrip("^") == out_node:
                node.input[i] = inp_name.replace(out_node, OUTPUT_NAME, 1)
    return graph_def, model


# --------------------------------------------------------------------------- TF .tflite


def tf_tflite(pb_path: Path) -> bytes:
    conv = tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(pb_path),
        input_arrays=[INPUT_NAME],
        output_arrays=[OUTPUT_NAME],
        input_shapes={INPUT_NAME: [1, 8, 8, 1]},
    )
    return conv.convert()


def litert_run(model_bytes: bytes, x: np.ndarray):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    # Builtin kernels without the default XNNPACK delegate, so the op list is the
    # model's own operators (with the delegate LiteRT reports one DELEGATE node).
    interp = Interpreter(
        model_content=model_bytes,
        num_threads=1,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interp.allocate_tensors()
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    outs = []
    for i in range(len(x)):
        interp.set_tensor(inp["index"], x[i : i + 1])
        interp.invoke()
        outs.append(interp.get_tensor(out["index"])[0].copy())
    ops = [d["op_name"] for d in interp._get_ops_details()]
    io = {
        "input": {"name": inp["name"], "shape": inp["shape"].tolist(), "dtype": inp["dtype"].__name__},
        "output": {"name": out["name"], "shape": out["shape"].tolist(), "dtype": out["dtype"].__name__},
    }
    return np.stack(outs).astype(np.float32), ops, io


# --------------------------------------------------------------------------- main


def finish_model(name, graph_def, x_test, y_test, extra_files=()):
    print(f"\n[{name}] frozen GraphDef: {len(graph_def.node)} nodes")
    ops = _op_types(graph_def)
    print(f"  op types: {ops}")
    assert "Identity" in ops, f"{name}: expected Identity nodes in the frozen graph"
    assert not any(o in ops for o in ("VariableV2", "VarHandleOp", "ReadVariableOp")), ops

    pb_path = HERE / f"{name}.pb"
    _write_graph(graph_def, pb_path.name, as_text=False)
    for fname in extra_files:
        _write_graph(graph_def, fname, as_text=True)

    # Float TF (frozen graph) accuracy + golden outputs.
    probs = run_frozen(graph_def, x_test)
    acc = float(np.mean(np.argmax(probs, axis=1) == y_test))
    print(f"  TF float test accuracy (frozen graph): {acc:.4f} ({len(y_test)} images)")
    assert acc > 0.90, f"{name}: test accuracy {acc:.4f} <= 0.90"
    golden_out = probs[:N_GOLDEN]
    _write_npz(
        HERE / f"{name}.golden.npz",
        input=x_test[:N_GOLDEN].astype(np.float32),
        output=golden_out.astype(np.float32),
        labels=y_test[:N_GOLDEN].astype(np.int64),
    )

    # TensorFlow's own converter.
    tfl = tf_tflite(pb_path)
    _atomic_write(HERE / f"{name}.tf.tflite", tfl)
    lite_out, lite_ops, io = litert_run(tfl, x_test[:N_GOLDEN])
    err = float(np.max(np.abs(lite_out - golden_out)))
    print(f"  LiteRT(TF .tflite) vs golden: max abs diff {err:.3g}")
    assert err <= TFLITE_ATOL, f"{name}: TF .tflite differs from golden by {err}"
    lite_full, _, _ = litert_run(tfl, x_test)
    lite_acc = float(np.mean(np.argmax(lite_full, axis=1) == y_test))
    print(f"  LiteRT(TF .tflite) test accuracy: {lite_acc:.4f}")
    counts = dict(sorted(Counter(lite_ops).items()))
    print(f"  TF converter ops: {lite_ops}")
    info = {
        "model": name,
        "converter": f"tensorflow {tf.__version__} tf.compat.v1.lite.TFLiteConverter.from_frozen_graph",
        "input_shapes": {INPUT_NAME: [1, 8, 8, 1]},
        "ops": lite_ops,
        "op_counts": counts,
        "io": io,
        "graphdef_op_counts": ops,
        "tf_float_test_accuracy": round(acc, 6),
        "tflite_float_test_accuracy": round(lite_acc, 6),
        "tflite_vs_golden_max_abs_diff": float(f"{err:.3g}"),
        "n_test": int(len(y_test)),
    }
    _atomic_write(
        HERE / f"{name}.tf_ops.json", (json.dumps(info, indent=2, sort_keys=False) + "\n").encode()
    )
    return {"ops": ops, "lite_ops": counts, "acc": acc, "lite_acc": lite_acc, "err": err}


def main() -> int:
    x_train, y_train, x_test, y_test = load_data()
    print(f"digits: {len(x_train)} train / {len(x_test)} test images (8x8x1, /16.0)")
    _write_npz(HERE / "digits_test.npz", x=x_test.astype(np.float32), y=y_test.astype(np.int64))

    results = {}
    print("\n[tf1_cnn] training (tf.compat.v1 graph mode)")
    _seed_everything(SEED)
    gd = build_tf1_cnn(x_train, y_train)
    results["tf1_cnn"] = finish_model("tf1_cnn", gd, x_test, y_test, extra_files=["tf1_cnn.pbtxt"])

    print("\n[keras_cnn] training (tf_keras)")
    gd, _ = build_keras_cnn(x_train, y_train)
    assert "FusedBatchNormV3" in _op_types(gd), "keras_cnn: expected FusedBatchNormV3 nodes"
    bn_training = [n.name for n in gd.node if n.op == "FusedBatchNormV3" and n.attr["is_training"].b]
    assert not bn_training, f"FusedBatchNormV3 in training mode: {bn_training}"
    results["keras_cnn"] = finish_model("keras_cnn", gd, x_test, y_test)

    print("\nsummary")
    for name, r in results.items():
        print(
            f"  {name}: TF float test acc {r['acc']:.4f}, TF .tflite acc {r['lite_acc']:.4f}, "
            f"tflite-vs-golden {r['err']:.2g}"
        )
    print("\nwrote:")
    total = 0
    for p in _written:
        size = p.stat().st_size
        total += size
        print(f"  {p.relative_to(HERE.parent)}  {size} bytes")
    print(f"  total {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
