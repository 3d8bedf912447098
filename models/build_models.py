#!/usr/bin/env python
"""Build the sample models committed in models/ (dev-only; needs TensorFlow).

How to run (from the repository root)::

    pip install -e ".[dev]"          # TensorFlow, tf-keras, scikit-learn, ai-edge-litert
    python models/build_models.py

The code lives in models/builders/ (digits.py: the two CNNs; common.py: TensorFlow setup,
writers, converter and LiteRT helpers shared with the other build scripts).  The script is
deterministic (fixed seeds, single-threaded TensorFlow, fixed
train/test split) and idempotent: it rewrites every output file in models/ and
prints what it wrote.  It needs no network: the training data is scikit-learn's
bundled 8x8 "digits" data set (sklearn.datasets.load_digits).

Outputs (see models/README.md):

  digits_test.npz             held-out test set: x float32 [N,8,8,1] in [0,1], y int64 [N]
  tf1_cnn.pb / tf1_cnn.pbtxt  frozen TF1-style graph (tf.compat.v1), input "input", output "probs"
  keras_cnn.pb                frozen tf_keras CNN (FusedBatchNormV3, depthwise, ReLU6, Mean)
  <name>.golden.npz           input (first 32 test images), output (frozen-graph TF output), labels
  <name>.tf.tflite            TensorFlow's own float .tflite (batch 1) of the frozen graph
  <name>.tf_ops.json          op list of TensorFlow's .tflite, I/O details, accuracies
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.digits import main  # noqa: E402  (sets env, seeds, single-threaded TF)

if __name__ == "__main__":
    sys.exit(main())
