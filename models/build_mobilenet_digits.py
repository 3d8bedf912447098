#!/usr/bin/env python
"""Build models/mobilenet_v2_digits.* (dev-only; needs TensorFlow; ~3 min on 2 cores).

    python models/build_mobilenet_digits.py

tf_keras' MobileNetV2 (alpha 0.35, 64x64 after an in-graph ResizeBilinear of the 8x8 input)
trained on sklearn's digits with the split of models/build_models.py.  Writes the frozen
GraphDef, golden outputs and the op list of TensorFlow's float .tflite (not the .tflite
itself: 1.6 MB).
The code is models/builders/digits_mobilenet.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.digits_mobilenet import main  # noqa: E402  (sets env, seeds, single-threaded TF)

if __name__ == "__main__":
    sys.exit(main())
