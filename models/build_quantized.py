#!/usr/bin/env python
"""Build TensorFlow's quantized reference models for issue 4 (dev-only; needs TensorFlow).

How to run (from the repository root, after ``python models/build_models.py``)::

    pip install -e ".[dev]"          # TensorFlow, tf-keras, scikit-learn, ai-edge-litert
    python models/build_quantized.py

Everything is deterministic (fixed seeds, single-threaded TensorFlow, op determinism, fixed
calibration samples); rerunning with the same package versions rewrites byte-identical files.
The code lives in models/builders/: quantized_refs.py (TF's int8 / uint8 conversions,
LiteRT evaluation, main), qat.py (the FakeQuant graph and its ranges), digits.py and common.py
(data split, writers, frozen-graph runner, shared with build_models.py).

Outputs (see models/README.md, "Quantized references"):

  digits_calib.npy              calibration set: the first 100 TRAINING images, float32 [100,8,8,1]
  <m>.tf_int8.tflite            TF full-integer int8 of models/<m>.pb, float input/output
  <m>.tf_int8_io.tflite         the same with int8 input/output
  <m>.tf_uint8.tflite           TF's legacy uint8 (inference_type=uint8, default_ranges_stats)
  quantized_reference.json      per file: size, LiteRT test accuracy (3 kernel sets), op counts,
                                I/O (and float-io boundary) quantization parameters
  qat_cnn.pb                    quantization-aware TF1 graph with FakeQuant nodes (frozen)
  qat_cnn.golden.npz            input / output (frozen graph) / labels, first 32 test images
  qat_cnn.tf_int8.tflite        TF int8 of qat_cnn.pb WITHOUT a representative dataset
  qat_cnn.ranges.json           each FakeQuant node: raw and nudged range, TF .tflite scale/zp
for <m> in tf1_cnn, keras_cnn.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.quantized_refs import main  # noqa: E402  (sets env, seeds, single-threaded TF)

if __name__ == "__main__":
    sys.exit(main())
