#!/usr/bin/env python
"""Build models/fashion_*.{pb,golden.npz,tf_int8.tflite,tf_ops.json} and the Fashion-MNIST data
subsets (dev-only; needs TensorFlow and Debian's dataset-fashion-mnist; ~15 min on 2 cores).

    apt-get install dataset-fashion-mnist      # /usr/share/datasets/fashion-mnist
    pip install -e ".[dev]"
    python models/build_fashion.py                            # both models
    python models/build_fashion.py --only fashion_xception

Two small real networks trained on a real data set that is not digits: an Xception-style
network (separable convs, BN, 1x1-conv residual shortcuts with ADD) and a MobileNetV2-style
network (inverted residuals, ReLU6), with TensorFlow's own int8 conversion calibrated on the
same 50 samples.  The code is models/builders/fashion.py and fashion_nets.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.fashion import main  # noqa: E402  (sets env, seeds, single-threaded TF)

if __name__ == "__main__":
    sys.exit(main())
