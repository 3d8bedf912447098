"""Small branching networks and TensorFlow's int8 files of them, for the op-order pass
(converter/passes/order_for_memory.py) measured in TFLite Micro (dev-only; needs TensorFlow;
about a minute):

    /work/wt/threads/.venv/bin/python models/builders/zoo_micro_order.py   # repository root

Each model is a tf-keras functional network with fixed-seed random weights (the arena does
not depend on training), frozen to models/micro_order/<name>.pb, and converted by TF's v1
``from_frozen_graph`` converter at batch 1 with Optimize.DEFAULT, TFLITE_BUILTINS_INT8 and
float I/O, calibrated on 8 fixed-seed uniform [0, 1) samples, into
models/micro_order/<name>.tf_int8.tflite (a folder of their own: the tests that take every
models/*.pb or models/*.tf_int8.tflite calibrate with the digits):

  inception  an Inception block: 1x1 | 1x1-3x3 | 1x1-5x5 | maxpool-1x1 branches, concatenated
  densenet   a DenseNet block: three BN-ReLU-1x1-3x3 layers each concatenated to its input
  unet       a two-level U-Net: encoder features concatenated to the upsampled decoder ones
  mbv2       MobileNetV2 inverted residual blocks (expand 1x1, depthwise 3x3, project, add)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (MODELS_DIR, atomic_write, freeze_keras, keras, np,  # noqa: E402
                    print_written, seed_everything, tf, v1_converter, write_graph)

FOLDER = "micro_order"
CALIB_SAMPLES = 8
L = keras.layers


def conv(x, ch, k=1, **kw):
    return L.Conv2D(ch, k, padding="same", activation="relu", **kw)(x)


def inception():
    x = inp = keras.Input((16, 16, 8), name="input")
    x = conv(x, 16, 3)
    b1 = conv(x, 8)
    b2 = conv(conv(x, 4), 12, 3)
    b3 = conv(conv(x, 2), 4, 5)
    b4 = conv(L.MaxPooling2D(3, 1, padding="same")(x), 4)
    x = L.Concatenate()([b1, b2, b3, b4])
    x = L.GlobalAveragePooling2D()(x)
    return inp, L.Dense(10, activation="softmax")(x)


def densenet():
    x = inp = keras.Input((16, 16, 4), name="input")
    x = conv(x, 8, 3)
    for _ in range(3):
        y = L.ReLU()(L.BatchNormalization()(x))
        y = conv(y, 16)
        y = L.Conv2D(4, 3, padding="same")(y)
        x = L.Concatenate()([x, y])
    x = L.GlobalAveragePooling2D()(x)
    return inp, L.Dense(10, activation="softmax")(x)


def unet():
    x = inp = keras.Input((32, 32, 3), name="input")
    e1 = conv(x, 8, 3)
    e2 = conv(L.MaxPooling2D()(e1), 16, 3)
    m = conv(L.MaxPooling2D()(e2), 32, 3)
    d2 = conv(L.Concatenate()([L.UpSampling2D()(m), e2]), 16, 3)
    d1 = conv(L.Concatenate()([L.UpSampling2D()(d2), e1]), 8, 3)
    return inp, L.Conv2D(2, 1, activation="softmax")(d1)


def mbv2():
    x = inp = keras.Input((16, 16, 3), name="input")
    x = conv(x, 8, 3, strides=2)
    for _ in range(3):
        y = L.Conv2D(48, 1, padding="same")(x)
        y = L.ReLU(6.0)(L.BatchNormalization()(y))
        y = L.ReLU(6.0)(L.BatchNormalization()(L.DepthwiseConv2D(3, padding="same")(y)))
        y = L.BatchNormalization()(L.Conv2D(8, 1, padding="same")(y))
        x = L.Add()([x, y])
    x = L.GlobalAveragePooling2D()(x)
    return inp, L.Dense(10, activation="softmax")(x)


MODELS = {"inception": inception, "densenet": densenet, "unet": unet, "mbv2": mbv2}


def build(name: str) -> None:
    seed_everything()
    inp, out = MODELS[name]()
    model = keras.Model(inp, out)
    rng = np.random.default_rng(0)
    for layer in model.layers:   # BN statistics away from the identity, so folds matter
        if isinstance(layer, L.BatchNormalization):
            g, b, m, v = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, g.shape), rng.normal(0, .1, b.shape),
                               rng.normal(0, .1, m.shape), rng.uniform(0.5, 1.5, v.shape)])
    shape = tuple(inp.shape)
    gd = freeze_keras(model, {"input": ((None, *shape[1:]), tf.float32)})
    stem = f"{FOLDER}/{name}"
    write_graph(gd, f"{stem}.pb", as_text=False)
    conv_ = v1_converter(MODELS_DIR / f"{stem}.pb", {"input": [1, *shape[1:]]}, ["probs"])
    conv_.optimizations = [tf.lite.Optimize.DEFAULT]
    conv_.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    samples = np.random.default_rng(1).uniform(0, 1, (CALIB_SAMPLES, 1, *shape[1:]))

    def representative_dataset():
        for s in samples.astype(np.float32):
            yield [s]

    conv_.representative_dataset = representative_dataset
    atomic_write(MODELS_DIR / f"{stem}.tf_int8.tflite", conv_.convert())


if __name__ == "__main__":
    for n in sys.argv[1:] or MODELS:
        build(n)
    print_written()
