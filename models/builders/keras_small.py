"""Small tf-keras real-world models: text_classifier (embedding -> GatherV2),
keras_dynamic_shape (Shape / StridedSlice / Pack plumbing) and efficientnet_like (swish
IdentityN, squeeze-excite, BN, Dropout, StopGradient)."""

from __future__ import annotations

from .real_world import N_CALIB, N_GOLDEN, Built, digits, small_images  # first: TF_USE_LEGACY_KERAS
from .common import (
    SEED,
    calibrate_batchnorm,
    freeze_keras,
    keras,
    np,
    rename_node,
    seed_everything,
    tf,
)


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
    seed_everything(SEED)
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
    rename_node(gd, table, "text_classifier/embedding/embeddings")
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
    seed_everything(SEED)
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
    seed_everything(SEED)
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
