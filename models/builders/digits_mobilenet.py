"""mobilenet_v2_digits: tf_keras' MobileNetV2 (alpha 0.35, the unmodified application model),
trained from scratch on sklearn's 8x8 digits, which an in-graph ResizeBilinear scales to 64x64.

A trained MobileNetV2 small enough to commit (0.4 M parameters): the model on which the
quantization-accuracy table (README, bench/quant_methods.py, tests/bench/
test_quant_methods.py) measures what equalization and bias correction do for per-tensor int8
on the network they were invented for.  Same data split and input as the digit CNNs, so it
shares digits_calib.npy / digits_test.npz.
"""

from __future__ import annotations

from .common import (
    INPUT_NAME,
    OUTPUT_NAME,
    SEED,
    calibrate_batchnorm,
    freeze_keras,
    keras,
    np,
    seed_everything,
)

NAME = "mobilenet_v2_digits"
SIZE = 64  # the MobileNetV2 input resolution: 64 -> 32, 16, 8, 4, 2
ALPHA = 0.35


def build_mobilenet_v2_digits(x_train, y_train):
    seed_everything(SEED)
    inp = keras.Input(shape=(8, 8, 1), name=INPUT_NAME)
    h = keras.layers.Resizing(SIZE, SIZE, interpolation="bilinear", name="upscale")(inp)
    body = keras.applications.MobileNetV2(
        input_shape=(SIZE, SIZE, 1), alpha=ALPHA, weights=None, classes=10,
        classifier_activation="softmax",
    )
    model = keras.Model(inp, body(h), name=NAME)

    epochs, batch = 30, 32
    steps = epochs * int(np.ceil(len(x_train) / batch))
    lr = keras.optimizers.schedules.CosineDecay(3e-3, steps)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=lr),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    rng = np.random.default_rng(SEED + 21)
    for _ in range(epochs):  # augmentation: shifts of up to one pixel
        dy, dx = rng.integers(-1, 2, size=2)
        xs = np.roll(x_train, (int(dy), int(dx)), axis=(1, 2))
        model.fit(xs, y_train, batch_size=batch, epochs=1, shuffle=True, verbose=0)
    # Keras' BN momentum (0.999) leaves the moving statistics far behind ~1300 steps of
    # training: replace them by the statistics of the training set at the final weights.
    calibrate_batchnorm(model, x_train)
    loss, acc = model.evaluate(x_train, y_train, verbose=0)
    print(f"  {NAME} trained: train loss {loss:.4f}, train acc {acc:.4f}")
    graph_def = freeze_keras(model, {INPUT_NAME: ([None, 8, 8, 1], "float32")}, OUTPUT_NAME)
    return graph_def, model


def main() -> int:
    from .common import load_data, op_types, print_written
    from .digits import finish_model

    x_train, y_train, x_test, y_test = load_data()
    print(f"\n[{NAME}] training (tf_keras MobileNetV2, alpha {ALPHA}, {SIZE}x{SIZE})")
    graph_def, _ = build_mobilenet_v2_digits(x_train, y_train)
    ops = op_types(graph_def)
    assert ops.get("FusedBatchNormV3", 0) == 52 and ops.get("DepthwiseConv2dNative") == 17, ops
    r = finish_model(NAME, graph_def, x_test, y_test, keep_tflite=False)  # 1.6 MB: not kept
    print(f"\n{NAME}: TF float test acc {r['acc']:.4f}, TF .tflite acc {r['lite_acc']:.4f}")
    print_written()
    return 0
