"""TF1 *training* graphs, as a TF1 project saves them (issue 25, group 6; dev-only).

    python -m models.builders.tf1_training       (repository root; ~30 s on 2 cores)

A small digits CNN trained in tf.compat.v1 graph mode with everything a training script
feeds at run time left in the graph as placeholders:

  is_training   bool: tf.compat.v1.layers.batch_normalization(training=is_training) (a cond
                between batch statistics and the moving averages) and
                tf.compat.v1.layers.dropout(training=is_training) (a cond around
                RandomUniform)
  keep_prob     float32 scalar: tf.compat.v1.nn.dropout(h, keep_prob=keep_prob) (no cond:
                RandomUniform >= 1 - keep_prob; only keep_prob = 1 makes it the identity)
  mode          int32 scalar (v2 only): tf.cond(tf.equal(mode, 1), dropout, identity)
  batch_size    int32 scalar (v1 only): the flatten's Reshape to [batch_size, 64]
  class_bias    float32 [10] (v1 only): added to the logits

Two variants, one per control-flow encoding:

  tf1_train/v1   control flow v1: the conds are Switch / Merge frames; is_training is a plain
                 tf.compat.v1.placeholder(tf.bool)
  tf1_train/v2   control flow v2: the conds are functional StatelessIf / If nodes calling the
                 graph's function library; is_training is
                 placeholder_with_default(True, []) -- training unless told otherwise

Each is trained for a few hundred SGD steps (BN moving averages updated through UPDATE_OPS) and
written as

  tf1_train/<v>/model.ckpt.{meta,index,data-00000-of-00001}   tf.compat.v1.train.Saver: the
                 whole training graph (gradients, Adam, savers) and its checkpoint
  tf1_train/<v>.pb            the same graph frozen to `probs`
                              (graph_util.convert_variables_to_constants); placeholders kept
  tf1_train/<v>.golden.npz    `input` (32 held-out digits), `probs` (TF, inference values
                              fed: is_training False, keep_prob 1, mode 0, batch_size 1 per
                              sample, class_bias 0), `labels`, and `probs_bias` with
                              class_bias = BIAS (v1)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.layers needs Keras 2

from .common import (  # noqa: E402  (sets env, seeds, single-threaded TF, op determinism)
    MODELS_DIR,
    SEED,
    SESSION_CONFIG,
    atomic_write,
    load_data,
    np,
    op_types,
    print_written,
    seed_everything,
    tf,
    write_npz,
)

OUT = MODELS_DIR / "tf1_train"
N_GOLDEN = 32
STEPS = 300
BIAS = np.linspace(-1.0, 1.0, 10, dtype=np.float32)  # a class_bias for the array --set test
v1 = tf.compat.v1


def _network(x, is_training, keep_prob, mode, batch_size, class_bias):
    """input -> conv + BN(training) -> pool -> conv -> flatten -> dropout(training) -> fc +
    dropout(keep_prob) [-> dropout(mode)] -> fc (+ class_bias) -> softmax."""
    he = v1.variance_scaling_initializer(2.0, seed=SEED + 11)
    h = v1.layers.conv2d(x, 16, 3, padding="same", use_bias=False, kernel_initializer=he,
                         name="conv1")
    h = v1.layers.batch_normalization(h, training=is_training, name="bn1")
    h = v1.layers.max_pooling2d(tf.nn.relu(h), 2, 2, name="pool1")          # 4x4x16
    h = v1.layers.conv2d(h, 16, 3, padding="valid", activation=tf.nn.relu,
                         kernel_initializer=he, name="conv2")                 # 2x2x16
    flat = [batch_size, 2 * 2 * 16] if batch_size is not None else [-1, 2 * 2 * 16]
    h = tf.reshape(h, flat, name="flatten")
    h = v1.layers.dropout(h, rate=0.2, training=is_training, seed=SEED, name="drop1")
    h = v1.layers.dense(h, 32, activation=tf.nn.relu, kernel_initializer=he, name="fc1")
    h = v1.nn.dropout(h, keep_prob=keep_prob, seed=SEED + 1, name="drop2")
    if mode is not None:
        h = tf.cond(tf.equal(mode, 1),
                    lambda: tf.nn.dropout(h, rate=0.1, seed=SEED + 2), lambda: h,
                    name="drop3")
    logits = v1.layers.dense(h, 10, name="fc2")
    if class_bias is not None:
        logits = tf.add(logits, class_bias, name="biased")
    return tf.nn.softmax(logits, name="probs")


def _build(variant: str) -> dict:
    seed_everything(SEED)
    x_train, y_train, x_test, y_test = load_data()
    cf_v1 = variant == "v1"
    if cf_v1:
        v1.disable_control_flow_v2()  # Switch / Merge, not StatelessIf
    try:
        graph = tf.Graph()
        with graph.as_default():
            v1.set_random_seed(SEED)
            x = v1.placeholder(tf.float32, [None, 8, 8, 1], name="input")
            labels = v1.placeholder(tf.int64, [None], name="labels")
            keep_prob = v1.placeholder(tf.float32, [], name="keep_prob")
            if cf_v1:
                is_training = v1.placeholder(tf.bool, [], name="is_training")
                batch_size = v1.placeholder(tf.int32, [], name="batch_size")
                class_bias = v1.placeholder(tf.float32, [10], name="class_bias")
                mode = None
            else:
                is_training = v1.placeholder_with_default(True, [], name="is_training")
                mode = v1.placeholder(tf.int32, [], name="mode")
                batch_size = class_bias = None
            probs = _network(x, is_training, keep_prob, mode, batch_size, class_bias)
            loss = v1.losses.sparse_softmax_cross_entropy(
                labels, tf.math.log(probs + 1e-7))
            with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
                train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
            saver = v1.train.Saver()

            def feeds(xb, training: bool, extra=None) -> dict:
                f = {x: xb, keep_prob: 0.8 if training else 1.0}
                if cf_v1:
                    f.update({is_training: training, batch_size: len(xb),
                              class_bias: np.zeros(10, np.float32)})
                else:
                    f.update({is_training: training, mode: 1 if training else 0})
                f.update(extra or {})
                return f

            with v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
                sess.run(v1.global_variables_initializer())
                rng = np.random.RandomState(SEED + 25)
                for _ in range(STEPS):
                    idx = rng.choice(len(x_train), 64, replace=False)
                    sess.run(train_op, feeds(x_train[idx], True, {labels: y_train[idx]}))
                xs = x_test[:N_GOLDEN]
                golden = {"input": xs, "labels": y_test[:N_GOLDEN].astype(np.int64),
                          "probs": sess.run(probs, feeds(xs, False))}
                if cf_v1:
                    golden["probs_bias"] = sess.run(probs, feeds(xs, False, {class_bias: BIAS}))
                full = sess.run(probs, feeds(x_test, False))
                accuracy = float(np.mean(full.argmax(1) == y_test))
                train_ops = op_types(graph.as_graph_def())
                frozen = v1.graph_util.convert_variables_to_constants(
                    sess, graph.as_graph_def(), ["probs"])
                _save_checkpoint(saver, sess, variant)
    finally:
        if cf_v1:
            v1.enable_control_flow_v2()
    atomic_write(OUT / f"{variant}.pb", frozen.SerializeToString(deterministic=True))
    write_npz(OUT / f"{variant}.golden.npz", **golden)
    ops = op_types(frozen)
    expect = ("Switch", "Merge", "RandomUniform") if cf_v1 else ("If", "RandomUniform")
    missing = [op for op in expect if op not in ops]
    if missing or accuracy < 0.9:
        raise SystemExit(f"{variant}: frozen graph lacks {missing} or accuracy {accuracy}")
    return {"variant": variant, "accuracy": accuracy, "frozen_ops": ops,
            "training_graph_nodes": sum(train_ops.values())}


def _save_checkpoint(saver, sess, variant: str) -> None:
    dest = OUT / variant
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        saver.save(sess, str(Path(tmp) / "model.ckpt"), write_meta_graph=False)
        for f in Path(tmp).iterdir():
            if f.name.startswith("model.ckpt."):
                atomic_write(dest / f.name, f.read_bytes())
    # the meta graph without device strings, deterministic bytes (the cond contexts hold
    # proto maps, serialized in hash order unless re-serialized deterministically)
    meta = saver.export_meta_graph(clear_devices=True, strip_default_attrs=True)
    from tensorflow.core.protobuf import control_flow_pb2

    if "cond_context" in meta.collection_def:
        values = meta.collection_def["cond_context"].bytes_list.value
        for k, raw in enumerate(values):
            ctx = control_flow_pb2.CondContextDef.FromString(raw)
            values[k] = ctx.SerializeToString(deterministic=True)
    atomic_write(dest / "model.ckpt.meta", meta.SerializeToString(deterministic=True))


def main() -> None:
    for variant in ("v1", "v2"):
        info = _build(variant)
        print(f"{variant}: test accuracy {info['accuracy']:.4f}, training graph "
              f"{info['training_graph_nodes']} nodes; frozen ops {info['frozen_ops']}")
    print_written()


if __name__ == "__main__":
    main()
