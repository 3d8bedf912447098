"""seg_unet: a small Keras U-Net (Conv2D / MaxPool down, Conv2DTranspose and UpSampling2D up,
Concatenate skips, per-pixel softmax) on 16x16 photo crops -- the model whose int8 file LiteRT
refused to load (concatenation.cc: t->params.scale != output->params.scale), issue 16.

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_unet     (from the repo root)

Random weights; batch norm statistics from one training-mode pass on calibration crops, so the
activations have real ranges. Writes models/seg_unet.{pb,golden.npz,calib.npz,tf.tflite,
tf_ops.json} through builders/beyond.py.
"""

from __future__ import annotations

from .real_world import Built, Spec, photo_crops  # first: sets TF_USE_LEGACY_KERAS
from .beyond import finish_beyond
from .common import (SEED, calibrate_batchnorm, freeze_keras, keras, np, print_written,
                     seed_everything, tf)

N_GOLDEN, N_CALIB, SIZE, CLASSES = 8, 16, 16, 4


def _crops(n: int, split: str, seed: int) -> np.ndarray:
    """SIZE x SIZE photo crops scaled to [-1, 1]."""
    return photo_crops(n, SIZE, split, seed) / np.float32(127.5) - np.float32(1.0)


def _block(x, filters: int, name: str):
    layers = keras.layers
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False, name=f"{name}_conv")(x)
    x = layers.BatchNormalization(name=f"{name}_bn")(x)
    return layers.ReLU(name=f"{name}_relu")(x)


def build_unet() -> Built:
    seed_everything(SEED)
    layers = keras.layers
    inp = keras.Input((SIZE, SIZE, 3), name="image")
    d1 = _block(inp, 6, "down1")                                  # 16x16x6
    d2 = _block(layers.MaxPool2D(name="pool1")(d1), 12, "down2")  # 8x8x12
    mid = _block(layers.MaxPool2D(name="pool2")(d2), 16, "mid")   # 4x4x16
    u2 = layers.Conv2DTranspose(12, 2, strides=2, name="up2_tconv")(mid)
    u2 = _block(layers.Concatenate(name="skip2")([u2, d2]), 12, "up2")
    u1 = layers.UpSampling2D(2, interpolation="nearest", name="up1_resize")(u2)
    u1 = _block(layers.Concatenate(name="skip1")([u1, d1]), 6, "up1")
    logits = layers.Conv2D(CLASSES, 1, name="logits")(u1)
    out = layers.Softmax(name="mask")(logits)
    model = keras.Model(inp, out, name="seg_unet")
    calibrate_batchnorm(model, _crops(N_CALIB, "calib", SEED + 1601))
    gd = freeze_keras(model, {"image": ([None, SIZE, SIZE, 3], tf.float32)}, "mask")
    return Built(gd, {"image": ([None, SIZE, SIZE, 3], "float32")}, ["mask"],
                 {"image": _crops(N_GOLDEN, "golden", SEED + 1602)},
                 expect_ops=("Conv2DBackpropInput", "ConcatV2", "ResizeNearestNeighbor"),
                 notes={"built_with": "tf_keras functional U-Net, random weights, batch norm "
                        "statistics from one training-mode pass on 16 photo crops"})


def main() -> None:
    calib = {"image": _crops(N_CALIB, "calib", SEED + 1603)}
    print(finish_beyond(Spec("seg_unet", build_unet), build_unet(), "segmentation", calib))
    print_written()


if __name__ == "__main__":
    main()
