#!/usr/bin/env python
"""Build the "real-world" GraphDefs of issue 3 (dev-only; needs TensorFlow).

How to run (from the repository root)::

    pip install -e ".[dev]"       # TensorFlow, tf-keras, scikit-learn, ai-edge-litert
    python models/build_real_world.py                # everything (~2 min on 2 CPU cores)
    python models/build_real_world.py --skip-large   # only the small, committed models (~10 s)
    python models/build_real_world.py --only text_classifier --only op_zoo_math

Small models (committed, written to models/):

  tf1_mobilenet_unfolded_bn     TF1 MobileNet-like net, unfolded batch norm, tf.pad + VALID
  tf1_cond_is_training          tf.cond on is_training = tf.constant(False) (Switch / Merge)
  tf1_cond_placeholder_default  the same graph with is_training = placeholder_with_default(False)
  text_classifier               int32 token ids -> embedding (GatherV2) -> mean over time -> Dense
  keras_dynamic_shape           Shape / StridedSlice / Pack / Reshape plumbing
  efficientnet_like             swish (IdentityN), squeeze-excite, BN, Dropout, StopGradient
  op_zoo_math / op_zoo_array / op_zoo_image   the rest of the issue's op list, one output per op

Large models (tf-keras applications, random weights; NOT committed): MobileNet, MobileNetV2,
MobileNetV3Small, EfficientNetB0, ResNet50, InceptionV3, DenseNet121.  Their .pb, golden .npz
and TF .tflite go to models/cache/ (git-ignored); only their small <name>.tf_ops.json files are
written to models/ and committed.

Per model the script writes

  <name>.pb            frozen GraphDef (binary protobuf)
  <name>.golden.npz    held-out inputs and TensorFlow's outputs of the FROZEN graph.  One input
                       and one output: keys ``input`` / ``output``; otherwise ``inputs/<node>`` /
                       ``outputs/<node>``.  Always ``input_names`` / ``output_names`` (str arrays,
                       converter order).
  <name>.tf.tflite     TensorFlow's own float .tflite (TFLiteConverter.from_frozen_graph, batch 1)
  <name>.tf_ops.json   TF converter op list and counts, I/O (node names, batch-1 shapes), GraphDef
                       op counts, LiteRT-vs-golden error, output spread

and checks that TF's .tflite in LiteRT reproduces the golden outputs (max abs diff <= 1e-4 x
max |reference|) and that the outputs are not degenerate (max over elements of the standard
deviation across the golden batch > 1e-3 x max |reference|).

Random-weight networks with batch norm are made non-degenerate with data-dependent batch-norm
statistics: every BatchNormalization layer's momentum is set to 0 (and every Dropout rate to 0),
the model runs ONE training-mode forward pass on a calibration batch of real photo crops, so each
moving mean / variance becomes the statistics of that batch at that layer; then momentum and
dropout rates are restored and the model is frozen in inference mode.  Calibration crops and
golden crops come from disjoint regions of the photos.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# tf.compat.v1.layers (used by the TF1 graphs) needs Keras 2 (tf_keras) behind tf.keras.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_models as bm  # noqa: E402  (sets env, seeds, single-threaded TF, op determinism)
from build_models import _atomic_write, _op_types, _seed_everything, _write_npz  # noqa: E402

np = bm.np
tf = bm.tf
keras = bm.keras
convert_variables_to_constants_v2 = bm.convert_variables_to_constants_v2

CACHE = HERE / "cache"
SEED = bm.SEED
N_GOLDEN = 8  # held-out inputs per small model
N_GOLDEN_LARGE = 4  # held-out inputs per large model
N_CALIB = 64  # calibration crops for the small image models
N_CALIB_LARGE = 8  # calibration crops for the large models (one batch, one forward pass)
REL_TOL = 1e-4  # LiteRT(TF .tflite) vs golden, relative to max |reference|
MIN_SPREAD = 1e-3  # golden outputs must vary across the batch (relative to max |reference|)
VARIABLE_OPS = ("VariableV2", "VarHandleOp", "ReadVariableOp", "AssignVariableOp")

SESSION_CONFIG = tf.compat.v1.ConfigProto(
    intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
)


# --------------------------------------------------------------------------- data


def digits():
    """sklearn digits, [0, 1] float32 NHWC, same split as build_models.py."""
    return bm.load_data()


_PHOTOS: list | None = None


def photos() -> list:
    """The two real 427x640 RGB photos bundled with scikit-learn (china.jpg, flower.jpg).

    Decoded with TensorFlow (PIL is not needed), float32 in [0, 255]."""
    global _PHOTOS
    if _PHOTOS is None:
        import sklearn.datasets

        img_dir = Path(sklearn.datasets.__file__).parent / "images"
        _PHOTOS = []
        for fname in ("china.jpg", "flower.jpg"):
            data = tf.io.read_file(str(img_dir / fname))
            img = tf.io.decode_jpeg(data, channels=3, dct_method="INTEGER_ACCURATE")
            _PHOTOS.append(img.numpy().astype(np.float32))
    return _PHOTOS


def photo_crops(n: int, size: int, split: str, seed: int) -> np.ndarray:
    """n square crops of the two photos resized to size x size, float32 [0, 255] NHWC.

    split="calib" crops lie in columns [0, 384), split="golden" in columns [384, 640): the
    calibration and held-out golden inputs share no pixels."""
    rng = np.random.RandomState(seed)
    out = []
    for k in range(n):
        img = photos()[k % 2]
        h, w, _ = img.shape
        x_lo, x_hi = (0, 384) if split == "calib" else (384, w)
        side = int(rng.randint(128, min(h, x_hi - x_lo) + 1))
        y0 = int(rng.randint(0, h - side + 1))
        x0 = int(rng.randint(x_lo, x_hi - side + 1))
        crop = img[y0 : y0 + side, x0 : x0 + side]
        if rng.rand() < 0.5:
            crop = crop[:, ::-1]
        resized = tf.image.resize(crop[None], (size, size), method="bilinear", antialias=True)
        out.append(np.clip(resized.numpy()[0], 0.0, 255.0))
    return np.stack(out).astype(np.float32)


def small_images(n: int, split: str, seed: int) -> np.ndarray:
    """32x32x3 photo crops scaled to [-1, 1]."""
    return (photo_crops(n, 32, split, seed) / np.float32(127.5) - np.float32(1.0)).astype(
        np.float32
    )


# --------------------------------------------------------------------------- helpers


def freeze_keras(model, input_specs: dict, output_name: str = "probs"):
    """Freeze a tf-keras model with convert_variables_to_constants_v2 (inference mode).

    The function's single output Identity (named "Identity") is renamed to output_name, and
    the process-global uids in IdentityN's `_gradient_op_type` attrs ("CustomGradient-<uid>",
    left by custom-gradient functions such as swish) are renumbered 1, 2, ... in node order,
    so a model's files do not depend on what else ran in the process. Nothing else is edited."""
    specs = [tf.TensorSpec(shape, dtype, name=name) for name, (shape, dtype) in input_specs.items()]

    @tf.function(input_signature=specs)
    def serve(*args):
        return model(args[0] if len(args) == 1 else list(args), training=False)

    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    gd = frozen.graph.as_graph_def()
    (out_tensor,) = frozen.outputs
    _rename_node(gd, out_tensor.op.name, output_name)
    renumber: dict = {}
    for node in gd.node:
        if "_gradient_op_type" in node.attr:
            old = node.attr["_gradient_op_type"].s.decode()
            prefix = old.rsplit("-", 1)[0]
            new = renumber.setdefault(old, f"{prefix}-{len(renumber) + 1}")
            node.attr["_gradient_op_type"].s = new.encode()
    return gd


def _rename_node(gd, old: str, new: str) -> None:
    for node in gd.node:
        if node.name == old:
            node.name = new
        for i, inp in enumerate(node.input):
            ctrl = inp.startswith("^")
            base = inp.lstrip("^").split(":")[0]
            if base == old:
                node.input[i] = ("^" if ctrl else "") + new + inp.lstrip("^")[len(old) :]


def calibrate_batchnorm(model, x: np.ndarray) -> int:
    """Data-dependent BN statistics: momentum 0, ONE training-mode forward pass on x.

    Every BatchNormalization layer's moving mean / variance becomes the statistics of x at
    that layer (fused BN with exponential_avg_factor = 1 - momentum = 1; Bessel's correction
    removed).  Dropout rates are set to 0 for the pass so they do not disturb the statistics.
    Returns the number of BN layers updated."""
    bns, drops = [], []
    for layer in _all_layers(model):
        if isinstance(layer, keras.layers.BatchNormalization):
            bns.append((layer, layer.momentum))
            layer.momentum = 0.0
        elif isinstance(layer, keras.layers.Dropout):
            drops.append((layer, layer.rate))
            layer.rate = 0.0
    before = [layer.moving_variance.numpy().copy() for layer, _ in bns]
    model(tf.constant(x), training=True)
    for layer, momentum in bns:
        layer.momentum = momentum
    for layer, rate in drops:
        layer.rate = rate
    changed = sum(
        not np.allclose(b, layer.moving_variance.numpy()) for b, (layer, _) in zip(before, bns)
    )
    assert changed == len(bns), f"only {changed}/{len(bns)} BN layers got batch statistics"
    return len(bns)


def _all_layers(model):
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _all_layers(layer)
        else:
            yield layer


def run_frozen(gd, feeds: dict, outputs: list) -> dict:
    """Run a frozen GraphDef in TensorFlow (fresh graph, one session)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
        res = sess.run(
            [f"{o}:0" for o in outputs], feed_dict={f"{k}:0": v for k, v in feeds.items()}
        )
    return {o: np.asarray(r) for o, r in zip(outputs, res)}


def tf_tflite(pb_path: Path, inputs: dict, outputs: list) -> bytes:
    conv = tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(pb_path),
        input_arrays=list(inputs),
        output_arrays=list(outputs),
        input_shapes={k: [1] + list(v[0][1:]) for k, v in inputs.items()},
    )
    return conv.convert()


def litert_run(model_bytes: bytes, feeds: dict, outputs: list):
    """Run TF's .tflite in LiteRT one sample at a time (batch 1), builtin kernels, no delegate."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(
        model_content=model_bytes,
        num_threads=1,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    interp.allocate_tensors()
    ins = {d["name"]: d for d in interp.get_input_details()}
    outs = {d["name"]: d for d in interp.get_output_details()}
    assert set(ins) == set(feeds), f"LiteRT inputs {sorted(ins)} != {sorted(feeds)}"
    assert set(outs) == set(outputs), f"LiteRT outputs {sorted(outs)} != {sorted(outputs)}"
    n = len(next(iter(feeds.values())))
    res = {o: [] for o in outputs}
    for i in range(n):
        for name, arr in feeds.items():
            interp.set_tensor(ins[name]["index"], arr[i : i + 1])
        interp.invoke()
        for o in outputs:
            res[o].append(interp.get_tensor(outs[o]["index"])[0].copy())
    res = {o: np.stack(v) for o, v in res.items()}
    ops = [d["op_name"] for d in interp._get_ops_details()]

    def desc(d):
        return {"name": d["name"], "shape": d["shape"].tolist(), "dtype": d["dtype"].__name__}

    io = {
        "inputs": [desc(ins[k]) for k in feeds],
        "outputs": [desc(outs[o]) for o in outputs],
    }
    if len(feeds) == 1:
        io["input"] = io["inputs"][0]
    if len(outputs) == 1:
        io["output"] = io["outputs"][0]
    return res, ops, io


def spread(y: np.ndarray) -> float:
    """max over elements of the std across the batch, relative to max |y|."""
    y = y.astype(np.float64)
    scale = float(np.max(np.abs(y)))
    if scale == 0.0:
        return 0.0
    return float(np.max(np.std(y, axis=0)) / scale)


def _fmt(x: float) -> float:
    return float(f"{x:.3g}")


# --------------------------------------------------------------------------- model spec


@dataclass
class Built:
    """A frozen graph ready for finish()."""

    graph_def: object
    inputs: dict  # node name -> (shape with None batch, numpy dtype str)
    outputs: list  # output node names, converter order
    golden: dict  # node name -> held-out input batch
    expect_ops: tuple = ()  # GraphDef op types that must be present
    notes: dict = field(default_factory=dict)  # extra json fields (built with, preprocessing...)
    extra: dict = field(default_factory=dict)  # extra golden arrays (labels)


@dataclass
class Spec:
    name: str
    build: object  # () -> Built
    large: bool = False


# --------------------------------------------------------------------------- 1. TF1 MobileNet


def build_tf1_mobilenet_unfolded_bn() -> Built:
    """TF1 graph: conv s2 + unfolded BN + relu6, 2 depthwise-separable blocks, GAP, dense."""
    _seed_everything(SEED)
    rng = np.random.RandomState(SEED + 100)
    calib = small_images(N_CALIB, "calib", SEED + 101)
    golden = small_images(N_GOLDEN, "golden", SEED + 102)
    graph = tf.Graph()
    bn_inputs = []  # (pre-BN tensor, mean var, variance var)
    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        x = tf.compat.v1.placeholder(tf.float32, [None, 32, 32, 3], name="input")
        he = tf.compat.v1.variance_scaling_initializer

        def bn_relu6(h, scope):
            c = h.shape[-1]
            with tf.compat.v1.variable_scope(scope):
                gamma = tf.compat.v1.get_variable(
                    "gamma", initializer=rng.uniform(0.5, 1.5, c).astype(np.float32)
                )
                beta = tf.compat.v1.get_variable(
                    "beta", initializer=rng.normal(0.0, 0.1, c).astype(np.float32)
                )
                mean = tf.compat.v1.get_variable("moving_mean", initializer=np.zeros(c, np.float32))
                var = tf.compat.v1.get_variable(
                    "moving_variance", initializer=np.ones(c, np.float32)
                )
                bn_inputs.append((h, mean, var))
                # Unfolded: AddV2(var, eps) -> Rsqrt -> Mul(gamma); x*inv + (beta - mean*inv)
                h = tf.nn.batch_normalization(h, mean, var, beta, gamma, 1e-3, name="batchnorm")
                return tf.nn.relu6(h, name="relu6")

        def conv(h, k, cout, stride, padding, scope, seed):
            with tf.compat.v1.variable_scope(scope):
                w = tf.compat.v1.get_variable(
                    "weights", [k, k, h.shape[-1], cout], tf.float32, he(scale=2.0, seed=seed)
                )
                return tf.nn.conv2d(h, w, [1, stride, stride, 1], padding, name="Conv2D")

        def dwconv(h, stride, padding, scope, seed):
            with tf.compat.v1.variable_scope(scope):
                w = tf.compat.v1.get_variable(
                    "depthwise_weights",
                    [3, 3, h.shape[-1], 1],
                    tf.float32,
                    he(scale=2.0, seed=seed),
                )
                return tf.nn.depthwise_conv2d(
                    h, w, [1, stride, stride, 1], padding, name="depthwise"
                )

        h = conv(x, 3, 16, 2, "SAME", "conv0", SEED + 1)  # 16x16x16
        h = bn_relu6(h, "conv0/bn")
        # block 1: stride-1 depthwise, SAME padding
        h = dwconv(h, 1, "SAME", "block1/dw", SEED + 2)
        h = bn_relu6(h, "block1/dw_bn")
        h = conv(h, 1, 32, 1, "VALID", "block1/pw", SEED + 3)
        h = bn_relu6(h, "block1/pw_bn")  # 16x16x32
        # block 2: stride-2 depthwise with explicit tf.pad ((0,1),(0,1)) + VALID (== SAME, foldable)
        h = tf.pad(h, [[0, 0], [0, 1], [0, 1], [0, 0]], name="block2/pad")
        h = dwconv(h, 2, "VALID", "block2/dw", SEED + 4)  # 8x8x32
        h = bn_relu6(h, "block2/dw_bn")
        h = conv(h, 1, 64, 1, "VALID", "block2/pw", SEED + 5)
        h = bn_relu6(h, "block2/pw_bn")  # 8x8x64
        h = tf.reduce_mean(h, axis=[1, 2], name="gap")
        with tf.compat.v1.variable_scope("fc"):
            w = tf.compat.v1.get_variable(
                "weights",
                [64, 10],
                tf.float32,
                tf.compat.v1.glorot_uniform_initializer(seed=SEED + 6),
            )
            b = tf.compat.v1.get_variable(
                "biases", initializer=rng.normal(0, 0.1, 10).astype(np.float32)
            )
            logits = tf.nn.bias_add(tf.matmul(h, w, name="MatMul"), b, name="logits")
        tf.nn.softmax(logits, name="probs")

        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            # Data-dependent moving statistics, layer by layer, on the calibration crops.
            for pre, mean, var in bn_inputs:
                v = sess.run(pre, {x: calib})
                mean.load(v.mean(axis=(0, 1, 2)), sess)
                var.load(v.var(axis=(0, 1, 2)) + 1e-3, sess)
            gd = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs"]
            )
    return Built(
        gd,
        {"input": ([None, 32, 32, 3], "float32")},
        ["probs"],
        {"input": golden},
        expect_ops=(
            "Rsqrt",
            "Mul",
            "Sub",
            "AddV2",
            "Pad",
            "DepthwiseConv2dNative",
            "Relu6",
            "Mean",
        ),
        notes={
            "built_with": "tf.compat.v1 graph mode + Session, frozen with "
            "tf.compat.v1.graph_util.convert_variables_to_constants",
            "input_data": "32x32 crops of sklearn's sample photos, x/127.5 - 1",
        },
    )


# --------------------------------------------------------------------------- 2. tf.cond


def _build_tf1_cond(pred_kind: str) -> Built:
    """Small digits CNN whose dropout and batch norms sit behind `is_training` (Switch/Merge)."""
    _seed_everything(SEED)
    x_train, _, x_test, y_test = digits()
    rng = np.random.RandomState(SEED + 200)
    tf.compat.v1.disable_control_flow_v2()  # Switch / Merge, not If / StatelessIf
    try:
        graph = tf.Graph()
        with graph.as_default():
            tf.compat.v1.set_random_seed(SEED)
            x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1], name="input")
            if pred_kind == "const":
                is_training = tf.constant(False, name="is_training")
            else:
                is_training = tf.compat.v1.placeholder_with_default(False, [], name="is_training")
            he = tf.compat.v1.variance_scaling_initializer

            with tf.compat.v1.variable_scope("conv1"):
                w1 = tf.compat.v1.get_variable(
                    "weights", [3, 3, 1, 16], tf.float32, he(2.0, seed=SEED + 1)
                )
                b1 = tf.compat.v1.get_variable(
                    "biases", initializer=rng.normal(0, 0.1, 16).astype(np.float32)
                )
                h = tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1)
            pre_bn1 = h
            # bn1: the tf.contrib.layers.batch_norm(fused=True) idiom -- a cond between the
            # training (batch statistics) and inference (moving statistics) fused batch norm.
            with tf.compat.v1.variable_scope("bn1"):
                gamma = tf.compat.v1.get_variable(
                    "gamma", initializer=rng.uniform(0.5, 1.5, 16).astype(np.float32)
                )
                beta = tf.compat.v1.get_variable(
                    "beta", initializer=rng.normal(0, 0.1, 16).astype(np.float32)
                )
                mm = tf.compat.v1.get_variable(
                    "moving_mean", initializer=np.zeros(16, np.float32), trainable=False
                )
                mv = tf.compat.v1.get_variable(
                    "moving_variance", initializer=np.ones(16, np.float32), trainable=False
                )

                def bn_train():
                    return tf.compat.v1.nn.fused_batch_norm(
                        h, gamma, beta, epsilon=1e-3, is_training=True
                    )[0]

                def bn_infer():
                    return tf.compat.v1.nn.fused_batch_norm(
                        h, gamma, beta, mean=mm, variance=mv, epsilon=1e-3, is_training=False
                    )[0]

                h = tf.cond(is_training, bn_train, bn_infer, name="cond")
            h = tf.nn.relu(h)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")  # 4x4x16
            with tf.compat.v1.variable_scope("conv2"):
                w2 = tf.compat.v1.get_variable(
                    "weights", [3, 3, 16, 32], tf.float32, he(2.0, seed=SEED + 2)
                )
                h = tf.nn.conv2d(h, w2, 1, "SAME")
            # bn2: the Keras-layer idiom; with a tf.constant predicate the layer's smart_cond
            # resolves statically (inference FusedBatchNormV3), with placeholder_with_default it
            # builds its own Switch / Merge.
            bn2 = tf.compat.v1.layers.BatchNormalization(
                name="bn2",
                gamma_initializer=tf.constant_initializer(rng.uniform(0.5, 1.5, 32)),
                beta_initializer=tf.constant_initializer(rng.normal(0, 0.1, 32)),
            )
            pre_bn2 = h
            h = bn2(h, training=is_training)
            h = tf.nn.relu(h)
            h = tf.reshape(h, [-1, 4 * 4 * 32], name="flatten")
            h = tf.cond(
                is_training,
                lambda: tf.nn.dropout(h, rate=0.5, seed=SEED),
                lambda: h,
                name="dropout",
            )
            with tf.compat.v1.variable_scope("fc"):
                w3 = tf.compat.v1.get_variable(
                    "weights",
                    [512, 10],
                    tf.float32,
                    tf.compat.v1.glorot_uniform_initializer(seed=SEED + 3),
                )
                b3 = tf.compat.v1.get_variable("biases", initializer=np.zeros(10, np.float32))
                logits = tf.add(tf.matmul(h, w3), b3, name="logits")
            tf.nn.softmax(logits, name="probs")

            with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                v = sess.run(pre_bn1, {x: x_train})
                mm.load(v.mean(axis=(0, 1, 2)), sess)
                mv.load(v.var(axis=(0, 1, 2)), sess)
                v = sess.run(pre_bn2, {x: x_train})
                bn2.moving_mean.load(v.mean(axis=(0, 1, 2)), sess)
                bn2.moving_variance.load(v.var(axis=(0, 1, 2)), sess)
                gd = tf.compat.v1.graph_util.convert_variables_to_constants(
                    sess, graph.as_graph_def(), ["probs"]
                )
    finally:
        tf.compat.v1.enable_control_flow_v2()
    expect = ("Switch", "Merge", "FusedBatchNormV3")
    if pred_kind != "const":
        expect += ("PlaceholderWithDefault",)
    pred_desc = (
        "is_training = tf.constant(False)"
        if pred_kind == "const"
        else "is_training = tf.compat.v1.placeholder_with_default(False, [])"
    )
    return Built(
        gd,
        {"input": ([None, 8, 8, 1], "float32")},
        ["probs"],
        {"input": x_test[:N_GOLDEN]},
        expect_ops=expect,
        notes={
            "built_with": "tf.compat.v1 graph mode, control flow v1 (Switch/Merge), frozen with "
            "tf.compat.v1.graph_util.convert_variables_to_constants",
            "predicate": pred_desc,
            "input_data": "sklearn digits test images (/16), random weights, BN statistics "
            "from the "
            "train split",
        },
        extra={"labels": y_test[:N_GOLDEN].astype(np.int64)},
    )


def build_tf1_cond_is_training() -> Built:
    return _build_tf1_cond("const")


def build_tf1_cond_placeholder_default() -> Built:
    return _build_tf1_cond("placeholder_with_default")


# --------------------------------------------------------------------------- 3. text


VOCAB, SEQ, N_CLASSES = 200, 16, 4


def _synthetic_text(n: int, rng):
    """Token ids 1..199; class c's sequences draw 40 % of their tokens from topic range c."""
    y = rng.randint(0, N_CLASSES, n)
    x = rng.randint(1, VOCAB, (n, SEQ))
    topic = rng.rand(n, SEQ) < 0.4
    lo = 1 + y[:, None] * 40
    x = np.where(topic, lo + rng.randint(0, 40, (n, SEQ)), x)
    return x.astype(np.int32), y.astype(np.int64)


def build_text_classifier() -> Built:
    _seed_everything(SEED)
    rng = np.random.RandomState(SEED + 300)
    x_train, y_train = _synthetic_text(2000, rng)
    x_test, y_test = _synthetic_text(N_GOLDEN, rng)
    layers = keras.layers
    inp = keras.Input(shape=(SEQ,), dtype="int32", name="input")
    h = layers.Embedding(VOCAB, 16, name="embedding")(inp)
    h = layers.GlobalAveragePooling1D(name="mean_over_time")(h)
    h = layers.Dense(16, activation="relu", name="dense")(h)
    h = layers.Dense(N_CLASSES, name="logits")(h)
    out = layers.Softmax(name="probs")(h)
    model = keras.Model(inp, out, name="text_classifier")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, batch_size=64, epochs=4, shuffle=True, verbose=0)
    _, acc = model.evaluate(x_train, y_train, verbose=0)
    print(f"  trained 4 epochs on 2000 synthetic sequences: train acc {acc:.3f}")
    gd = freeze_keras(model, {"input": ([None, SEQ], tf.int32)})
    # The frozen table Const is named after the variable handle's graph-global uid
    # (".../embedding_lookup/<uid>"), which depends on what ran before in the process; give it
    # a stable name so rebuilding with or without --only writes identical files.
    (gather,) = [n for n in gd.node if n.op == "GatherV2"]
    table = gather.input[0].split(":")[0]
    _rename_node(gd, table, "text_classifier/embedding/embeddings")
    return Built(
        gd,
        {"input": ([None, SEQ], "int32")},
        ["probs"],
        {"input": x_test},
        expect_ops=("GatherV2", "Mean", "MatMul"),
        notes={
            "built_with": "tf_keras functional model, frozen with "
            "convert_variables_to_constants_v2 (the Embedding's ResourceGather becomes "
            "GatherV2 on the frozen table)",
            "input_data": "synthetic int32 token ids in [1, 200), briefly trained (4 epochs)",
        },
        extra={"labels": y_test},
    )


# --------------------------------------------------------------------------- 4. dynamic shape


def build_keras_dynamic_shape() -> Built:
    _seed_everything(SEED)
    x_train, y_train, x_test, y_test = digits()
    layers = keras.layers
    inp = keras.Input(shape=(8, 8, 1), name="input")
    h = layers.Conv2D(16, 3, padding="same", activation="relu", name="conv")(inp)  # 8x8x16
    # tf.reshape(x, [tf.shape(x)[0], -1]): Shape -> StridedSlice -> Pack -> Reshape
    h = layers.Lambda(lambda t: tf.reshape(t, [tf.shape(t)[0], -1]), name="dyn_flatten")(h)
    # layers.Reshape: tf.reshape(x, (tf.shape(x)[0],) + target_shape)
    h = layers.Reshape((16, 64), name="reshape")(h)
    h = layers.Flatten(name="flatten")(h)
    h = layers.Dense(10, name="logits")(h)
    out = layers.Softmax(name="probs")(h)
    model = keras.Model(inp, out, name="keras_dynamic_shape")
    model.compile(
        optimizer=keras.optimizers.Adam(5e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, batch_size=32, epochs=10, shuffle=True, verbose=0)
    acc = float(np.mean(np.argmax(model.predict(x_test, verbose=0), 1) == y_test))
    print(f"  trained 10 epochs: test acc {acc:.3f}")
    gd = freeze_keras(model, {"input": ([None, 8, 8, 1], tf.float32)})
    return Built(
        gd,
        {"input": ([None, 8, 8, 1], "float32")},
        ["probs"],
        {"input": x_test[:N_GOLDEN]},
        expect_ops=("Shape", "StridedSlice", "Pack", "Reshape"),
        notes={
            "built_with": "tf_keras functional model, frozen with "
            "convert_variables_to_constants_v2",
            "input_data": "sklearn digits test images (/16), briefly trained (10 epochs)",
            "tf_float_test_accuracy": round(acc, 4),
        },
        extra={"labels": y_test[:N_GOLDEN]},
    )


# --------------------------------------------------------------------------- 5. EfficientNet-like


def build_efficientnet_like() -> Built:
    _seed_everything(SEED)
    layers = keras.layers
    swish = keras.activations.swish  # tf.nn.silu: custom gradient -> IdentityN when frozen

    def conv_bn(h, filters, k, stride, name, act=True):
        h = layers.Conv2D(filters, k, stride, padding="same", use_bias=False, name=f"{name}_conv")(
            h
        )
        h = layers.BatchNormalization(name=f"{name}_bn")(h)
        return layers.Activation(swish, name=f"{name}_swish")(h) if act else h

    inp = keras.Input(shape=(32, 32, 3), name="input")
    h = conv_bn(inp, 16, 3, 2, "stem")  # 16x16x16
    # MBConv: expand 1x1 -> depthwise 3x3 -> squeeze-excite -> project 1x1 -> dropout -> add
    shortcut = h
    e = conv_bn(h, 64, 1, 1, "expand")
    e = layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw_conv")(e)
    e = layers.BatchNormalization(name="dw_bn")(e)
    e = layers.Activation(swish, name="dw_swish")(e)
    se = layers.GlobalAveragePooling2D(keepdims=True, name="se_squeeze")(e)
    se = layers.Conv2D(4, 1, activation=swish, name="se_reduce")(se)
    se = layers.Conv2D(64, 1, activation="sigmoid", name="se_expand")(se)
    e = layers.Multiply(name="se_excite")([e, se])
    e = conv_bn(e, 16, 1, 1, "project", act=False)
    e = layers.Dropout(0.2, noise_shape=(None, 1, 1, 1), name="drop_connect")(e)
    h = layers.Add(name="residual")([shortcut, e])
    h = layers.Lambda(lambda t: tf.stop_gradient(t), name="stop_gradient")(h)
    h = layers.Lambda(lambda t: tf.nn.swish(t), name="raw_swish")(h)
    h = conv_bn(h, 64, 1, 1, "head")
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    h = layers.Dropout(0.2, name="top_dropout")(h)
    h = layers.Dense(10, name="logits")(h)
    out = layers.Softmax(name="probs")(h)
    model = keras.Model(inp, out, name="efficientnet_like")
    n_bn = calibrate_batchnorm(model, small_images(N_CALIB, "calib", SEED + 501))
    print(f"  data-dependent BN statistics for {n_bn} BatchNormalization layers")
    gd = freeze_keras(model, {"input": ([None, 32, 32, 3], tf.float32)})
    return Built(
        gd,
        {"input": ([None, 32, 32, 3], "float32")},
        ["probs"],
        {"input": small_images(N_GOLDEN, "golden", SEED + 502)},
        expect_ops=(
            "IdentityN",
            "StopGradient",
            "Sigmoid",
            "Mul",
            "Mean",
            "FusedBatchNormV3",
            "DepthwiseConv2dNative",
            "AddV2",
        ),
        notes={
            "built_with": "tf_keras functional model, random weights, data-dependent BN "
            "statistics, "
            "frozen with convert_variables_to_constants_v2",
            "input_data": "32x32 crops of sklearn's sample photos, x/127.5 - 1",
        },
    )


# --------------------------------------------------------------------------- 6. op zoo


def _const(rng, shape, scale=0.3):
    return tf.constant(rng.normal(0.0, scale, shape).astype(np.float32))


class _Outputs:
    """Named graph outputs: an Identity per output at the top-level name scope.

    (TF uniquifies node names case-insensitively, so the computations live under the "ops/"
    name scope and cannot steal an output's name.)"""

    def __init__(self, graph):
        self.graph, self.names = graph, []

    def __call__(self, t, name):
        with self.graph.name_scope(None):
            node = tf.identity(t, name=name)
        assert node.op.name == name, f"output {name} was renamed {node.op.name}"
        self.names.append(name)
        return node


def _freeze_session_graph(graph, sess, outputs):
    return tf.compat.v1.graph_util.convert_variables_to_constants(
        sess, graph.as_graph_def(), outputs
    )


def build_op_zoo_math() -> Built:
    """Elementwise / activation / reduction / matmul ops, one named output each."""
    rng = np.random.RandomState(SEED + 600)
    graph = tf.Graph()
    out = _Outputs(graph)
    outs = out.names

    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        x = tf.compat.v1.placeholder(tf.float32, [None, 4, 16], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [None, 4, 16], name="y")
        with tf.compat.v1.name_scope("ops"):  # outputs keep the plain names
            pos = tf.abs(x) + 0.25  # strictly positive
            # binary
            out(x / (tf.abs(y) + 0.5), "realdiv")
            out(tf.maximum(x, y), "maximum")
            out(tf.minimum(x, 0.5), "minimum")
            out(tf.math.squared_difference(x, y), "squared_difference")
            out(tf.pow(pos, 1.5), "pow")
            out(x - y * 2.0, "sub_mul")
            # activations
            out(tf.nn.leaky_relu(x, alpha=0.1), "leaky_relu")
            out(tf.nn.elu(x), "elu")
            out(tf.sigmoid(x), "sigmoid")
            out(tf.tanh(x), "tanh")
            out(tf.nn.softplus(x), "softplus")
            out(tf.nn.relu(x) + tf.nn.relu6(y * 4.0), "relu_relu6")  # (no relu(y): PReLU owns it)
            # unary math
            out(tf.exp(x * 0.5), "exp")
            out(tf.math.log(pos), "log")
            out(tf.sqrt(pos), "sqrt")
            out(tf.math.rsqrt(pos), "rsqrt")
            out(tf.square(x), "square")
            out(tf.negative(tf.abs(y)), "abs_neg")
            out(tf.nn.log_softmax(x, axis=-1), "log_softmax")
            out(tf.nn.softmax(y, axis=-1), "softmax")
            # reductions
            out(tf.reduce_sum(x, axis=-1), "sum")
            out(tf.reduce_max(x, axis=1, keepdims=True), "max")
            out(tf.reduce_min(y, axis=[1, 2]), "min")
            out(tf.reduce_prod(pos[:, :, :4], axis=-1), "prod")
            out(tf.reduce_mean(y, axis=1), "mean")
            # matmuls: BatchMatMulV2 of two activations, MatMul + bias (dense)
            out(tf.matmul(x, y, transpose_b=True), "batch_matmul")  # [B,4,4]
            out(tf.matmul(tf.transpose(x, [0, 2, 1]), y), "batch_matmul_t")  # [B,16,16]
            dense = tf.nn.bias_add(
                tf.matmul(tf.reshape(x, [-1, 64]), _const(rng, [64, 8])), _const(rng, [8])
            )
            out(tf.nn.relu(dense), "dense_relu")
            # patterns
            out(tf.math.l2_normalize(x, axis=-1), "l2_normalize")  # x * rsqrt(max(sum(x^2), eps))
            out(x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), "hard_swish")  # MobileNetV3 style
            out(tf.maximum(x, 0.2 * x), "leaky_relu_max")
            prelu = keras.layers.PReLU(
                alpha_initializer=tf.constant_initializer(rng.uniform(0.05, 0.5, 16)),
                shared_axes=[1],
                name="prelu",
            )
            out(prelu(y), "prelu")
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            gd = _freeze_session_graph(graph, sess, outs)
    grng = np.random.RandomState(SEED + 601)
    golden = {
        "x": grng.normal(0, 1.5, (N_GOLDEN, 4, 16)).astype(np.float32),
        "y": grng.normal(0, 1.5, (N_GOLDEN, 4, 16)).astype(np.float32),
    }
    return Built(
        gd,
        {"x": ([None, 4, 16], "float32"), "y": ([None, 4, 16], "float32")},
        outs,
        golden,
        expect_ops=(
            "RealDiv",
            "Maximum",
            "Minimum",
            "SquaredDifference",
            "Pow",
            "LeakyRelu",
            "Elu",
            "Sigmoid",
            "Tanh",
            "Softplus",
            "Exp",
            "Log",
            "Sqrt",
            "Rsqrt",
            "Square",
            "Abs",
            "Neg",
            "LogSoftmax",
            "Sum",
            "Max",
            "Min",
            "Prod",
            "BatchMatMulV2",
            "MatMul",
        ),
        notes={
            "built_with": "tf.compat.v1 graph mode (constants; the PReLU layer's alpha is a frozen "
            "variable), frozen with tf.compat.v1.graph_util.convert_variables_to_constants",
            "input_data": "deterministic random normal (std 1.5)",
        },
    )


def build_op_zoo_array() -> Built:
    """Shape / layout / indexing ops, one named output each."""
    rng = np.random.RandomState(SEED + 700)
    graph = tf.Graph()
    out = _Outputs(graph)
    outs = out.names

    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4, 6, 8], name="input")
        with tf.compat.v1.name_scope("ops"):  # outputs keep the plain names
            h = x * _const(rng, [8], 1.0) + _const(rng, [8], 0.1)
            out(tf.squeeze(h[:, :1], axis=1), "squeeze")  # StridedSlice + Squeeze
            out(tf.expand_dims(tf.reduce_mean(h, axis=-1), axis=-1), "expand_dims")
            out(tf.transpose(h, [0, 3, 1, 2]), "transpose")
            a, b, c, d = tf.unstack(h, axis=1)  # Unpack
            out(tf.stack([d, b], axis=1), "pack")  # Pack
            out(tf.concat([a, c * 2.0], axis=-1), "concat")  # ConcatV2
            s0, s1 = tf.split(h, 2, axis=-1)  # Split
            out(s0 - s1, "split")
            v0, v1, v2 = tf.split(h, [2, 5, 1], axis=-1)  # SplitV
            out(tf.concat([v2, v0, v1 * v1], axis=-1), "splitv")
            out(tf.slice(h, [0, 1, 2, 3], [-1, 2, 3, 4]), "slice")  # Slice
            # StridedSlice: begin/end masks + stride, and shrink_axis
            out(h[:, 1:, ::2, :5], "strided_slice_masks")
            out(h[:, -1, :, 2], "strided_slice_shrink")
            out(tf.tile(h[:, :2, :2, :], [1, 2, 3, 1]), "tile")  # Tile
            out(tf.pad(h, [[0, 0], [1, 2], [0, 1], [0, 0]], constant_values=1.5), "padv2")  # PadV2
            out(tf.pad(h, [[0, 0], [1, 0], [2, 1], [0, 0]]), "pad")  # Pad
            out(tf.reshape(h, [-1, 24, 8]), "reshape")
            out(tf.gather(h, [3, 0, 2], axis=2), "gather")  # GatherV2 with constant indices
            am = tf.argmax(h, axis=-1, output_type=tf.int32)  # ArgMax
            out(am, "argmax")
            out(tf.cast(am, tf.float32) * 0.5 + tf.cast(h[..., 0] > 0.0, tf.float32), "cast")
            # Fill / Range with constant inputs (TF and edgelite fold them)
            fill = tf.fill([6, 8], 0.25)  # Fill
            rng_t = tf.range(8, dtype=tf.float32)  # Range
            out(h * fill + rng_t * 0.1, "fill_range")
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            gd = _freeze_session_graph(graph, sess, outs)
    golden = {
        "input": np.random.RandomState(SEED + 701)
        .normal(0, 1, (N_GOLDEN, 4, 6, 8))
        .astype(np.float32)
    }
    return Built(
        gd,
        {"input": ([None, 4, 6, 8], "float32")},
        outs,
        golden,
        expect_ops=(
            "Squeeze",
            "ExpandDims",
            "Transpose",
            "Pack",
            "Unpack",
            "ConcatV2",
            "Split",
            "SplitV",
            "Slice",
            "StridedSlice",
            "Tile",
            "PadV2",
            "Pad",
            "GatherV2",
            "ArgMax",
            "Cast",
            "Fill",
            "Range",
            "Reshape",
        ),
        notes={
            "built_with": "tf.compat.v1 graph mode with constant weights",
            "input_data": "deterministic random normal (std 1)",
        },
    )


def build_op_zoo_image() -> Built:
    """Image ops: transpose conv, resizes, depth/space, mirror pad, pools."""
    rng = np.random.RandomState(SEED + 800)
    graph = tf.Graph()
    out = _Outputs(graph)
    outs = out.names

    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 4], name="input")
        with tf.compat.v1.name_scope("ops"):  # outputs keep the plain names
            # Conv2DBackpropInput with a computed output shape (Keras Conv2DTranspose style):
            # Shape -> StridedSlice -> Pack feed input_sizes.
            batch = tf.shape(x)[0]
            w_t = _const(rng, [3, 3, 6, 4], 0.4)  # [kh, kw, out_channels, in_channels]
            up = tf.nn.conv2d_transpose(x, w_t, tf.stack([batch, 16, 16, 6]), 2, "SAME")
            out(tf.nn.relu(tf.nn.bias_add(up, _const(rng, [6], 0.1))), "conv2d_transpose")
            out(tf.image.resize(x, (13, 11), method="bilinear"), "resize_bilinear_half_pixel")
            out(
                tf.compat.v1.image.resize_bilinear(
                    x, (16, 12), align_corners=False, half_pixel_centers=False
                ),
                "resize_bilinear_legacy",
            )
            out(
                tf.compat.v1.image.resize_bilinear(x, (15, 15), align_corners=True),
                "resize_bilinear_align_corners",
            )
            out(tf.image.resize(x, (16, 16), method="nearest"), "resize_nearest_half_pixel")
            out(
                tf.compat.v1.image.resize_nearest_neighbor(
                    x, (12, 20), align_corners=False, half_pixel_centers=False
                ),
                "resize_nearest_legacy",
            )
            out(tf.nn.depth_to_space(x, 2), "depth_to_space")  # 16x16x1
            out(tf.nn.space_to_depth(x, 2), "space_to_depth")  # 4x4x16
            out(tf.pad(x, [[0, 0], [2, 1], [1, 3], [0, 0]], mode="REFLECT"), "mirror_pad_reflect")
            out(
                tf.pad(x, [[0, 0], [2, 1], [1, 3], [0, 0]], mode="SYMMETRIC"),
                "mirror_pad_symmetric",
            )
            # Pad + VALID conv where the Pad is NOT expressible as SAME (asymmetric, larger) and one
            # where it is ((1,1) for a 3x3 stride-1 conv == SAME).
            w = _const(rng, [3, 3, 4, 8], 0.3)
            out(
                tf.nn.conv2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), w, 1, "VALID"),
                "pad_conv_same",
            )
            out(
                tf.nn.conv2d(tf.pad(x, [[0, 0], [2, 0], [0, 2], [0, 0]]), w, 1, "VALID"),
                "pad_conv_asym",
            )
            out(tf.nn.max_pool2d(x, 3, 2, "SAME"), "max_pool")
            out(tf.nn.avg_pool2d(x, 2, 2, "VALID"), "avg_pool")
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            gd = _freeze_session_graph(graph, sess, outs)
    img = small_images(N_GOLDEN, "golden", SEED + 801)[:, ::4, ::4, :]  # 8x8x3
    golden = {"input": np.ascontiguousarray(np.concatenate([img, img[..., :1]], axis=-1))}
    return Built(
        gd,
        {"input": ([None, 8, 8, 4], "float32")},
        outs,
        golden,
        expect_ops=(
            "Conv2DBackpropInput",
            "ResizeBilinear",
            "ResizeNearestNeighbor",
            "DepthToSpace",
            "SpaceToDepth",
            "MirrorPad",
            "Pad",
            "Shape",
            "Pack",
            "MaxPool",
            "AvgPool",
        ),
        notes={
            "built_with": "tf.compat.v1 graph mode with constant weights",
            "input_data": "photo crops (32x32, x/127.5 - 1) subsampled to 8x8; channels RGBR",
        },
    )


# --------------------------------------------------------------------------- large: applications


APPS = {
    # name: (constructor, input size, preprocess module or None if preprocessing is in the model)
    "mobilenet": ("MobileNet", 224, "mobilenet"),
    "mobilenet_v2": ("MobileNetV2", 224, "mobilenet_v2"),
    "mobilenet_v3_small": ("MobileNetV3Small", 224, None),
    "efficientnet_b0": ("EfficientNetB0", 224, None),
    "resnet50": ("ResNet50", 224, "resnet50"),
    "inception_v3": ("InceptionV3", 299, "inception_v3"),
    "densenet121": ("DenseNet121", 224, "densenet"),
}


def build_app(name: str) -> Built:
    ctor, size, prep = APPS[name]
    _seed_everything(SEED)
    keras.backend.clear_session()
    _seed_everything(SEED)
    model = getattr(keras.applications, ctor)(
        weights=None, input_shape=(size, size, 3), classes=1000
    )
    seed = SEED + 1000 + list(APPS).index(name) * 10
    calib = photo_crops(N_CALIB_LARGE, size, "calib", seed)
    golden = photo_crops(N_GOLDEN_LARGE, size, "golden", seed + 1)
    if prep is not None:
        pre = getattr(keras.applications, prep).preprocess_input
        calib = pre(calib.copy()).astype(np.float32)
        golden = pre(golden.copy()).astype(np.float32)
        prep_desc = f"tf_keras.applications.{prep}.preprocess_input applied to the [0, 255] crops"
    else:
        prep_desc = "raw [0, 255] RGB (the model's own Rescaling/Normalization layers preprocess)"
    t0 = time.time()
    n_bn = calibrate_batchnorm(model, calib)
    print(
        f"  {ctor}: {model.count_params()} params; data-dependent BN statistics for {n_bn} "
        f"BatchNormalization layers ({time.time() - t0:.1f} s)"
    )
    gd = freeze_keras(model, {"input": ([None, size, size, 3], tf.float32)})
    return Built(
        gd,
        {"input": ([None, size, size, 3], "float32")},
        ["probs"],
        {"input": golden},
        expect_ops=("Conv2D", "Identity"),
        notes={
            "built_with": f"tf_keras.applications.{ctor}(weights=None, "
            f"input_shape=({size}, {size}, 3)), "
            f"random weights, data-dependent BN statistics ({N_CALIB_LARGE} calibration crops, one "
            "training-mode pass with momentum 0), frozen with convert_variables_to_constants_v2",
            "input_data": f"{size}x{size} crops of sklearn's sample photos; {prep_desc}",
        },
    )


# --------------------------------------------------------------------------- registry


SPECS = [
    Spec("tf1_mobilenet_unfolded_bn", build_tf1_mobilenet_unfolded_bn),
    Spec("tf1_cond_is_training", build_tf1_cond_is_training),
    Spec("tf1_cond_placeholder_default", build_tf1_cond_placeholder_default),
    Spec("text_classifier", build_text_classifier),
    Spec("keras_dynamic_shape", build_keras_dynamic_shape),
    Spec("efficientnet_like", build_efficientnet_like),
    Spec("op_zoo_math", build_op_zoo_math),
    Spec("op_zoo_array", build_op_zoo_array),
    Spec("op_zoo_image", build_op_zoo_image),
] + [Spec(n, (lambda n=n: build_app(n)), large=True) for n in APPS]


# --------------------------------------------------------------------------- finish


def finish(spec: Spec, built: Built) -> dict:
    name = spec.name
    gd = built.graph_def
    out_dir = CACHE if spec.large else HERE
    ops = _op_types(gd)
    print(f"  frozen GraphDef: {len(gd.node)} nodes, op types: {ops}")
    missing = [o for o in built.expect_ops if o not in ops]
    assert not missing, f"{name}: expected op types missing from the frozen graph: {missing}"
    leftovers = [o for o in VARIABLE_OPS if o in ops]
    assert not leftovers, f"{name}: variable ops left in the frozen graph: {leftovers}"

    pb_path = out_dir / f"{name}.pb"
    _atomic_write(pb_path, gd.SerializeToString(deterministic=True))

    # Golden: TensorFlow running the frozen graph on the whole held-out batch.
    feeds = {k: np.ascontiguousarray(v.astype(built.inputs[k][1])) for k, v in built.golden.items()}
    assert list(feeds) == list(built.inputs)
    ref = run_frozen(gd, feeds, built.outputs)
    spreads = {}
    for o, r in ref.items():
        if np.issubdtype(r.dtype, np.floating):
            assert np.all(np.isfinite(r)), f"{name}: non-finite golden output {o}"
            spreads[o] = spread(r)
            assert (
                spreads[o] > MIN_SPREAD
            ), f"{name}: output {o} is degenerate (spread {spreads[o]:.3g})"
        else:
            spreads[o] = spread(r.astype(np.float64))
            assert (
                len(np.unique(r.reshape(len(r), -1), axis=0)) > 1
            ), f"{name}: output {o} is constant"
    arrays = {}
    if len(feeds) == 1:
        arrays["input"] = next(iter(feeds.values()))
    else:
        arrays.update({f"inputs/{k}": v for k, v in feeds.items()})
    if len(ref) == 1:
        arrays["output"] = next(iter(ref.values()))
    else:
        arrays.update({f"outputs/{k}": v for k, v in ref.items()})
    arrays["input_names"] = np.array(list(feeds))
    arrays["output_names"] = np.array(list(built.outputs))
    arrays.update(built.extra)
    _write_npz(out_dir / f"{name}.golden.npz", **arrays)

    info = {
        "model": name,
        "converter": f"tensorflow {tf.__version__} "
        "tf.compat.v1.lite.TFLiteConverter.from_frozen_graph",
        "input_shapes": {k: [1] + list(v[0][1:]) for k, v in built.inputs.items()},
        "inputs": list(built.inputs),
        "outputs": list(built.outputs),
        "input_dtypes": {k: v[1] for k, v in built.inputs.items()},
    }
    result = {"name": name, "graphdef_ops": ops, "nodes": len(gd.node)}
    try:
        tfl = tf_tflite(pb_path, built.inputs, built.outputs)
    except Exception as exc:  # record, do not drop the model
        msg = f"{type(exc).__name__}: {exc}".strip()
        print(f"  TF converter FAILED: {msg[:2000]}")
        info.update(
            {"ops": None, "op_counts": None, "n_ops": None, "tf_converter_error": msg[:4000]}
        )
        result["tf_error"] = msg
    else:
        _atomic_write(out_dir / f"{name}.tf.tflite", tfl)
        lite, lite_ops, io = litert_run(tfl, feeds, built.outputs)
        errs = {}
        for o in built.outputs:
            r = ref[o]
            d = float(np.max(np.abs(lite[o].astype(np.float64) - r.astype(np.float64))))
            scale = float(np.max(np.abs(r)))
            errs[o] = {
                "max_abs_diff": _fmt(d),
                "max_abs_ref": _fmt(scale),
                "rel": _fmt(d / max(scale, 1e-30)),
            }
            assert d <= REL_TOL * max(
                scale, 1e-30
            ), f"{name}: TF .tflite output {o} differs: {errs[o]}"
        worst = max(e["rel"] for e in errs.values())
        counts = dict(sorted(bm.Counter(lite_ops).items()))
        print(f"  TF .tflite ({len(tfl)} bytes): {len(lite_ops)} ops {counts}")
        print(f"  LiteRT(TF .tflite) vs golden: worst max|diff|/max|ref| {worst:.3g}")
        info.update({"ops": lite_ops, "op_counts": counts, "n_ops": len(lite_ops), "io": io})
        info["tflite_vs_golden"] = errs if len(errs) > 1 else next(iter(errs.values()))
        result.update(
            {
                "lite_ops": counts,
                "n_lite_ops": len(lite_ops),
                "rel_err": worst,
                "tflite_size": len(tfl),
            }
        )
    info["graphdef_op_counts"] = ops
    info["graphdef_nodes"] = len(gd.node)
    info["golden_batch"] = len(next(iter(feeds.values())))
    info["golden_output_spread"] = {o: _fmt(s) for o, s in spreads.items()}
    info.update(built.notes)
    if spec.large:
        info["cache_files"] = [
            f"models/cache/{name}{ext}" for ext in (".pb", ".golden.npz", ".tf.tflite")
        ]
    _atomic_write(HERE / f"{name}.tf_ops.json", (json.dumps(info, indent=2) + "\n").encode())
    result["spread"] = min(spreads.values())
    result["pb_size"] = pb_path.stat().st_size
    return result


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="build only this model (repeatable; comma-separated lists allowed)",
    )
    ap.add_argument(
        "--skip-large", action="store_true", help="skip the tf-keras applications (models/cache/)"
    )
    ap.add_argument("--list", action="store_true", help="list the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SPECS:
            print(f"{s.name}{'  (large, models/cache/)' if s.large else ''}")
        return 0
    only = {n for item in args.only for n in item.split(",") if n}
    unknown = only - {s.name for s in SPECS}
    if unknown:
        ap.error(f"unknown model(s): {sorted(unknown)}; see --list")
    todo = [s for s in SPECS if (not only or s.name in only) and not (args.skip_large and s.large)]

    results, failures = [], []
    t_all = time.time()
    for spec in todo:
        t0 = time.time()
        print(f"\n[{spec.name}]{' (large)' if spec.large else ''}")
        built = spec.build()
        res = finish(spec, built)
        res["seconds"] = time.time() - t0
        print(f"  done in {res['seconds']:.1f} s")
        results.append(res)
        if "tf_error" in res:
            failures.append(spec.name)

    print("\nsummary")
    for r in results:
        tfl = (
            f"TF tflite {r['n_lite_ops']} ops, rel err {r['rel_err']:.2g}"
            if "n_lite_ops" in r
            else "TF converter FAILED"
        )
        print(
            f"  {r['name']:30s} {r['nodes']:5d} nodes, {tfl}, min spread {r['spread']:.3g}, "
            f"{r['seconds']:.0f} s"
        )
    print("\nwrote:")
    for p in bm._written:
        print(f"  {p.relative_to(HERE.parent)}  {p.stat().st_size} bytes")
    print(f"total {time.time() - t_all:.0f} s")
    if failures:
        print(f"TF's converter failed on: {failures} (recorded in their tf_ops.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
