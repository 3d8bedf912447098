"""Build the "real-world" GraphDefs of issue 3 (dev-only; needs TensorFlow).

The model registry (SPECS, in build order) and the command line of models/build_real_world.py
(--list, --only NAME, --skip-large); see that script's docstring.
"""

from __future__ import annotations

import argparse
import time

from .real_world import Spec, finish  # first: sets TF_USE_LEGACY_KERAS
from .applications import APPS, build_app
from .common import print_written
from .keras_small import build_efficientnet_like, build_keras_dynamic_shape, build_text_classifier
from .op_zoo import build_op_zoo_array, build_op_zoo_image, build_op_zoo_math
from .tf1_graphs import (
    build_tf1_cond_is_training,
    build_tf1_cond_placeholder_default,
    build_tf1_dilated_conv1d,
    build_tf1_mobilenet_unfolded_bn,
)


# --------------------------------------------------------------------------- registry


SPECS = [
    Spec("tf1_mobilenet_unfolded_bn", build_tf1_mobilenet_unfolded_bn),
    Spec("tf1_cond_is_training", build_tf1_cond_is_training),
    Spec("tf1_cond_placeholder_default", build_tf1_cond_placeholder_default),
    Spec("tf1_dilated_conv1d", build_tf1_dilated_conv1d),
    Spec("text_classifier", build_text_classifier),
    Spec("keras_dynamic_shape", build_keras_dynamic_shape),
    Spec("efficientnet_like", build_efficientnet_like),
    Spec("op_zoo_math", build_op_zoo_math),
    Spec("op_zoo_array", build_op_zoo_array),
    Spec("op_zoo_image", build_op_zoo_image),
] + [Spec(n, (lambda n=n: build_app(n)), large=True) for n in APPS]


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="build only this model (repeatable; comma-separated lists allowed)",
    )
    ap.add_argument(
        "--skip-large", action="store_true", help="skip the tf-keras applications (models/cache/)"
    )
    ap.add_argument("--list", action="store_true", help="list the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SPECS:
            print(f"{s.name}{'  (large, models/cache/)' if s.large else ''}")
        return 0
    only = {n for item in args.only for n in item.split(",") if n}
    unknown = only - {s.name for s in SPECS}
    if unknown:
        ap.error(f"unknown model(s): {sorted(unknown)}; see --list")
    todo = [s for s in SPECS if (not only or s.name in only) and not (args.skip_large and s.large)]

    results, failures = [], []
    t_all = time.time()
    for spec in todo:
        t0 = time.time()
        print(f"\n[{spec.name}]{' (large)' if spec.large else ''}")
        built = spec.build()
        res = finish(spec, built)
        res["seconds"] = time.time() - t0
        print(f"  done in {res['seconds']:.1f} s")
        results.append(res)
        if "tf_error" in res:
            failures.append(spec.name)

    print("\nsummary")
    for r in results:
        tfl = (
            f"TF tflite {r['n_lite_ops']} ops, rel err {r['rel_err']:.2g}"
            if "n_lite_ops" in r
            else "TF converter FAILED"
        )
        print(
            f"  {r['name']:30s} {r['nodes']:5d} nodes, {tfl}, min spread {r['spread']:.3g}, "
            f"{r['seconds']:.0f} s"
        )
    print_written(total=False)
    print(f"total {time.time() - t_all:.0f} s")
    if failures:
        print(f"TF's converter failed on: {failures} (recorded in their tf_ops.json)")
    return 0

