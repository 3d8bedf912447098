"""The accuracy goals of --min-sqnr and --max-accuracy-drop: which one is asked, and top-1
accuracy against the calibration samples' labels."""

from __future__ import annotations

import numpy as np

from edgelite.errors import EdgeliteError
from ..files import quoted_path
from .options import PrecisionOptions
from .selective import GoalKind


def goal_kind(options: PrecisionOptions) -> GoalKind | None:
    if options.min_sqnr is not None and options.max_accuracy_drop is not None:
        raise EdgeliteError("give --min-sqnr or --max-accuracy-drop, not both")
    if options.max_accuracy_drop is not None:
        if not 0.0 <= options.max_accuracy_drop <= 1.0:
            raise EdgeliteError("--max-accuracy-drop is a fraction in [0, 1] (0.01 = one "
                                f"point), got {options.max_accuracy_drop}")
        if options.labels is None:
            raise EdgeliteError("--max-accuracy-drop needs --labels LABELS: the class of each "
                                "calibration sample (.npy, or .npz with 'y')")
        return GoalKind.MAX_ACCURACY_DROP
    if options.labels is not None:
        raise EdgeliteError("--labels is only used by --max-accuracy-drop")
    return None if options.min_sqnr is None else GoalKind.MIN_SQNR


def calibration_labels(path: str, positions: list[int]) -> np.ndarray:
    """The labels of the calibration samples used (their positions in the data file)."""
    from ..accuracy.sources import load_labels
    y = load_labels(path)
    if positions and len(y) <= positions[-1]:
        raise EdgeliteError(f"--labels {quoted_path(path)} holds {len(y)} labels for at least "
                            f"{positions[-1] + 1} calibration samples: give one label per "
                            "sample, in the same order")
    return y[positions]


def top1(outputs: list[list[np.ndarray]], labels: np.ndarray) -> float:
    """Top-1 accuracy of the first output's scores (as `edgelite eval`)."""
    scores = np.stack([o[0].reshape(-1) for o in outputs])
    if scores.shape[1] <= int(labels.max()):
        raise EdgeliteError(f"the model's first output has {scores.shape[1]} score(s) per "
                            f"sample; the labels go up to {int(labels.max())}")
    return float(np.mean(scores.argmax(axis=1) == labels))
