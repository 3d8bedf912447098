#!/usr/bin/env python
"""Build TensorFlow's quantized reference models for issue 4 (dev-only; needs TensorFlow).

How to run (from the repository root, after ``python models/build_models.py``)::

    pip install -e ".[dev]"          # TensorFlow, tf-keras, scikit-learn, ai-edge-litert
    python models/build_quantized.py

Everything is deterministic (fixed seeds, single-threaded TensorFlow, op determinism, fixed
calibration samples); rerunning with the same package versions rewrites byte-identical files.
The helpers (data split, atomic/npz writers, frozen-graph runner) come from build_models.py.

Outputs (see models/README.md, "Quantized references"):

  digits_calib.npy              calibration set: the first 100 TRAINING images, float32 [100,8,8,1]
  <m>.tf_int8.tflite            TF full-integer int8 of models/<m>.pb, float input/output
  <m>.tf_int8_io.tflite         the same with int8 input/output
  <m>.tf_uint8.tflite           TF's legacy uint8 (inference_type=uint8, default_ranges_stats)
  quantized_reference.json      per file: size, LiteRT test accuracy (3 kernel sets), op counts,
                                I/O (and float-io boundary) quantization parameters
  qat_cnn.pb                    quantization-aware TF1 graph with FakeQuant nodes (frozen)
  qat_cnn.golden.npz            input / output (frozen graph) / labels, first 32 test images
  qat_cnn.tf_int8.tflite        TF int8 of qat_cnn.pb WITHOUT a representative dataset
  qat_cnn.ranges.json           each FakeQuant node: raw and nudged range, TF .tflite scale/zp
for <m> in tf1_cnn, keras_cnn.
"""

from __future__ import annotations

import io
import json
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_models as bm  # noqa: E402  (sets env, seeds, single-threaded TF, op determinism)
from build_models import (  # noqa: E402
    INPUT_NAME,
    N_GOLDEN,
    OUTPUT_NAME,
    SEED,
    _atomic_write,
    _op_types,
    _seed_everything,
    _write_graph,
    _write_npz,
    load_data,
    run_frozen,
)

np = bm.np
tf = bm.tf

N_CALIB = 100
MODELS = ("tf1_cnn", "keras_cnn")
INPUT_SHAPE = [1, 8, 8, 1]
# Legacy uint8 (TOCO scheme): real = (q - mean) / std, so (0, 255) means input range [0, 1].
UINT8_INPUT_STATS = (0.0, 255.0)
# Range given to every activation tensor without one (the graphs have no FakeQuant nodes).
UINT8_DEFAULT_RANGES = (0.0, 6.0)
QAT_NAME = "qat_cnn"
# Accuracy floors (the float models score 0.9345 / 0.9622); catches a broken conversion.
MIN_ACC = 0.90


def _json_bytes(obj) -> bytes:
    """Indented JSON with lists of scalars (and short flat objects) kept on one line."""

    def scalar(v) -> bool:
        return not isinstance(v, (dict, list))

    def flat(o) -> bool:  # scalars, or (in an object) lists of scalars
        if isinstance(o, list):
            return all(scalar(v) for v in o)
        return all(scalar(v) or (isinstance(v, list) and flat(v)) for v in o.values())

    def enc(o, ind: str) -> str:
        if isinstance(o, (dict, list)) and (
            not o or (flat(o) and (isinstance(o, list) or len(json.dumps(o)) <= 150))
        ):
            return json.dumps(o)
        inner = ind + "  "
        if isinstance(o, dict):
            items = [f"{inner}{json.dumps(k)}: {enc(v, inner)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + ind + "}"
        if isinstance(o, list):
            return "[\n" + ",\n".join(inner + enc(v, inner) for v in o) + "\n" + ind + "]"
        return json.dumps(o)

    text = enc(obj, "") + "\n"
    assert json.loads(text) == obj
    return text.encode()


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def _f(x) -> float:
    """A float32 as the exact Python float (JSON round-trips it to the same float32)."""
    return float(np.float32(x))


# --------------------------------------------------------------------------- TF converters


def _v1_converter(pb_path: Path):
    return tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(pb_path),
        input_arrays=[INPUT_NAME],
        output_arrays=[OUTPUT_NAME],
        input_shapes={INPUT_NAME: INPUT_SHAPE},
    )


def tf_int8(pb_path: Path, calib: np.ndarray, io_type) -> bytes:
    """TF full-integer int8 (post-training, calibrated on `calib`, batch 1, in order)."""
    conv = _v1_converter(pb_path)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = io_type
    conv.inference_output_type = io_type

    def representative_dataset():
        for i in range(len(calib)):
            yield [calib[i : i + 1]]

    conv.representative_dataset = representative_dataset
    return conv.convert()


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


def tf_uint8(pb_path: Path) -> bytes:
    """TOCO-style legacy uint8 via the TF1 API (no calibration: fixed default ranges)."""
    conv = _v1_converter(pb_path)
    conv.inference_type = tf.uint8
    conv.quantized_input_stats = {INPUT_NAME: UINT8_INPUT_STATS}
    conv.default_ranges_stats = UINT8_DEFAULT_RANGES
    return conv.convert()


# --------------------------------------------------------------------------- LiteRT


RESOLVERS = {
    # Interpreter() as constructed by default: builtin kernels + XNNPACK delegate
    "default": "AUTO",
    # optimized builtin kernels without the default delegate
    "builtin": "BUILTIN_WITHOUT_DEFAULT_DELEGATES",
    # reference kernels
    "ref": "BUILTIN_REF",
}


def _interpreter(model: bytes, resolver: str):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(
        model_content=model,
        num_threads=1,
        experimental_op_resolver_type=getattr(OpResolverType, RESOLVERS[resolver]),
    )
    interp.allocate_tensors()
    return interp


def _quantize_input(x: np.ndarray, detail) -> np.ndarray:
    if detail["dtype"] == np.float32:
        return x.astype(np.float32)
    scale, zp = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    r = x.astype(np.float32) / np.float32(scale)
    q = np.sign(r) * np.floor(np.abs(r) + np.float32(0.5)) + zp  # std::round, as TFLite's QUANTIZE
    return np.clip(q, info.min, info.max).astype(detail["dtype"])


def litert_outputs(model: bytes, x: np.ndarray, resolver: str) -> np.ndarray:
    """Raw output tensors (quantized for integer io) of all images, batch 1."""
    interp = _interpreter(model, resolver)
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    outs = []
    for i in range(len(x)):
        interp.set_tensor(inp["index"], _quantize_input(x[i : i + 1], inp))
        interp.invoke()
        outs.append(interp.get_tensor(out["index"])[0].copy())
    return np.stack(outs)


def _qparams(t) -> dict:
    qp = t["quantization_parameters"]
    scales, zps = qp["scales"], qp["zero_points"]
    d = {"name": t["name"], "dtype": np.dtype(t["dtype"]).name, "shape": t["shape"].tolist()}
    if len(scales) == 1:
        d["scale"] = _f(scales[0])
        d["zero_point"] = int(zps[0])
    elif len(scales) > 1:
        d["per_channel_axis"] = int(qp["quantized_dimension"])
        d["n_scales"] = len(scales)
    return d


def describe(model: bytes) -> dict:
    """Op list and I/O quantization of a .tflite (builtin kernels, no delegate).

    For float input/output the quantized boundary tensors are reported too: the output of the
    leading QUANTIZE and the input of the trailing DEQUANTIZE.
    """
    interp = _interpreter(model, "builtin")
    ops = interp._get_ops_details()
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    names = [op["op_name"] for op in ops]
    desc = {
        "ops": names,
        "op_counts": dict(sorted(Counter(names).items())),
        "input": _qparams(inp),
        "output": _qparams(out),
    }
    if names[0] == "QUANTIZE":
        desc["quantize_output"] = _qparams(tensors[ops[0]["outputs"][0]])
    if names[-1] == "DEQUANTIZE":
        desc["dequantize_input"] = _qparams(tensors[ops[-1]["inputs"][0]])
    return desc


def evaluate(model: bytes, x: np.ndarray, y: np.ndarray) -> dict:
    """Test accuracy per LiteRT kernel set, and how far the kernel sets disagree."""
    raw = {r: litert_outputs(model, x, r) for r in RESOLVERS}
    acc = {r: round(float(np.mean(np.argmax(out, axis=1) == y)), 6) for r, out in raw.items()}
    # [max abs difference of the raw outputs (quantized units for integer io), images differing]
    differ = {}
    for a, b in (("builtin", "ref"), ("default", "ref"), ("default", "builtin")):
        diff = np.abs(raw[a].astype(np.float64) - raw[b].astype(np.float64))
        n = int(np.sum(diff.reshape(len(x), -1).max(1) > 0))
        differ[f"{a}_vs_{b}"] = [float(f"{diff.max():.6g}"), n]
    return {"accuracy": acc["ref"], "accuracy_by_kernels": acc, "kernel_sets_differ": differ}


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
    _seed_everything(SEED)
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

        config = tf.compat.v1.ConfigProto(
            intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
        )
        rng = np.random.RandomState(SEED)
        batch = 32
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
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
    interp = _interpreter(model, "builtin")
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
            entry.update(min_attr=_f(rmin), max_attr=_f(rmax))
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
                min=[_f(v) for v in rmin.ravel()],
                max=[_f(v) for v in rmax.ravel()],
                nudged_min=[_f(n[0]) for n in nud],
                nudged_max=[_f(n[1]) for n in nud],
                nudged_scale=[_f(n[2]) for n in nud],
                zero_point_uint=sorted({n[3] for n in nud}),
            )
        else:
            rmin, rmax = np.float32(rmin), np.float32(rmax)
            nmin, nmax, scale, zp = tf_nudge(rmin, rmax, bits, narrow)
            # cross-check the formula against TF's own kernel
            tmin, tmax = _tf_fake_quant_extent(node, rmin, rmax)
            assert (tmin, tmax) == (nmin, nmax), (node.name, tmin, tmax, nmin, nmax)
            entry.update(
                min=_f(rmin),
                max=_f(rmax),
                nudged_min=_f(nmin),
                nudged_max=_f(nmax),
                nudged_scale=_f(scale),
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
                tt.update(scale=_f(qp["scales"][0]), zero_point=int(qp["zero_points"][0]))
            else:
                tt.update(
                    per_channel_axis=int(qp["quantized_dimension"]),
                    scales=[_f(v) for v in qp["scales"]],
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


# --------------------------------------------------------------------------- main


def main() -> int:
    x_train, y_train, x_test, y_test = load_data()
    calib = np.ascontiguousarray(x_train[:N_CALIB], dtype=np.float32)
    assert calib.shape == (N_CALIB, 8, 8, 1)
    _atomic_write(HERE / "digits_calib.npy", _npy_bytes(calib))
    # the committed test set must be the one load_data() gives
    with np.load(HERE / "digits_test.npz") as z:
        assert np.array_equal(z["x"], x_test) and np.array_equal(z["y"], y_test)
    print(f"calibration: first {N_CALIB} training images; test: {len(y_test)} images")

    # Top level: metadata, then one object per model with one entry per TF .tflite, keyed
    # by the file-name suffix ("tf_int8", "tf_int8_io", "tf_uint8").
    reference = {
        "tensorflow": tf.__version__,
        "calibration": {
            "file": "digits_calib.npy",
            "samples": N_CALIB,
            "note": "first 100 training images, fed in order at batch 1 as representative_dataset",
        },
        "uint8": {
            "quantized_input_stats": {INPUT_NAME: list(UINT8_INPUT_STATS)},
            "default_ranges_stats": list(UINT8_DEFAULT_RANGES),
        },
        "n_test": int(len(y_test)),
        "accuracy": "test accuracy with BUILTIN_REF kernels; accuracy_by_kernels: all kernel sets",
        "kernel_sets": {k: f"OpResolverType.{v}" for k, v in RESOLVERS.items()},
        "kernel_sets_differ": "[max abs difference of the raw outputs (quantized units for "
        "integer io), number of test images whose outputs differ]",
    }
    table = []

    def add_file(entry: dict, name: str, suffix: str, data: bytes) -> None:
        fname = f"{name}.{suffix}.tflite"
        _atomic_write(HERE / fname, data)
        desc = describe(data)
        ev = evaluate(data, x_test, y_test)
        acc = ev["accuracy_by_kernels"]
        print(f"  {fname}: {len(data)} bytes, ops {desc['ops']}")
        print(f"    acc default/builtin/ref: {acc['default']:.4f} / {acc['builtin']:.4f} / "
              f"{acc['ref']:.4f}; kernel sets differ: {ev['kernel_sets_differ']}")
        assert min(acc.values()) > MIN_ACC, (fname, ev)
        entry[suffix] = {"file": fname, "size": len(data), **ev, **desc}
        table.append((fname, len(data), acc))

    for name in MODELS:
        pb = HERE / f"{name}.pb"
        print(f"\n[{name}]")
        with (HERE / f"{name}.tf_ops.json").open() as f:
            float_acc = json.load(f)["tflite_float_test_accuracy"]
        entry = reference[name] = {"float_tflite_test_accuracy": float_acc}
        add_file(entry, name, "tf_int8", tf_int8(pb, calib, tf.float32))
        add_file(entry, name, "tf_int8_io", tf_int8(pb, calib, tf.int8))
        add_file(entry, name, "tf_uint8", tf_uint8(pb))

    print(f"\n[{QAT_NAME}] training (tf.compat.v1 graph mode, FakeQuant in the graph)")
    gd = build_qat_cnn(x_train, y_train)
    ops = _op_types(gd)
    print(f"  op types: {ops}")
    for op in ("FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxArgs",
               "FakeQuantWithMinMaxVarsPerChannel"):
        assert op in ops, f"{QAT_NAME}: missing {op}"
    _write_graph(gd, f"{QAT_NAME}.pb", as_text=False)
    probs = run_frozen(gd, x_test)
    qat_float_acc = float(np.mean(np.argmax(probs, axis=1) == y_test))
    print(f"  TF frozen-graph test accuracy: {qat_float_acc:.4f}")
    assert qat_float_acc > MIN_ACC
    _write_npz(
        HERE / f"{QAT_NAME}.golden.npz",
        input=x_test[:N_GOLDEN].astype(np.float32),
        output=probs[:N_GOLDEN].astype(np.float32),
        labels=y_test[:N_GOLDEN].astype(np.int64),
    )
    entry = reference[QAT_NAME] = {
        "tf_frozen_graph_test_accuracy": round(qat_float_acc, 6),
        "graphdef_op_counts": ops,
    }
    qat_tfl = tf_int8_qat(HERE / f"{QAT_NAME}.pb")
    add_file(entry, QAT_NAME, "tf_int8", qat_tfl)
    fname = entry["tf_int8"]["file"]
    ranges = qat_ranges(gd, qat_tfl)
    ranges = {
        "model": f"{QAT_NAME}.pb",
        "tflite": fname,
        "nudging": "qmin = 1 if narrow_range else 0, qmax = 2^num_bits - 1; "
        "scale = (max - min) / (qmax - qmin); zp = clamp(round(qmin - min / scale), qmin, qmax); "
        "nudged_min = (qmin - zp) * scale; nudged_max = (qmax - zp) * scale (float32, as TF)",
        **ranges,
    }
    for e in ranges["activation_fake_quants"]:
        t = e["tflite_tensor"] or {}
        print(f"  {e['name']} ({e['op']}): [{e['min']:.6g}, {e['max']:.6g}] -> nudged "
              f"[{e['nudged_min']:.6g}, {e['nudged_max']:.6g}], scale {e['nudged_scale']:.6g} "
              f"zp {e['zero_point_int8']}; tflite {t.get('scale')} / {t.get('zero_point')}")
        # issue 4's acceptance: TF's tensor ranges equal the (nudged) fake-quant ranges
        assert t.get("zero_point") == e["zero_point_int8"], e
        assert e["tflite_scale_rel_diff"] < 1e-6, e
    _atomic_write(HERE / f"{QAT_NAME}.ranges.json", _json_bytes(ranges))
    _atomic_write(HERE / "quantized_reference.json", _json_bytes(reference))

    print("\nsummary (LiteRT test accuracy on %d images)" % len(y_test))
    print(f"  {'file':32s} {'bytes':>6s}  default builtin  ref")
    for fname, size, a in table:
        print(f"  {fname:32s} {size:6d}  {a['default']:.4f}  {a['builtin']:.4f}  {a['ref']:.4f}")
    print("\nwrote:")
    total = 0
    for p in bm._written:
        size = p.stat().st_size
        total += size
        print(f"  {p.relative_to(HERE.parent)}  {size} bytes")
    print(f"  total {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
