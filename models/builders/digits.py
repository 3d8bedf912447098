"""The two digit CNNs of models/build_models.py: tf1_cnn (tf.compat.v1 graph mode) and keras_cnn
(tf_keras), trained on sklearn's 8x8 digits, frozen, checked against TF's own .tflite."""

from __future__ import annotations

from collections import Counter

from .common import (
    INPUT_NAME,
    MODELS_DIR,
    OUTPUT_NAME,
    SEED,
    SESSION_CONFIG,
    atomic_write,
    convert_variables_to_constants_v2,
    keras,
    litert_run,
    load_data,
    np,
    op_types,
    print_written,
    rename_node,
    run_frozen_probs,
    seed_everything,
    tf,
    tf_tflite,
    write_graph,
    write_json,
    write_npz,
)

N_GOLDEN = 32  # golden inputs: the first 32 test images
INPUT_SHAPE = [1, 8, 8, 1]  # the converted .tflite files take one image
TFLITE_ATOL = 1e-5
DIGITS_INPUT = {INPUT_NAME: ([None, 8, 8, 1], "float32")}


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

        rng = np.random.RandomState(SEED)
        batch = 32
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
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
    seed_everything(SEED)
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
    rename_node(graph_def, out_tensor.op.name, OUTPUT_NAME)
    return graph_def, model


# --------------------------------------------------------------------------- TF .tflite


def digits_tflite(pb_path) -> bytes:
    """TF's float .tflite of a digit CNN, input fixed to [1, 8, 8, 1]."""
    return tf_tflite(pb_path, DIGITS_INPUT, [OUTPUT_NAME])


def digits_litert(model_bytes: bytes, x: np.ndarray):
    """LiteRT (builtin kernels, no delegate) at batch 1: probs, op names, input/output io."""
    res, ops, io = litert_run(model_bytes, {INPUT_NAME: x}, [OUTPUT_NAME])
    io = {"input": io["input"], "output": io["output"]}
    return res[OUTPUT_NAME].astype(np.float32), ops, io


# --------------------------------------------------------------------------- main


def finish_model(name, graph_def, x_test, y_test, extra_files=(), keep_tflite=True):
    """Write the .pb, goldens and TF's op list; TF's .tflite too unless keep_tflite is False
    (checked against the goldens either way)."""
    print(f"\n[{name}] frozen GraphDef: {len(graph_def.node)} nodes")
    ops = op_types(graph_def)
    print(f"  op types: {ops}")
    assert "Identity" in ops, f"{name}: expected Identity nodes in the frozen graph"
    assert not any(o in ops for o in ("VariableV2", "VarHandleOp", "ReadVariableOp")), ops

    pb_path = MODELS_DIR / f"{name}.pb"
    write_graph(graph_def, pb_path.name, as_text=False)
    for fname in extra_files:
        write_graph(graph_def, fname, as_text=True)

    # Float TF (frozen graph) accuracy + golden outputs.
    probs = run_frozen_probs(graph_def, x_test)
    acc = float(np.mean(np.argmax(probs, axis=1) == y_test))
    print(f"  TF float test accuracy (frozen graph): {acc:.4f} ({len(y_test)} images)")
    assert acc > 0.90, f"{name}: test accuracy {acc:.4f} <= 0.90"
    golden_out = probs[:N_GOLDEN]
    write_npz(
        MODELS_DIR / f"{name}.golden.npz",
        input=x_test[:N_GOLDEN].astype(np.float32),
        output=golden_out.astype(np.float32),
        labels=y_test[:N_GOLDEN].astype(np.int64),
    )

    # TensorFlow's own converter.
    tfl = digits_tflite(pb_path)
    if keep_tflite:
        atomic_write(MODELS_DIR / f"{name}.tf.tflite", tfl)
    lite_out, lite_ops, io = digits_litert(tfl, x_test[:N_GOLDEN])
    err = float(np.max(np.abs(lite_out - golden_out)))
    print(f"  LiteRT(TF .tflite) vs golden: max abs diff {err:.3g}")
    assert err <= TFLITE_ATOL, f"{name}: TF .tflite differs from golden by {err}"
    lite_full, _, _ = digits_litert(tfl, x_test)
    lite_acc = float(np.mean(np.argmax(lite_full, axis=1) == y_test))
    print(f"  LiteRT(TF .tflite) test accuracy: {lite_acc:.4f}")
    counts = dict(sorted(Counter(lite_ops).items()))
    print(f"  TF converter ops: {lite_ops}")
    info = {
        "model": name,
        "converter": f"tensorflow {tf.__version__} "
        "tf.compat.v1.lite.TFLiteConverter.from_frozen_graph",
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
    write_json(MODELS_DIR / f"{name}.tf_ops.json", info)
    return {"ops": ops, "lite_ops": counts, "acc": acc, "lite_acc": lite_acc, "err": err}


def main() -> int:
    x_train, y_train, x_test, y_test = load_data()
    print(f"digits: {len(x_train)} train / {len(x_test)} test images (8x8x1, /16.0)")
    write_npz(
        MODELS_DIR / "digits_test.npz", x=x_test.astype(np.float32), y=y_test.astype(np.int64)
    )

    results = {}
    print("\n[tf1_cnn] training (tf.compat.v1 graph mode)")
    seed_everything(SEED)
    gd = build_tf1_cnn(x_train, y_train)
    results["tf1_cnn"] = finish_model("tf1_cnn", gd, x_test, y_test, extra_files=["tf1_cnn.pbtxt"])

    print("\n[keras_cnn] training (tf_keras)")
    gd, _ = build_keras_cnn(x_train, y_train)
    assert "FusedBatchNormV3" in op_types(gd), "keras_cnn: expected FusedBatchNormV3 nodes"
    bn_training = [
        n.name for n in gd.node if n.op == "FusedBatchNormV3" and n.attr["is_training"].b
    ]
    assert not bn_training, f"FusedBatchNormV3 in training mode: {bn_training}"
    results["keras_cnn"] = finish_model("keras_cnn", gd, x_test, y_test)

    print("\nsummary")
    for name, r in results.items():
        print(
            f"  {name}: TF float test acc {r['acc']:.4f}, TF .tflite acc {r['lite_acc']:.4f}, "
            f"tflite-vs-golden {r['err']:.2g}"
        )
    print_written()
    return 0
