"""Quantization: choose ranges, then rewrite the float graph.

Modes (QuantMode): INT8 / UINT8 full-integer (ranges from FakeQuant nodes, the user, and/or
calibration), INT16X8 (full-integer with symmetric int16 activations, int8 weights and int64
biases: TFLite's 16x8 scheme, for ops with 16x8 kernels; the others stay float), DYNAMIC (int8
weights, float activations), FLOAT16 (float16 weights).

Full-integer pipeline (pipeline.py: named steps over one Plan; each switchable in
QuantizeOptions, whose settings come in groups: options.py):
  equalize         cross-layer equalization of the float weights (equalize.py)
  calibrate        per-tensor ranges by `calib_method` (observers/)
  sequence models  int8: each fused LSTM written integer or weights-only as measured on the
                   calibration data (lstm_check.py), the output softmax and its logits 16x8
                   (sequence_head.py)
  rewrite          to int8 / uint8, `keep_float` ops left float (rewrite.py, selective.py)
  adaround         learn each layer's weight rounding on the calibration data (adaround.py)
  bias_correction  shift int32 biases by the measured mean error (bias_correction.py)
  min_sqnr         keep the most sensitive ops float until the output SQNR target is met
  max_accuracy_drop  the same, until top-1 accuracy against `labels` (one label per
                   calibration sample) is within the drop of the float model's

Every step quantizes, dequantizes and rounds through qarith.py (one definition each, built on
interpreter/quant_math.py) and runs models through runner.py (ModelRunner, the converter's one
model runner, also used by constant folding and the accuracy tools).
"""

from __future__ import annotations

from ..ir import Graph
from .calibrate import Preprocess
from .metrics import sqnr
from .observers import CalibConfig, CalibMethod
from .options import (FULL_INTEGER, IO_TYPES, CalibrationOptions, IoOptions, PrecisionOptions,
                      QuantizeOptions, QuantMode, TransformOptions)
from .auto import HELD_OUT
from .pipeline import CHECK, QUANTIZE, Plan, run
from .report import QuantizeReport
from .rewrite import IOType
from .selective import Fallback


PIPELINE = (CHECK, HELD_OUT, *QUANTIZE)


def quantize(graph: Graph, options: QuantizeOptions, samples: list | None = None,
             ranges_given: dict[str, tuple[float, float]] | None = None) -> QuantizeReport:
    """Quantize `graph` in place (shapes must be inferred): pipeline.py's steps.

    ``samples``: calibration samples in memory (instead of reading ``options``' data);
    ``ranges_given``: activation ranges already calibrated with the options' method
    on those samples (auto.py reuses one calibration for several candidates)."""
    return run(Plan(graph, options, QuantizeReport(options.mode), samples, ranges_given),
               PIPELINE)


__all__ = ["QuantMode", "FULL_INTEGER", "IO_TYPES", "Fallback", "QuantizeOptions",
           "QuantizeReport", "IoOptions", "CalibrationOptions", "TransformOptions",
           "PrecisionOptions", "IOType", "Preprocess", "CalibMethod", "CalibConfig", "quantize",
           "sqnr"]
