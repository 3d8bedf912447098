#!/usr/bin/env python
"""Real-image calibration / evaluation data for the MobileNet-style models (dev-only: needs
TensorFlow and scikit-learn, like models/build_real_world.py, whose photo crops it reuses).

    python bench/mobilenet_data.py
      -> models/cache/mobilenet_v2.quant_data.npz               224x224, 32 calib / 16 eval
      -> models/cache/tf1_mobilenet_unfolded_bn.quant_data.npz  32x32, 100 calib / 100 eval

`calib`: crops from columns [0, 384) of sklearn's two sample photos; `eval`: crops from
columns [384, 640) (no shared pixels, the same split as the golden inputs); scaled to [-1, 1]
(x / 127.5 - 1, tf_keras.applications.mobilenet_v2.preprocess_input and the small models'
scaling). bench/quant_methods.py uses these files when they exist, else the golden inputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N_CALIB, N_EVAL = 32, 16
N_SMALL = 100


def main() -> None:
    sys.path.insert(0, str(ROOT / "models"))
    import build_real_world as brw  # noqa: E402  (TensorFlow, seeds, photo crops)

    calib = brw.photo_crops(N_CALIB, 224, "calib", brw.SEED + 5000)
    test = brw.photo_crops(N_EVAL, 224, "golden", brw.SEED + 5001)
    pre = brw.keras.applications.mobilenet_v2.preprocess_input
    out = ROOT / "models" / "cache" / "mobilenet_v2.quant_data.npz"
    np.savez(out, calib=pre(calib.copy()).astype(np.float32),
             eval=pre(test.copy()).astype(np.float32))
    print(f"wrote {out}: calib {calib.shape}, eval {test.shape}")
    out = ROOT / "models" / "cache" / "tf1_mobilenet_unfolded_bn.quant_data.npz"
    np.savez(out, calib=brw.small_images(N_SMALL, "calib", brw.SEED + 5002),
             eval=brw.small_images(N_SMALL, "golden", brw.SEED + 5003))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
