"""The "op zoo" graphs: op_zoo_math, op_zoo_array and op_zoo_image, one named output per op
(tf.compat.v1 graph mode, constant weights)."""

from __future__ import annotations

from .real_world import N_GOLDEN, Built, small_images  # first: sets TF_USE_LEGACY_KERAS
from .common import SEED, SESSION_CONFIG, keras, np, tf


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
