"""The recurrent / control-flow test models of issue 13 (models/build_rnn.py; dev-only, needs
TensorFlow): small, seeded, random-weight graphs that TensorFlow freezes into loops, conds and
function calls.

Each model here is a `Frozen` record: its frozen GraphDefs (".pb": the default lowering to TF1
control-flow frames; ".functional.pb": `lower_control_flow=False`, loops and conds kept as
functional While / StatelessWhile / StatelessIf with bodies in the function library), its
input / output node names, three golden input samples, and how TensorFlow's converter gets at
it (a live Keras model, or a concrete function).  Everything has a fixed batch of 1 and a
fixed sequence length, so every input shape is static.

Keras models are rebuilt from scratch (`keras_model(name)`) by the int8 conversion worker
(builders/rnn_worker.py): their weights come from a seeded numpy generator, not from Keras'
initializers, so a rebuild in another process gives the same numbers.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.nn.rnn_cell needs tf_keras

from .common import (  # noqa: E402  (sets env, seeds, single-threaded TF, op determinism)
    SEED,
    SESSION_CONFIG,
    convert_variables_to_constants_v2,
    keras,
    np,
    rename_node,
    seed_everything,
    tf,
)

N_GOLDEN = 3  # golden samples per model (each run alone: the models have batch 1)
UNITS = 8
STEPS = 6  # time steps of the sequence models (the ConvLSTM2D ones: FRAMES)
FEATURES = 4
VOCAB = 20
FRAMES, SIDE, CHANNELS, FILTERS = 5, 6, 2, 4  # ConvLSTM2D: 5 frames of 6x6x2, 4 filters
UNROLLED_UNITS = 32  # the unrolled-LSTM size case
OUTPUT = "output"  # every model's output node (the frozen function's Identity, renamed)
WEIGHT_STD = 0.4  # random weights: N(0, 0.4^2), big enough that every gate moves

# GraphDef op types the converter helpers care about (counted in the manifest), plus every
# TensorArray* / TensorList* op found.
OPS_OF_INTEREST = ("Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "While",
                   "StatelessWhile", "If", "StatelessIf", "PartitionedCall",
                   "StatefulPartitionedCall")


@dataclass
class Frozen:
    name: str  # file stem: models/<name>.pb ...
    graphs: dict  # suffix ("" or ".functional") -> GraphDef
    inputs: dict  # node name -> (static shape, numpy dtype name)
    golden: dict  # node name -> (N_GOLDEN, *shape) array (sample i is fed alone)
    description: str
    keras: object = None  # the live Keras model (TF's converter: from_keras_model)
    function: object = None  # a concrete function (TF's converter: from_concrete_functions)
    tflite: tuple = ()  # TF conversions to attempt: "float", "int8", "int8_io", "frozen"
    notes: dict = field(default_factory=dict)
    outputs: tuple = (OUTPUT,)


# --------------------------------------------------------------------------- helpers


def seeded_rng(name: str) -> np.random.RandomState:
    """A generator per model, independent of build order (crc32 of the name, not hash())."""
    import zlib

    return np.random.RandomState((SEED + zlib.crc32(name.encode())) % 2**31)


def random_inputs(name: str, inputs: dict, n: int, offset: int = 0) -> dict:
    """n samples per input: token ids in [0, VOCAB) for int32 inputs, else U(-1, 1)."""
    rng = seeded_rng(f"{name}/inputs/{offset}")
    out = {}
    for node, (shape, dtype) in inputs.items():
        full = (n, *shape[1:]) if shape[0] == 1 else (n, *shape)
        if dtype == "int32":
            out[node] = rng.randint(0, VOCAB, full).astype(np.int32)
        else:
            out[node] = rng.uniform(-1.0, 1.0, full).astype(np.float32)
    return out


def randomize(model, name: str) -> None:
    """Replace every weight with seeded N(0, WEIGHT_STD^2) values (biases too)."""
    rng = seeded_rng(f"{name}/weights")
    model.set_weights([rng.normal(0.0, WEIGHT_STD, w.shape).astype(np.float32)
                       for w in model.get_weights()])


def freeze(concrete, lower: bool):
    """convert_variables_to_constants_v2, with the output Identity renamed to OUTPUT and the
    library's functions renumbered (canonical_function_names)."""
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
    gd = frozen.graph.as_graph_def()
    (out,) = frozen.outputs
    rename_node(gd, out.op.name, OUTPUT)
    canonical_function_names(gd)
    return gd


def canonical_function_names(gd) -> None:
    """Function names hold a process-global uid ("while_body_582"), which depends on what
    the process traced before (and TF's lowering of other models makes a varying number of
    nodes): renumber them 1, 2, ... in uid order per name without its numbers, wherever they
    occur (library, func-valued attributes such as While body / cond, argument names derived
    from them such as "while_cond_581___redundant_placeholder0"), so rebuilding a model gives
    the same bytes.  Done on the protobuf text format (lossless); nothing else is changed."""
    import re

    from google.protobuf import text_format

    def key(name):  # ("__inference_inner_specialized_...", (632, 1)) for "..._inner_632_..."
        return re.sub(r"_\d+", "", name), tuple(int(d) for d in re.findall(r"_(\d+)", name))

    renamed, counters = {}, {}
    for name in sorted((f.signature.name for f in gd.library.function), key=key):
        base = key(name)[0]
        counters[base] = counters.get(base, 0) + 1
        renamed[name] = f"{base}_{counters[base]}"
    if not renamed:
        return
    pattern = re.compile("|".join(re.escape(n) for n in sorted(renamed, key=len, reverse=True))
                         + r"(?!\d)")
    text = pattern.sub(lambda m: renamed[m.group(0)], text_format.MessageToString(gd))
    gd.CopyFrom(text_format.Parse(text, type(gd)()))


def ops_of_interest(gd) -> dict:
    """Counts of OPS_OF_INTEREST and TensorArray* / TensorList* nodes, function library
    included ("library": nodes inside functions, "graph": top level)."""
    def count(nodes):
        c: dict = {}
        for n in nodes:
            if n.op in OPS_OF_INTEREST or n.op.startswith(("TensorArray", "TensorList")):
                c[n.op] = c.get(n.op, 0) + 1
        return c

    top = count(gd.node)
    lib = count(n for f in gd.library.function for n in f.node_def)
    total = {k: top.get(k, 0) + lib.get(k, 0) for k in sorted(set(top) | set(lib))}
    return {"total": total, "graph": dict(sorted(top.items())),
            "library": dict(sorted(lib.items()))}


def graph_facts(gd) -> dict:
    """What a converter meets: node / function counts, TF1 frames, dynamic shapes."""
    frames = sorted({n.attr["frame_name"].s.decode() for n in gd.node if n.op == "Enter"})
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    dynamic: dict = {}
    for op in graph.get_operations():
        for t in op.outputs:
            if t.dtype in (tf.resource, tf.variant) or t.shape.is_fully_defined():
                continue
            dynamic[op.type] = dynamic.get(op.type, 0) + 1
    return {
        "nodes": len(gd.node),
        "functions": sorted(f.signature.name for f in gd.library.function),
        "function_nodes": sum(len(f.node_def) for f in gd.library.function),
        "frames": len(frames),
        "unused_placeholders": sum(n.op == "Placeholder" and n.name.startswith(
            "unused_control_flow_input") for n in gd.node),
        "dynamic_shape_outputs": dict(sorted(dynamic.items())),
        "ops_of_interest": ops_of_interest(gd),
    }


def run_graph(gd, golden: dict, outputs=(OUTPUT,)) -> dict:
    """TF running the frozen graph on each golden sample alone: {output: (N, ...)}."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    n = len(next(iter(golden.values())))
    res: dict = {o: [] for o in outputs}
    with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
        for i in range(n):
            feed = {f"{k}:0": v[i:i + 1] for k, v in golden.items()}
            for o, r in zip(outputs, sess.run([f"{o}:0" for o in outputs], feed)):
                res[o].append(np.asarray(r)[0])
    return {o: np.stack(v) for o, v in res.items()}


@contextlib.contextmanager
def v1_control_flow():
    """Graph-mode tf.while_loop / tf.cond / TensorArray as TF1 wrote them (Enter / Exit /
    Switch / Merge, TensorArrayV3), restoring TF2's default control flow afterwards."""
    from tensorflow.python.ops import control_flow_util

    was_v2 = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf.compat.v1.disable_control_flow_v2()
    try:
        yield
    finally:
        if was_v2:
            tf.compat.v1.enable_control_flow_v2()


# --------------------------------------------------------------------------- Keras models

L = keras.layers


def _seq_input():
    return keras.Input((STEPS, FEATURES), batch_size=1, name="x")


def _convlstm(return_sequences: bool):
    inp = keras.Input((FRAMES, SIDE, SIDE, CHANNELS), batch_size=1, name="x")
    return inp, L.ConvLSTM2D(FILTERS, 3, padding="same", return_sequences=return_sequences,
                             name="convlstm")(inp)


def _lstm():
    inp = keras.Input((STEPS,), batch_size=1, dtype="int32", name="tokens")
    h = L.Embedding(VOCAB, UNITS, name="embedding")(inp)
    return inp, L.LSTM(UNITS, unroll=False, name="lstm")(h)


def _lstm_unrolled():
    inp = _seq_input()
    return inp, L.LSTM(UNROLLED_UNITS, unroll=True, name="lstm")(inp)


KERAS = {
    # name: (layers, description, TF conversions)
    "rnn_lstm": (_lstm, "Embedding(20, 8) -> LSTM(8, unroll=False), int32 tokens [1, 6]",
                 ("float", "int8", "int8_io", "frozen")),
    "rnn_gru": (lambda: (i := _seq_input(), L.GRU(UNITS, name="gru")(i)),
                "GRU(8) (reset_after=True) on x [1, 6, 4]", ("float", "int8", "frozen")),
    "rnn_convlstm": (lambda: _convlstm(False),
                     "ConvLSTM2D(4, 3x3, same), return_sequences=False, on x [1, 5, 6, 6, 2]",
                     ("float", "int8", "frozen")),
    "rnn_convlstm_seq": (lambda: _convlstm(True),
                         "ConvLSTM2D(4, 3x3, same), return_sequences=True, on x [1, 5, 6, 6, 2]",
                         ("float", "frozen")),
    "rnn_bilstm": (lambda: (i := _seq_input(),
                            L.Bidirectional(L.LSTM(UNITS), name="bilstm")(i)),
                   "Bidirectional(LSTM(8)) (concat) on x [1, 6, 4]",
                   ("float", "int8", "int8_io", "frozen")),
    "rnn_simple_rnn": (lambda: (i := _seq_input(), L.SimpleRNN(UNITS, name="rnn")(i)),
                       "SimpleRNN(8) on x [1, 6, 4]", ("float", "int8", "int8_io", "frozen")),
    "rnn_lstm_unrolled": (_lstm_unrolled, f"LSTM({UNROLLED_UNITS}, unroll=True) on x [1, 6, 4]",
                          ("float", "frozen")),
}


def keras_model(name: str):
    """The Keras model `name` with its seeded random weights (same in every process)."""
    seed_everything(SEED)
    inp, out = KERAS[name][0]()
    model = keras.Model(inp, out, name=name)
    randomize(model, name)
    return model


def keras_input_specs(model) -> dict:
    (inp,) = model.inputs
    return {inp.name.split(":")[0]: (list(inp.shape), inp.dtype.name
                                     if hasattr(inp.dtype, "name") else str(inp.dtype))}


def keras_concrete(model):
    (inp,) = model.inputs
    node = inp.name.split(":")[0]

    @tf.function(input_signature=[tf.TensorSpec(inp.shape, inp.dtype, name=node)])
    def serve(x):
        return model(x, training=False)

    return serve.get_concrete_function()


def build_keras(name: str) -> Frozen:
    model = keras_model(name)
    inputs = keras_input_specs(model)
    concrete = keras_concrete(model)
    graphs = {}
    if "unroll" not in name:  # an unrolled LSTM has no loop: both lowerings are the same
        graphs[".functional"] = freeze(concrete, False)
    # last: the number of nodes TF's lowering makes varies from run to run (and with it the
    # uids of everything made after it)
    graphs[""] = freeze(concrete, True)
    golden = random_inputs(name, inputs, N_GOLDEN)
    expect = model.predict(next(iter(golden.values())), batch_size=1, verbose=0)
    return Frozen(name, graphs, inputs, golden, KERAS[name][1], keras=model,
                  tflite=KERAS[name][2], notes={"keras_output": expect})


# --------------------------------------------------------------------------- TF1 graphs


def _tf1_session_freeze(graph, sess, outputs=(OUTPUT,)):
    return tf.compat.v1.graph_util.convert_variables_to_constants(
        sess, graph.as_graph_def(), list(outputs))


def _tf1_rnn(name: str, units: int, static: bool) -> Frozen:
    """x [1, 6, 4] -> LSTMCell(units) via dynamic_rnn (a while frame over TensorArrayV3) or
    static_rnn (unrolled) -> all outputs [1, 6, units]."""
    inputs = {"x": ([1, STEPS, FEATURES], "float32")}
    graph = tf.Graph()
    with v1_control_flow(), graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        x = tf.compat.v1.placeholder(tf.float32, [1, STEPS, FEATURES], name="x")
        init = tf.compat.v1.random_normal_initializer(0.0, WEIGHT_STD, seed=SEED)
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(units, initializer=init, name="lstm_cell")
        if static:
            outs, _ = tf.compat.v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
            y = tf.stack(outs, axis=1)
        else:
            y, _ = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        tf.identity(y, name=OUTPUT)
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            # the bias is zero-initialised: give it random values too
            (bias,) = [v for v in tf.compat.v1.global_variables() if "bias" in v.name]
            values = seeded_rng(f"{name}/bias").normal(0, WEIGHT_STD, bias.shape)
            bias.load(values.astype(np.float32), sess)
            gd = _tf1_session_freeze(graph, sess)
    kind = "static_rnn (unrolled)" if static else "dynamic_rnn (while frame, TensorArrayV3)"
    return Frozen(name, {"": gd}, inputs, random_inputs(name, inputs, N_GOLDEN),
                  f"TF1 graph: tf.compat.v1.nn.{kind} over LSTMCell({units}), x [1, 6, 4] -> "
                  f"outputs [1, 6, {units}]", tflite=("frozen",))


def build_tf1_dynamic_rnn() -> Frozen:
    return _tf1_rnn("rnn_tf1_dynamic_rnn", UNITS, static=False)


def build_tf1_static_rnn() -> Frozen:
    return _tf1_rnn("rnn_tf1_static_rnn", UNROLLED_UNITS, static=True)


def _cond_weights(name: str):
    rng = seeded_rng(f"{name}/weights")
    return [rng.normal(0, WEIGHT_STD, s).astype(np.float32)
            for s in ((8, 6), (6,), (8, 6), (6,))]


def _cond_golden(name: str) -> dict:
    """x [1, 8]: samples 0 and 2 have sum > 0 (the tanh branch), sample 1 sum < 0."""
    x = random_inputs(name, {"x": ([1, 8], "float32")}, N_GOLDEN)["x"]
    sign = np.array([1.0, -1.0, 1.0], np.float32)[:, None]
    x = np.abs(x) * sign
    return {"x": x.astype(np.float32)}


def _cond_math(x, w1, b1, w2, b2):
    """pred = sum(x) > 0; true: tanh(x @ w1 + b1); false: 2 * relu(x @ w2 + b2) - 1.

    (b2 is there because TF 2.21's converter drops a Relu that directly follows a MatMul
    inside an If branch -- its else subgraph becomes BATCH_MATMUL, MUL, SUB -- so without it
    TF's own .tflite files of this model would be wrong.)"""
    return tf.cond(tf.reduce_sum(x) > 0.0,
                   lambda: tf.tanh(tf.matmul(x, w1) + b1),
                   lambda: 2.0 * tf.nn.relu(tf.matmul(x, w2) + b2) - 1.0)


def build_tf1_cond() -> Frozen:
    name = "rnn_tf1_cond"
    graph = tf.Graph()
    with v1_control_flow(), graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1, 8], name="x")
        weights = [tf.compat.v1.get_variable(f"w{i}", initializer=w)
                   for i, w in enumerate(_cond_weights(name))]
        tf.identity(_cond_math(x, *weights), name=OUTPUT)
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            gd = _tf1_session_freeze(graph, sess)
    return Frozen(name, {"": gd}, {"x": ([1, 8], "float32")}, _cond_golden(name),
                  "TF1 graph: data-dependent tf.cond (Switch / Merge): sum(x) > 0 ? "
                  "tanh(x @ w1 + b1) : 2 * relu(x @ w2 + b2) - 1; golden samples 0 and 2 take the "
                  "tanh branch, sample 1 the relu one", tflite=("frozen",))


# --------------------------------------------------------------------------- tf.functions


def cond_function():
    """The same cond as rnn_tf1_cond, as a TF2 tf.function (StatelessIf when not lowered)."""
    weights = [tf.constant(w) for w in _cond_weights("rnn_tf1_cond")]

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32, name="x")])
    def cond(x):
        return _cond_math(x, *weights)

    return cond.get_concrete_function()


def while_function():
    """h = x; 5 times: h = tanh(h @ w + x) (a tf.while_loop with a counter)."""
    w = tf.constant(seeded_rng("rnn_while_loop/weights").normal(0, WEIGHT_STD, (8, 8))
                    .astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32, name="x")])
    def loop(x):
        _, h = tf.while_loop(lambda i, h: i < 5,
                             lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + x)),
                             (tf.constant(0), x))
        return h

    return loop.get_concrete_function()


def partitioned_function():
    """outer(x) = inner(x) - 0.5 * inner(-x), inner a tf.function kept as a call (_noinline):
    the frozen graph keeps two PartitionedCall nodes and `inner` in its function library."""
    rng = seeded_rng("rnn_partitioned_call/weights")
    w = tf.constant(rng.normal(0, WEIGHT_STD, (8, 6)).astype(np.float32))
    b = tf.constant(rng.normal(0, WEIGHT_STD, (6,)).astype(np.float32))

    @tf.function(experimental_attributes={"_noinline": True})
    def inner(x):
        return tf.nn.relu(tf.matmul(x, w) + b)

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32, name="x")])
    def outer(x):
        return inner(x) - 0.5 * inner(-x)

    return outer.get_concrete_function()


FUNCTIONS = {
    # name: (concrete function maker, which lowerings to freeze, description, TF conversions)
    "rnn_cond": (cond_function, (".functional",),
                 "tf.function with the data-dependent cond of rnn_tf1_cond (same weights), "
                 "frozen with lower_control_flow=False: StatelessIf", ("float", "int8")),
    "rnn_while_loop": (while_function, (".functional", ""),
                       "tf.function with tf.while_loop: h = x; 5 times h = tanh(h @ w + x)",
                       ("float", "int8", "frozen")),
    "rnn_partitioned_call": (partitioned_function, ("",),
                             "tf.function calling a _noinline tf.function twice: "
                             "inner(x) - 0.5 * inner(-x), inner = relu(x @ w + b)", ("float",)),
}


def build_function(name: str) -> Frozen:
    make, lowerings, description, conversions = FUNCTIONS[name]
    concrete = make()
    graphs = {suffix: freeze(concrete, suffix == "") for suffix in lowerings}
    inputs = {"x": ([1, 8], "float32")}
    golden = (_cond_golden("rnn_tf1_cond") if name == "rnn_cond"
              else random_inputs(name, inputs, N_GOLDEN))
    return Frozen(name, graphs, inputs, golden, description, function=concrete,
                  tflite=conversions)


def build_grouped_conv() -> Frozen:
    """Keras Conv2D(groups=2): tf-keras runs it through a jit-compiled tf.function, which the
    frozen graph keeps as a PartitionedCall."""
    name = "rnn_grouped_conv"
    seed_everything(SEED)
    inp = keras.Input((SIDE, SIDE, FEATURES), batch_size=1, name="x")
    model = keras.Model(inp, L.Conv2D(FEATURES, 3, groups=2, name="gconv")(inp), name=name)
    randomize(model, name)
    inputs = keras_input_specs(model)
    golden = random_inputs(name, inputs, N_GOLDEN)
    gd = freeze(keras_concrete(model), True)
    expect = model.predict(golden["x"], batch_size=1, verbose=0)
    return Frozen(name, {"": gd}, inputs, golden, "Keras Conv2D(4, 3x3, groups=2) on x "
                  "[1, 6, 6, 4] (frozen with the default lowering)", keras=model,
                  tflite=("float",), notes={"keras_output": expect})


BUILDERS = {
    **{name: (lambda n=name: build_function(n)) for name in FUNCTIONS},
    "rnn_grouped_conv": build_grouped_conv,
    **{name: (lambda n=name: build_keras(n)) for name in KERAS},
    "rnn_tf1_dynamic_rnn": build_tf1_dynamic_rnn,
    "rnn_tf1_static_rnn": build_tf1_static_rnn,
    "rnn_tf1_cond": build_tf1_cond,
}
