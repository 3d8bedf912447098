"""Empirical bias correction (Nagel et al. 2019, section 4.2, measured instead of derived
from batch-norm statistics; AIMET's "empirical bias correction").

Quantization shifts the mean of a layer's output: y_q = conv(x_q, W_q) + b_q differs from
y = conv(x, W) + b by an error whose mean over the data, per output channel c,
    e_c = E[y_c - y_q,c]
is not zero (rounded weights, clipped and rounded input activations of earlier layers).
Adding e_c to the bias removes it. For every quantized CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED with a bias, on the calibration samples:
  1. run the float model and the quantized model, keeping every tensor; average the layer's
     input over the samples: xf_mean (float model), xq_mean (quantized model, dequantized
     real = s * (q - zp), so it carries every upstream error);
  2. the layers are linear before their fused activation, so the mean pre-activation output
     is the layer applied to the mean input:
         E[conv(x, W)] = conv(E[x], W)          (per output position)
     run the layer alone (float, no activation, zero bias) in edgelite's interpreter on
     xf_mean with the float weights and on xq_mean with the dequantized int8 weights, and
     average over the output positions: Mf_c, Mq_c;
  3. the corrected bias is  b_q + e_c = b_c + Mf_c - Mq_c  (b = the float bias), stored as
     int32 with the bias scale s_in * s_w[c] unchanged:  q_b = round((b + Mf - Mq) / s_b).
A layer's correction depends on the layers before it (through xq_mean), so the quantized
model runs op by op over all samples (staged.run_staged) and each layer is corrected just
before it runs, with its inputs already produced by the corrected layers before it: one pass,
the same result as correcting the layers one at a time in graph order.
The fused activation, the output scale and every other parameter stay as calibrated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ...interpreter.names import quoted
from ..export import export_tflite
from ..ir import Activation, Graph, Op, Tensor
from .qarith import dequantize, quantize
from .rules import WEIGHT_AXIS
from ..runner import ModelRunner
from .staged import real, run_staged


@dataclass
class BiasCorrectionReport:
    layers: list[str] = field(default_factory=list)
    # per layer: mean |shift| of the bias over the channels, in real units
    mean_abs_shift: dict[str, float] = field(default_factory=dict)


def dequantize_const(t: Tensor) -> np.ndarray:
    """real = scale * (q - zero_point), per channel along quant.axis, as float32."""
    q = t.quant
    return dequantize(t.data, q.scale, q.zero_point, q.axis).astype(np.float32)


def correctable(float_op: Op, quant_op: Op) -> bool:
    if quant_op.type not in WEIGHT_AXIS or len(quant_op.inputs) < 3:
        return False
    w, b = quant_op.inputs[1], quant_op.inputs[2]
    return (w is not None and w.is_const and w.dtype != np.float32 and w.quant is not None
            and b is not None and b.is_const and b.dtype == np.int32
            and float_op.inputs[2] is not None and float_op.inputs[2].is_const)


def layer_mean(op: Op, x_mean: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean over output positions of op(x_mean) without bias or activation, per channel."""
    g = Graph()
    x = g.tensor("x", np.float32, x_mean.shape)
    g.inputs = [x]
    channels = op.outputs[0].shape[-1]
    y = g.tensor("y", np.float32, op.outputs[0].shape)
    options = dict(op.options, fused_activation_function=Activation.NONE)
    g.add_op(op.type, [x, g.const("w", weights), g.const("b", np.zeros(channels, np.float32))],
             [y], options)
    g.outputs = [y]
    runner = ModelRunner(export_tflite(g), label=f"layer {quoted(op.outputs[0].name)}")
    out = runner.run({"x": x_mean.astype(np.float32)})[0].astype(np.float64)
    return out.reshape(-1, channels).mean(axis=0)


def _input_means(model: bytes, names: Sequence[str], samples) -> dict[str, np.ndarray]:
    runner = ModelRunner(model, keep_all=True, label="the float model")
    sums = {n: None for n in names}
    for sample in samples:
        runner.run(sample)
        for n in names:
            v = runner.tensor(n).astype(np.float64)
            sums[n] = v if sums[n] is None else sums[n] + v
    return {n: s / len(samples) for n, s in sums.items()}


def bias_correct(float_graph: Graph, quant_graph: Graph, layers: list[tuple[Op, Op]],
                 samples: list[dict]) -> BiasCorrectionReport:
    """Correct the int32 biases of `layers` ((float op, quantized op) pairs) in place."""
    report = BiasCorrectionReport()
    layers = [(f, q) for f, q in layers if correctable(f, q)]
    if not layers or not samples:
        return report
    xf = _input_means(export_tflite(float_graph), [f.inputs[0].name for f, _ in layers],
                      samples)
    by_op = {id(q): f for f, q in layers}

    def correct(q: Op, values) -> None:
        f = by_op.get(id(q))
        if f is None:
            return
        mf = layer_mean(f, xf[f.inputs[0].name], f.inputs[1].data)
        xq = np.mean(real(q.inputs[0], values[id(q.inputs[0])]), axis=0)
        mq = layer_mean(q, xq, dequantize_const(q.inputs[1]))
        bias = q.inputs[2]
        s_b = np.broadcast_to(np.asarray(bias.quant.scale, np.float64), bias.data.shape)
        target = f.inputs[2].data.astype(np.float64) + mf - mq     # b + Mf - Mq
        new = quantize(target, s_b, 0, np.int32, axis=0)
        name = q.outputs[0].name
        report.layers.append(name)
        report.mean_abs_shift[name] = float(np.abs((new.astype(np.float64) - bias.data) * s_b)
                                            .mean())
        bias.data = new

    run_staged(quant_graph, samples, correct)
    return report
