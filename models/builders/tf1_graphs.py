"""TF1 graph-mode real-world models: tf1_mobilenet_unfolded_bn (unfolded batch norm, tf.pad +
VALID), the two tf1_cond_* graphs (is_training behind tf.cond: Switch / Merge) and
tf1_dilated_conv1d (dilated Conv1D written as SpaceToBatchND / BatchToSpaceND)."""

from __future__ import annotations

from .real_world import N_CALIB, N_GOLDEN, Built, digits, small_images  # first: TF_USE_LEGACY_KERAS
from .common import SEED, SESSION_CONFIG, np, seed_everything, tf


# --------------------------------------------------------------------------- 1. TF1 MobileNet


def build_tf1_mobilenet_unfolded_bn() -> Built:
    """TF1 graph: conv s2 + unfolded BN + relu6, 2 depthwise-separable blocks, GAP, dense."""
    seed_everything(SEED)
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
    seed_everything(SEED)
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


# --------------------------------------------------------------------------- 3. dilated Conv1D


def build_tf1_dilated_conv1d() -> Built:
    """Two dilated Conv1D layers as tf.nn.convolution writes them on CPU: SpaceToBatchND ->
    ExpandDims -> Conv2D (VALID) -> Squeeze -> BatchToSpaceND. ``same``: SAME, dilation 2,
    + BiasAdd, on a width (25) that needs the extra end padding; ``valid``: VALID,
    dilation 3, on its own input (TF's converter would share one input's reshape between
    two branches, which edgelite's duplicate merging does not do yet)."""
    rng = np.random.RandomState(SEED + 700)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 25, 4], name="x")
        seq = tf.compat.v1.placeholder(tf.float32, [None, 31, 3], name="seq")
        w1 = tf.constant(rng.normal(0.0, 0.4, (3, 4, 8)).astype(np.float32))
        b1 = tf.constant(rng.normal(0.0, 0.4, 8).astype(np.float32))
        w2 = tf.constant(rng.normal(0.0, 0.4, (2, 3, 5)).astype(np.float32))
        h = tf.nn.convolution(x, w1, padding="SAME", dilations=[2], name="conv_same")
        tf.nn.bias_add(h, b1, name="same")
        tf.identity(tf.nn.convolution(seq, w2, padding="VALID", dilations=[3],
                                      name="conv_valid"), name="valid")
        gd = graph.as_graph_def()
    grng = np.random.RandomState(SEED + 701)
    return Built(
        gd,
        {"x": ([None, 25, 4], "float32"), "seq": ([None, 31, 3], "float32")},
        ["same", "valid"],
        {"x": grng.normal(0, 1.0, (N_GOLDEN, 25, 4)).astype(np.float32),
         "seq": grng.normal(0, 1.0, (N_GOLDEN, 31, 3)).astype(np.float32)},
        expect_ops=("SpaceToBatchND", "ExpandDims", "Conv2D", "Squeeze", "BatchToSpaceND",
                    "BiasAdd"),
        notes={
            "built_with": "tf.compat.v1 graph mode, tf.nn.convolution with dilations (its "
            "space-to-batch path), constant weights",
            "input_data": "deterministic random normal",
        },
    )
