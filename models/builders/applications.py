"""The large real-world models: tf-keras applications with random weights and data-dependent
batch-norm statistics (files in models/cache/, only <name>.tf_ops.json is committed)."""

from __future__ import annotations

import time

from .real_world import (  # first: sets TF_USE_LEGACY_KERAS
    N_CALIB_LARGE,
    N_GOLDEN_LARGE,
    Built,
    photo_crops,
)
from .common import SEED, calibrate_batchnorm, freeze_keras, keras, np, seed_everything, tf


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
    seed_everything(SEED)
    keras.backend.clear_session()
    seed_everything(SEED)
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
