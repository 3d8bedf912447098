"""Empirical bias correction of each layer's own error (Nagel et al. 2019, section 4.2,
measured on the calibration data instead of derived from batch-norm statistics).

Quantizing a layer shifts the mean of its output: the rounded weights W_q differ from W, so
for the same input x the quantized layer's output y_q = layer_q(x) differs from the float
layer's layer(x) by an error whose mean over the data, per output channel c, is not zero.
Adding that mean to the int32 bias removes it. For every quantized CONV_2D /
DEPTHWISE_CONV_2D / FULLY_CONNECTED with a bias, in graph order, on the calibration samples:
  1. x_q: the layer's input as the quantized model computes it (the layers before it are
     already corrected, see run_staged); the reference r = layer(x_q), the float layer
     (float weights and bias, its fused activation) on those same inputs -- what `edgelite
     compare`'s op SQNR measures the layer against (accuracy/op_replay.py);
  2. run the quantized layer on x_q (the integer kernel, edgelite's interpreter); its own
     error per channel is r - y_q. The shift is the mean of that error over the elements
     whose output the layer does not clamp (fused RELU / RELU6 / RELU_N1_TO_1, and the ends
     of the output's int8 range): on a clamped element a small bias change shows no effect,
     so the mean over all elements (the pre-activation mean) is the wrong shift for a layer
     whose clamp cuts many outputs;
  3. the shift is added in the accumulator's units: int32 bias += round(shift / (s_in *
     s_w[c])), the scales as the kernel multiplies them (float32 input and weight scales,
     product in double: the kernel's real multiplier s_in * s_w[c] / s_out);
  4. safe by construction: the layer runs again with the shifted bias and each channel keeps
     the shift only if it lowers that channel's squared error sum (r - y)^2 on the
     calibration data (channels of these ops are independent: output channel c reads only
     bias c); otherwise it keeps its calibrated bias. So the layer's own error -- its op
     SQNR on the inputs it sees -- never grows on the calibration data; the report lists
     per layer the channels corrected and the op SQNR before / after.
Why the own error, not E[y_float - y_q] (the float model's output minus the quantized one,
AIMET's empirical correction and what this module did before): that difference mixes the
layer's error with every upstream error, which the layer cannot undo -- the clamps,
roundings and clippings upstream are not linear, vary per sample, and the following layers
and a residual ADD see the shift again. Folding it into the bias made a layer's own error
larger than its signal (a ResNet-50 shortcut conv: op SQNR 38 -> 0.3 dB), and with the
per-tensor mean taken once per *reader* a tensor read by two layers (a shortcut and a main
branch, Inception's branches) had its float mean counted twice.
The fused activation, the output scale and every other parameter stay as calibrated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ...interpreter.quant_math import activation_range
from ..ir import Graph, Op
from .qarith import quantize
from .rules import WEIGHT_AXIS
from .staged import Outputs, Values, real, run_op, run_staged

INT32 = np.iinfo(np.int32)


@dataclass
class LayerCorrection:
    """What bias correction did to one layer, measured on the calibration data."""

    name: str                # the layer's output tensor (the float model's name)
    op: str                  # CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED
    channels: int
    corrected: int           # channels whose bias moved (the others: no gain, kept)
    mean_abs_shift: float    # mean |bias change| over all channels, real units
    op_sqnr_before: float    # dB: the layer's own error with its calibrated bias
    op_sqnr_after: float     # dB: ... with the corrected bias (>= before)


@dataclass
class BiasCorrectionReport:
    layers: list[LayerCorrection] = field(default_factory=list)

    @property
    def applied(self) -> list[str]:
        """Layers with at least one corrected channel."""
        return [c.name for c in self.layers if c.corrected]

    @property
    def skipped(self) -> list[str]:
        """Layers examined and left as calibrated (no channel's error shrank)."""
        return [c.name for c in self.layers if not c.corrected]

    def summary(self) -> str:
        channels = sum(c.channels for c in self.layers)
        corrected = sum(c.corrected for c in self.layers)
        return (f"bias correction: {len(self.applied)} of {len(self.layers)} layer(s), "
                f"{corrected} of {channels} channel(s) corrected")


def correctable(float_op: Op, quant_op: Op) -> bool:
    if quant_op.type not in WEIGHT_AXIS or len(quant_op.inputs) < 3:
        return False
    x, w, b = quant_op.inputs[:3]
    return (x is not None and x.quant is not None and x.dtype != np.float32
            and w is not None and w.is_const and w.dtype != np.float32 and w.quant is not None
            and b is not None and b.is_const and b.dtype == np.int32
            and quant_op.outputs[0].quant is not None
            and float_op.inputs[2] is not None and float_op.inputs[2].is_const)


def accumulator_scale(op: Op) -> np.ndarray:
    """Real value of one int32 accumulator (and bias) step per output channel: s_in * s_w[c]
    in double from the float32 scales the kernel reads (conv.cc / fully_connected.cc:
    effective scale = input_scale * filter_scale / output_scale)."""
    s_in = float(np.float32(op.inputs[0].quant.scale.ravel()[0]))
    s_w = np.asarray(op.inputs[1].quant.scale, np.float32).astype(np.float64).ravel()
    return np.broadcast_to(s_in * s_w, op.inputs[2].data.shape).copy()


def with_bias(op: Op, bias: np.ndarray) -> Op:
    """A copy of `op` (same tensors) whose int32 bias holds `bias`."""
    new = op.copy()
    new.inputs = [*op.inputs[:2], replace(op.inputs[2], data=bias), *op.inputs[3:]]
    return new


class _OwnError:
    """Per channel sums of the layer's own error r - y over the calibration samples."""

    def __init__(self, op: Op, reference: list[np.ndarray]) -> None:
        self.op = op
        self.reference = reference
        self.channels = op.outputs[0].shape[-1]
        self.signal = sum(float(np.square(r, dtype=np.float64).sum()) for r in reference)
        out = op.outputs[0]
        act = int(op.options.get("fused_activation_function", 0))
        self.clamp = activation_range(act, float(out.quant.scale.ravel()[0]),
                                      int(out.quant.zero_point.ravel()[0]), out.dtype)

    def squared(self, outputs: list[np.ndarray]) -> np.ndarray:
        """sum over samples and positions of (r - y)^2, per channel."""
        total = np.zeros(self.channels)
        for r, y in zip(self.reference, real(self.op.outputs[0], outputs)):
            total += np.square(self._flat(r) - self._flat(y)).sum(axis=0)
        return total

    def unclamped_mean(self, outputs: list[np.ndarray]) -> np.ndarray:
        """Mean of r - y over the elements y is not clamped at, per channel (0 where all are)."""
        lo, hi = self.clamp
        total, count = np.zeros(self.channels), np.zeros(self.channels)
        for r, q, y in zip(self.reference, outputs, real(self.op.outputs[0], outputs)):
            free = self._flat((q > lo) & (q < hi))
            total += np.where(free, self._flat(r) - self._flat(y), 0.0).sum(axis=0)
            count += free.sum(axis=0)
        return np.divide(total, count, out=np.zeros(self.channels), where=count > 0)

    def _flat(self, a: np.ndarray) -> np.ndarray:
        return np.asarray(a, np.float64).reshape(-1, self.channels)


def _db(signal: float, noise: float) -> float:
    if noise == 0.0:
        return math.inf
    return -math.inf if signal == 0.0 else 10.0 * math.log10(signal / noise)


def correct_layer(float_op: Op, op: Op, inputs: list[np.ndarray]) -> tuple[LayerCorrection,
                                                                           Outputs]:
    """Correct `op`'s int32 bias in place on its stored `inputs` (one per sample); returns
    the report row and the op's outputs with the bias it keeps."""
    reference = run_op(float_op, [[x.astype(np.float32) for x in real(op.inputs[0], inputs)]],
                       len(inputs))[0]
    own = _OwnError(op, reference)
    calibrated = run_op(op, [inputs], len(inputs))[0]
    before = own.squared(calibrated)
    bias = op.inputs[2].data.astype(np.int64)
    step = accumulator_scale(op)
    # the shift in accumulator steps: q_b' = q_b + round(E[y - y_q] / (s_in * s_w[c]))
    shift = quantize(own.unclamped_mean(calibrated), step, 0, np.int32, axis=0)
    moved = np.clip(bias + shift, INT32.min, INT32.max)
    after, kept, outputs = before, np.zeros(own.channels, bool), calibrated
    if np.any(moved != bias):
        shifted = run_op(with_bias(op, moved.astype(np.int32)), [inputs], len(inputs))[0]
        after = own.squared(shifted)
        kept = (after < before) & (moved != bias)
        after = np.where(kept, after, before)
        outputs = [np.where(kept, s, c) for s, c in zip(shifted, calibrated)]
        op.inputs[2].data = np.where(kept, moved, bias).astype(np.int32)
    row = LayerCorrection(float_op.outputs[0].name, op.type, own.channels, int(kept.sum()),
                          float(np.abs((op.inputs[2].data - bias) * step).mean()),
                          _db(own.signal, float(before.sum())), _db(own.signal, float(after.sum())))
    return row, [outputs]


def bias_correct(quant_graph: Graph, layers: list[tuple[Op, Op]],
                 samples: list[dict]) -> BiasCorrectionReport:
    """Correct the int32 biases of `layers` ((float op, quantized op of `quant_graph`)
    pairs) in place. Each quantized op has its own int32 bias (rewrite.quantize_const gives
    an op whose float bias is shared a copy), so moving one never moves another's."""
    report = BiasCorrectionReport()
    by_op = {id(q): f for f, q in layers if correctable(f, q)}
    if not by_op or not samples:
        return report

    def correct(q: Op, values: Values) -> Outputs | None:
        f = by_op.get(id(q))
        if f is None:
            return None
        row, outputs = correct_layer(f, q, values[id(q.inputs[0])])
        report.layers.append(row)
        return outputs

    run_staged(quant_graph, samples, correct)
    return report
