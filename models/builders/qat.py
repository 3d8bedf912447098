"""The quantization-aware sample graph qat_cnn of models/build_quantized.py: the FakeQuant
graph itself, TF's int8 conversion of it, and the FakeQuant ranges (raw, nudged, and as TF's
.tflite stores them) for qat_cnn.ranges.json."""

from __future__ import annotations

import warnings
from pathlib import Path

from .common import (
    INPUT_NAME,
    OUTPUT_NAME,
    SEED,
    SESSION_CONFIG,
    as_float32,
    interpreter,
    np,
    seed_everything,
    tf,
)
from .digits import INPUT_SHAPE

QAT_NAME = "qat_cnn"


# --------------------------------------------------------------------------- TF converter


def tf_int8_qat(pb_path: Path) -> bytes:
    """TF int8 of a FakeQuant (QAT) graph, no representative dataset, float input/output.

    TF 2.21's TF1 API cannot do this (see models/README.md): from_frozen_graph with
    optimizations=[DEFAULT] and supported_ops=[TFLITE_BUILTINS_INT8] dies with an
    AttributeError ('_experimental_low_bit_qat'), and without supported_ops it writes uint8
    QUANTIZE/DEQUANTIZE pairs around float kernels.  The TF2 converter on a concrete function
    that imports the frozen GraphDef unchanged does the QAT conversion; supported_ops must be
    left unset there too (with TFLITE_BUILTINS_INT8 it demands a representative_dataset).
    """
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(pb_path.read_bytes())

    def imported(x):
        return tf.compat.v1.import_graph_def(
            graph_def, input_map={f"{INPUT_NAME}:0": x}, return_elements=[f"{OUTPUT_NAME}:0"],
            name="",
        )[0]

    func = tf.compat.v1.wrap_function(
        imported, [tf.TensorSpec(INPUT_SHAPE, tf.float32, name=INPUT_NAME)]
    )
    conv = tf.lite.TFLiteConverter.from_concrete_functions([func], func)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.inference_input_type = tf.float32
    conv.inference_output_type = tf.float32
    with warnings.catch_warnings():
        # "Statistics for quantized inputs were expected, but not specified": the input range
        # comes from the input FakeQuant node, so there is nothing to specify.
        warnings.filterwarnings("ignore", message="Statistics for quantized inputs")
        return conv.convert()


# --------------------------------------------------------------------------- QAT graph


def build_qat_cnn(x_train, y_train) -> tf.compat.v1.GraphDef:
    """TF1 graph-mode CNN with FakeQuant nodes, trained briefly with them in the graph.

    input -> FQ_vars[0,1] -> conv1 (w: FQ_vars_per_channel, narrow) + bias + Relu -> FQ_vars
    (EMA range) -> MaxPool -> conv2 (w: FQ_vars, narrow) + bias + Relu -> FQ_args[0,6]
    -> Reshape -> MatMul (w: FQ_vars, narrow) + bias -> FQ_vars (EMA range) -> Softmax.
    Weight ranges are variables set to the symmetric range [-max|w|, max|w|] (per output
    channel for conv1) after every step; activation ranges are variables tracking an
    exponential moving average of the batch min/max (as tf.contrib.quantize did).
    """
    seed_everything(SEED)
    fq_vars = tf.quantization.fake_quant_with_min_max_vars
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1], name=INPUT_NAME)
        labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
        updates = []  # (range variable, new value), assigned after each training step

        def var(name, shape, init, trainable=True):
            if not callable(init):
                init = tf.compat.v1.constant_initializer(init)
            return tf.compat.v1.get_variable(
                name, shape, tf.float32, init, trainable=trainable
            )

        def weight_fq(w, per_channel=False):
            shape = [w.shape[-1]] if per_channel else []
            wmin = var("weights_min", shape, -1.0, trainable=False)
            wmax = var("weights_max", shape, 1.0, trainable=False)
            axes = list(range(len(w.shape) - 1)) if per_channel else None
            absmax = tf.reduce_max(tf.abs(w), axis=axes)
            updates.extend([(wmin, -absmax), (wmax, absmax)])
            if per_channel:
                return tf.quantization.fake_quant_with_min_max_vars_per_channel(
                    w, wmin, wmax, num_bits=8, narrow_range=True, name="weights_quant"
                )
            return fq_vars(w, wmin, wmax, num_bits=8, narrow_range=True, name="weights_quant")

        def act_fq(t, init_min, init_max, decay=0.9):
            amin = var("act_min", [], init_min, trainable=False)
            amax = var("act_max", [], init_max, trainable=False)
            updates.append((amin, decay * amin + (1 - decay) * tf.reduce_min(t)))
            updates.append((amax, decay * amax + (1 - decay) * tf.reduce_max(t)))
            return fq_vars(t, amin, amax, num_bits=8, narrow_range=False, name="act_quant")

        glorot = tf.compat.v1.glorot_uniform_initializer
        with tf.compat.v1.variable_scope("input_quant"):
            in_min = var("min", [], 0.0, trainable=False)
            in_max = var("max", [], 1.0, trainable=False)
            h = fq_vars(x, in_min, in_max, num_bits=8, narrow_range=False, name="FakeQuant")
        with tf.compat.v1.variable_scope("conv1"):
            w1 = weight_fq(var("weights", [3, 3, 1, 8], glorot(seed=SEED + 21)), per_channel=True)
            b1 = var("biases", [8], 0.0)
            h = tf.nn.conv2d(h, w1, strides=[1, 1, 1, 1], padding="SAME", name="Conv2D")
            h = tf.nn.bias_add(h, b1, name="BiasAdd")
            h = tf.nn.relu(h, name="Relu")
            h = act_fq(h, 0.0, 6.0)
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")  # 4x4x8
        with tf.compat.v1.variable_scope("conv2"):
            w2 = weight_fq(var("weights", [3, 3, 8, 8], glorot(seed=SEED + 22)))
            b2 = var("biases", [8], 0.0)
            h = tf.nn.conv2d(h, w2, strides=[1, 1, 1, 1], padding="VALID", name="Conv2D")
            h = tf.nn.bias_add(h, b2, name="BiasAdd")
            h = tf.nn.relu(h, name="Relu")  # 2x2x8
            h = tf.quantization.fake_quant_with_min_max_args(
                h, min=0.0, max=6.0, num_bits=8, narrow_range=False, name="act_quant"
            )
        h = tf.reshape(h, [-1, 2 * 2 * 8], name="flatten")
        with tf.compat.v1.variable_scope("fc"):
            w3 = weight_fq(var("weights", [32, 10], glorot(seed=SEED + 23)))
            b3 = var("biases", [10], 0.0)
            logits = tf.add(tf.matmul(h, w3, name="MatMul"), b3, name="logits")
            logits_q = act_fq(logits, -8.0, 8.0)
        tf.nn.softmax(logits_q, name=OUTPUT_NAME)

        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits_q)
        )
        train_op = tf.compat.v1.train.AdamOptimizer(learning_rate=5e-3).minimize(loss)
        # Every new value (they read the range variables through the forward pass) is
        # computed before any range variable is written: no read/write race, deterministic.
        with tf.control_dependencies([value for _, value in updates]):
            update_op = tf.group(*[tf.compat.v1.assign(v, value) for v, value in updates])

        rng = np.random.RandomState(SEED)
        batch = 32
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(update_op, feed_dict={x: x_train[:batch]})
            for epoch in range(25):
                order = rng.permutation(len(x_train))
                losses = []
                for i in range(0, len(order), batch):
                    feed = {x: x_train[order[i : i + batch]], labels: y_train[order[i : i + batch]]}
                    _, lv = sess.run([train_op, loss], feed_dict=feed)
                    sess.run(update_op, feed_dict=feed)  # ranges follow the updated weights
                    losses.append(lv)
                print(f"  {QAT_NAME} epoch {epoch + 1:2d}: loss {np.mean(losses):.4f}")
            frozen = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), [OUTPUT_NAME]
            )
    return frozen


def tf_nudge(rmin, rmax, num_bits: int, narrow_range: bool):
    """TF's Nudge() (fake_quant_ops_functor.h) in float32: nudged_min, nudged_max, scale, zp."""
    f32 = np.float32
    qmin = f32(1 if narrow_range else 0)
    qmax = f32(2**num_bits - 1)
    rmin, rmax = f32(rmin), f32(rmax)
    scale = (rmax - rmin) / (qmax - qmin)
    zp_from_min = qmin - rmin / scale
    if zp_from_min < qmin:
        zp = qmin
    elif zp_from_min > qmax:
        zp = qmax
    else:
        zp = f32(np.sign(zp_from_min) * np.floor(np.abs(zp_from_min) + f32(0.5)))  # std::round
    return f32((qmin - zp) * scale), f32((qmax - zp) * scale), f32(scale), int(zp)


def _const_value(graph_def, name: str) -> tuple[str, np.ndarray]:
    """Name and value of the Const reached through Identity nodes."""
    nodes = {n.name: n for n in graph_def.node}
    node = nodes[name.split(":")[0].lstrip("^")]
    while node.op == "Identity":
        node = nodes[node.input[0].split(":")[0]]
    assert node.op == "Const", (name, node.op)
    return node.name, tf.make_ndarray(node.attr["value"].tensor)


def _tf_fake_quant_extent(node, rmin, rmax) -> tuple[float, float]:
    """Run TF's own op on a ramp far beyond the range: its output min/max = nudged range."""
    ramp = np.linspace(float(rmin) - 10, float(rmax) + 10, 4001, dtype=np.float32)
    bits, narrow = node.attr["num_bits"].i, node.attr["narrow_range"].b
    if node.op == "FakeQuantWithMinMaxArgs":
        out = tf.quantization.fake_quant_with_min_max_args(
            ramp, min=rmin, max=rmax, num_bits=bits, narrow_range=narrow
        )
    else:
        out = tf.quantization.fake_quant_with_min_max_vars(
            ramp, np.float32(rmin), np.float32(rmax), num_bits=bits, narrow_range=narrow
        )
    out = out.numpy()
    return np.float32(out.min()), np.float32(out.max())


def _tflite_tensor_for(tensors: list, names: list[str]):
    """First integer tensor whose ';'-joined name has one of `names` as a part (in order)."""
    for n in names:
        for t in tensors:
            if n in t["name"].split(";"):
                return t, n
    return None, None


def qat_ranges(graph_def, model: bytes) -> dict:
    """Each FakeQuant node: inputs/attrs, nudged range, and TF's .tflite tensor parameters.

    TF's converter removes the FakeQuant nodes and names tensors after the fused TF nodes
    ("conv1/Relu;conv1/BiasAdd;..."), so a FakeQuant's tensor is looked up by its input's name
    (the tensor it quantizes), then by its own name.
    """
    interp = interpreter(model, "builtin")
    tensors = [t for t in interp.get_tensor_details() if t["dtype"] in (np.int8, np.uint8)]
    fq_ops = ("FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxArgs",
              "FakeQuantWithMinMaxVarsPerChannel")
    activations, weights = [], []
    for node in graph_def.node:
        if node.op not in fq_ops:
            continue
        bits, narrow = int(node.attr["num_bits"].i), bool(node.attr["narrow_range"].b)
        entry = {"name": node.name, "op": node.op, "input": node.input[0]}
        if node.op == "FakeQuantWithMinMaxArgs":
            rmin, rmax = np.float32(node.attr["min"].f), np.float32(node.attr["max"].f)
            entry.update(min_attr=as_float32(rmin), max_attr=as_float32(rmax))
        else:
            min_const, rmin = _const_value(graph_def, node.input[1])
            max_const, rmax = _const_value(graph_def, node.input[2])
            entry.update(
                min_input=node.input[1], max_input=node.input[2],
                min_const=min_const, max_const=max_const,
            )
        entry.update(num_bits=bits, narrow_range=narrow)
        if node.op == "FakeQuantWithMinMaxVarsPerChannel":
            nud = [tf_nudge(a, b, bits, narrow) for a, b in zip(rmin.ravel(), rmax.ravel())]
            entry.update(
                channels=int(rmin.size),
                min=[as_float32(v) for v in rmin.ravel()],
                max=[as_float32(v) for v in rmax.ravel()],
                nudged_min=[as_float32(n[0]) for n in nud],
                nudged_max=[as_float32(n[1]) for n in nud],
                nudged_scale=[as_float32(n[2]) for n in nud],
                zero_point_uint=sorted({n[3] for n in nud}),
            )
        else:
            rmin, rmax = np.float32(rmin), np.float32(rmax)
            nmin, nmax, scale, zp = tf_nudge(rmin, rmax, bits, narrow)
            # cross-check the formula against TF's own kernel
            tmin, tmax = _tf_fake_quant_extent(node, rmin, rmax)
            assert (tmin, tmax) == (nmin, nmax), (node.name, tmin, tmax, nmin, nmax)
            entry.update(
                min=as_float32(rmin),
                max=as_float32(rmax),
                nudged_min=as_float32(nmin),
                nudged_max=as_float32(nmax),
                nudged_scale=as_float32(scale),
                zero_point_uint=zp,  # on the unsigned [qmin, qmax] grid
                zero_point_int8=zp - 128,
            )
        is_weight = _is_const_chain(graph_def, node.input[0])
        names = [node.name] if is_weight else [node.input[0].split(":")[0], node.name]
        t, matched = _tflite_tensor_for(tensors, names)
        if t is None:
            entry["tflite_tensor"] = None
        else:
            qp = t["quantization_parameters"]
            tt = {"name": t["name"], "dtype": np.dtype(t["dtype"]).name, "matched_by": matched}
            if len(qp["scales"]) == 1:
                tt.update(scale=as_float32(qp["scales"][0]), zero_point=int(qp["zero_points"][0]))
            else:
                tt.update(
                    per_channel_axis=int(qp["quantized_dimension"]),
                    scales=[as_float32(v) for v in qp["scales"]],
                    zero_points=sorted({int(v) for v in qp["zero_points"]}),
                )
            entry["tflite_tensor"] = tt
            if "scale" in tt:
                entry["tflite_scale_rel_diff"] = float(
                    f"{abs(tt['scale'] - entry['nudged_scale']) / entry['nudged_scale']:.3g}"
                )
        (weights if is_weight else activations).append(entry)
    return {"activation_fake_quants": activations, "weight_fake_quants": weights}


def _is_const_chain(graph_def, name: str) -> bool:
    nodes = {n.name: n for n in graph_def.node}
    node = nodes[name.split(":")[0]]
    while node.op == "Identity":
        node = nodes[node.input[0].split(":")[0]]
    return node.op == "Const"
