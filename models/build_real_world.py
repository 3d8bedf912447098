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
  tf1_dilated_conv1d            dilated Conv1D (SpaceToBatchND / BatchToSpaceND around Conv2D)
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

The code lives in models/builders/: real_world_cli.py (model registry, command line),
real_world.py (shared constants, photo crops, finish()), tf1_graphs.py, keras_small.py,
op_zoo.py, applications.py (the model builders) and common.py (shared with build_models.py and
build_quantized.py).  This script re-exports the registry and the data helpers (photo_crops,
small_images, SEED, keras, ...) for code that imports it, such as bench/mobilenet_data.py.

Random-weight networks with batch norm are made non-degenerate with data-dependent batch-norm
statistics: every BatchNormalization layer's momentum is set to 0 (and every Dropout rate to 0),
the model runs ONE training-mode forward pass on a calibration batch of real photo crops, so each
moving mean / variance becomes the statistics of that batch at that layer; then momentum and
dropout rates are restored and the model is frozen in inference mode.  Calibration crops and
golden crops come from disjoint regions of the photos.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# tf.compat.v1.layers (used by the TF1 graphs) needs Keras 2 (tf_keras) behind tf.keras; set it
# before anything imports TensorFlow.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.common import SEED, keras, np, tf  # noqa: E402,F401  (env, seeds, 1-thread TF)
from builders.real_world import (  # noqa: E402,F401
    CACHE,
    Built,
    Spec,
    digits,
    finish,
    photo_crops,
    photos,
    small_images,
)
from builders.real_world_cli import SPECS, main  # noqa: E402,F401

__all__ = [
    "CACHE", "SEED", "SPECS", "Built", "Spec", "digits", "finish", "keras", "main", "np",
    "photo_crops", "photos", "small_images", "tf",
]

if __name__ == "__main__":
    sys.exit(main())
