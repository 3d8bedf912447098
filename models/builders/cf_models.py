"""Tiny control-flow graphs for the converter's control-flow tests (dev-only; needs TensorFlow).

    python -m models.builders.cf_models       # from the repository root

Writes tests/converter/data/control_flow/cf_*.pb and cf_*.golden.npz (inputs and TF's outputs
for each model). Each tf.function is frozen both ways:
  cf_<name>.pb             convert_variables_to_constants_v2 default: v1 control-flow frames
                           (Enter / Exit / Switch / Merge / NextIteration / LoopCond)
  cf_<name>.functional.pb  lower_control_flow=False: While / StatelessWhile / If / StatelessIf
plus a TF1 graph-mode tf.cond (cf_tf1_cond.pb) and a tf.function calling tf.functions
(cf_call.pb: PartitionedCall / StatefulPartitionedCall with the function library).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

OUT = Path(__file__).resolve().parents[2] / "tests" / "converter" / "data" / "control_flow"
SEED = 1234


def _write(name: str, gd, feeds: dict, outputs: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.pb").write_bytes(gd.SerializeToString())
    np.savez(OUT / f"{name}.golden.npz", **{f"in:{k}": v for k, v in feeds.items()},
             **{f"out:{k}": v for k, v in outputs.items()})
    ops = sorted({n.op for n in gd.node} | {n.op for f in gd.library.function
                                            for n in f.node_def})
    print(f"{name}: {len(gd.node)} nodes, {len(gd.library.function)} functions; ops {ops}")


def _freeze_both(name: str, fn, specs, feeds: dict) -> None:
    concrete = fn.get_concrete_function(*specs)
    result = concrete(*[tf.constant(v) for v in feeds.values()])
    result = result if isinstance(result, (list, tuple)) else [result]
    for lower, suffix in ((True, ""), (False, ".functional")):
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
        gd = frozen.graph.as_graph_def()
        outs = [t.name.split(":")[0] for t in frozen.outputs]
        _write(f"{name}{suffix}", gd, feeds, {o: r.numpy() for o, r in zip(outs, result)})


rng = np.random.RandomState(SEED)
W = tf.constant(rng.normal(0, 0.4, (4, 4)).astype(np.float32))
V = tf.Variable(rng.normal(0, 0.4, (4,)).astype(np.float32))


@tf.function
def counter(x):
    """A fixed trip count: x <- 1.5 x + 1 five times (the counter is a loop variable)."""
    i = tf.constant(0)
    _, y = tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 1.5 + 1.0), [i, x])
    return tf.identity(y, name="y")


@tf.function
def rnn(x, steps):
    """A data-dependent trip count and loop invariants (a constant and a frozen variable):
    h <- tanh(h W + x + v), `steps` times; also returns the number of iterations."""
    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, W) + x + V)
    i, h = tf.while_loop(lambda i, h: i < steps, body, [tf.constant(0), tf.zeros_like(x)])
    return tf.identity(h, name="h"), tf.identity(i, name="n")


@tf.function
def nested(x):
    """A loop in a loop: 3 outer iterations of (2 inner iterations of x <- x * 0.5 + j) + i."""
    def outer(i, x):
        _, x = tf.while_loop(lambda j, x: j < 2,
                             lambda j, x: (j + 1, x * 0.5 + tf.cast(j, tf.float32)),
                             [tf.constant(0), x])
        return i + 1, x + tf.cast(i, tf.float32)
    _, y = tf.while_loop(lambda i, x: i < 3, outer, [tf.constant(0), x])
    return tf.identity(y, name="y")


@tf.function
def cond(x):
    """A data-dependent tf.cond with two outputs: sum(x) > 0 ? (2x, x + 1) : (x - 1, x * x)."""
    a, b = tf.cond(tf.reduce_sum(x) > 0.0, lambda: (x * 2.0, x + 1.0),
                   lambda: (x - 1.0, x * x))
    return tf.identity(a + b, name="y")


@tf.function
def loop_cond(x):
    """A tf.cond inside a loop body: x <- x > 0 ? x - 1 : x + 2, four times."""
    def body(i, x):
        return i + 1, tf.cond(tf.reduce_sum(x) > 0.0, lambda: x - 1.0, lambda: x + 2.0)
    _, y = tf.while_loop(lambda i, x: i < 4, body, [tf.constant(0), x])
    return tf.identity(y, name="y")


def build_tf1_cond() -> None:
    """TF1 graph mode: a cond on a computed predicate (v1 Switch / Merge, no frames)."""
    g = tf.Graph()
    tf.compat.v1.disable_control_flow_v2()  # TF 2.x graph mode writes If otherwise
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1, 4], name="x")
        pred = tf.reduce_max(x) > 0.5
        y = tf.compat.v1.cond(pred, lambda: tf.nn.relu(x) * 3.0, lambda: tf.sigmoid(x) - 0.25)
        tf.identity(y, name="y")
        gd = g.as_graph_def()
        with tf.compat.v1.Session(graph=g) as s:
            feeds = {"x": rng.normal(0, 1, (1, 4)).astype(np.float32)}
            feeds["x"][0, 0] = 0.9
            out = s.run("y:0", {"x:0": feeds["x"]})
    tf.compat.v1.enable_control_flow_v2()
    _write("cf_tf1_cond", gd, feeds, {"y": out})


@tf.function
def _inner(x):
    return tf.nn.relu(tf.matmul(x, W)) + 0.5


@tf.function
def _middle(x):
    return _inner(x) * 2.0 + _inner(x * -1.0)


@tf.function
def call(x):
    return tf.identity(_middle(x) - 1.0, name="y")


def build_call() -> None:
    """A tf.function calling tf.functions (not frozen: no variables; the graph keeps its
    PartitionedCall / StatefulPartitionedCall nodes and function library)."""
    concrete = call.get_concrete_function(tf.TensorSpec([1, 4], tf.float32, name="x"))
    feeds = {"x": rng.normal(0, 1, (1, 4)).astype(np.float32)}
    _write("cf_call", concrete.graph.as_graph_def(), feeds,
           {"Identity": concrete(tf.constant(feeds["x"])).numpy()})


def main() -> None:
    x14 = rng.normal(0, 1, (1, 4)).astype(np.float32)
    spec14 = tf.TensorSpec([1, 4], tf.float32, name="x")
    _freeze_both("cf_counter", counter, [spec14], {"x": x14})
    _freeze_both("cf_rnn", rnn, [spec14, tf.TensorSpec([], tf.int32, name="steps")],
                 {"x": x14, "steps": np.int32(6)})
    _freeze_both("cf_nested", nested, [spec14], {"x": x14})
    _freeze_both("cf_cond", cond, [spec14], {"x": x14})
    _freeze_both("cf_loop_cond", loop_cond, [spec14], {"x": np.abs(x14) + 1.5})
    build_tf1_cond()
    build_call()


if __name__ == "__main__":
    sys.exit(main())
