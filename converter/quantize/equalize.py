"""Cross-layer equalization (Nagel et al. 2019, "Data-Free Quantization Through Weight
Equalization and Bias Correction", section 4.1), on the float IR graph before calibration.

For a pair  y = W2 . f(W1 x + b1)  where f is positively homogeneous per channel
(f(v / s) = f(v) / s for s > 0: NONE, RELU, max/average pooling, spatial MEAN, zero PAD,
a flattening RESHAPE), scaling output channel i of layer 1 by 1/s_i and input channel i of
layer 2 by s_i leaves the function unchanged:
    W1[i] /= s_i,   b1[i] /= s_i,   W2[:, i] *= s_i
With r1_i = max|W1[i]| (output channel i of layer 1) and r2_i = max|W2[:, i]| (input
channel i of layer 2), the choice
    s_i = sqrt(r1_i * r2_i) / r2_i  =  sqrt(r1_i / r2_i)
makes both ranges equal to sqrt(r1_i * r2_i): no channel is left with a tiny range next to a
wide one, which is what per-tensor weight quantization needs (depthwise layers after batch-
norm folding are the classic case). Chains (conv -> depthwise -> pointwise) share layers
between pairs, so the pairs are equalized in turn until no scale moves by more than `tol`.

Pairs: layer 1 = CONV_2D or DEPTHWISE_CONV_2D, layer 2 = CONV_2D, DEPTHWISE_CONV_2D or
FULLY_CONNECTED (through a flatten or a MEAN), every tensor between them read only by the
next op, constant float weights.

RELU6 is not positively homogeneous: relu6(v / s) = min(max(v / s, 0), 6) moves the clip to
6 * s in the original units. A pair whose layer 1 has a fused RELU6 is equalized per channel
using the calibration data (the largest value of each output channel of layer 1, m_i):
  - a channel whose clip fired (m_i = 6) keeps s_i = 1: it is left exactly as it was;
  - any other channel gets s_i >= m_i / 6 (raised if needed, with a 0.1 % margin), so the
    scaled channel stays below the clip: relu6(v / s_i) = relu(v) / s_i = relu6(v) / s_i for
    every calibration sample.
The fused RELU6 stays. So the equalized model equals the original on the calibration data;
on other inputs it can differ only where a channel that never reached 6 there goes past
6 * min(s_i, 1). (AIMET and the DFQ paper instead replace ReLU6 by ReLU, which changes the
float model wherever the clip fires.) Without calibration data RELU6 pairs are skipped, and
RELU_N1_TO_1 / TANH / ... are never equalized.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgelite.names import quoted
from ..ir import Activation, Graph, Op, Tensor
from ..runner import ModelRunner

FIRST = ("CONV_2D", "DEPTHWISE_CONV_2D")
SECOND = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
HOMOGENEOUS = (Activation.NONE, Activation.RELU)
RELU6_CLIP = 6.0
RELU6_MARGIN = 1e-3   # scaled channels stay below 6 * (1 - margin) on the calibration data


@dataclass
class EqualizeOptions:
    max_iterations: int = 20
    tol: float = 1e-4          # stop when every |log s_i| is below this


@dataclass
class Pair:
    first: Op
    second: Op
    relu6_max: np.ndarray | None = None   # layer 1 has RELU6: its per-channel observed max

    @property
    def names(self) -> tuple[str, str]:
        return self.first.outputs[0].name, self.second.outputs[0].name


@dataclass
class EqualizeReport:
    pairs: list[tuple[str, str]] = field(default_factory=list)
    relu6_pinned: dict[str, int] = field(default_factory=dict)  # RELU6 layer -> channels
                                                                 # that clip (kept s = 1)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (layer 1, reason)
    iterations: int = 0


def _act(op: Op) -> Activation:
    return Activation(op.options.get("fused_activation_function", Activation.NONE))


def _const_float(t: Tensor | None) -> bool:
    return t is not None and t.is_const and t.data.dtype == np.float32


def relu6_layers(graph: Graph) -> list[str]:
    """Outputs of candidate layer-1 ops with a fused RELU6 (their observed max decides)."""
    return [op.outputs[0].name for op in graph.ops
            if op.type in FIRST and _act(op) is Activation.RELU6]


def _follow(graph: Graph, t: Tensor, channels: int) -> tuple[Op | None, str]:
    """Walk single-reader, channel-preserving ops from t to a layer 2 (or say why not)."""
    while True:
        if graph.is_output(t) or graph.use_count(t) != 1:
            return None, f"{quoted(t.name)} has other readers"
        if t.range is not None:
            return None, f"{quoted(t.name)} has a FakeQuant range (scaling would invalidate it)"
        (op,) = graph.consumers(t)
        if op.inputs[0] is not t:
            return None, f"{op.type} reads {quoted(t.name)} as a weight"
        out = op.outputs[0]
        if op.type in SECOND:
            ok = _const_float(op.inputs[1]) and (
                op.type == "FULLY_CONNECTED" and op.inputs[1].shape[1] % channels == 0
                or op.type != "FULLY_CONNECTED" and t.shape[-1] == channels)
            return (op, "") if ok else (None, f"{op.type} {quoted(out.name)} does not fit")
        if op.type in ("MAX_POOL_2D", "AVERAGE_POOL_2D") and _act(op) in HOMOGENEOUS:
            pass
        elif op.type == "MEAN" and out.shape and out.shape[-1] == channels and \
                op.inputs[1].is_const and all(int(a) % len(t.shape) != len(t.shape) - 1
                                              for a in op.inputs[1].data.ravel()):
            pass   # a mean over spatial axes only
        elif op.type == "PAD" and op.inputs[1].is_const and \
                not np.any(op.inputs[1].data[-1]):
            pass
        elif op.type == "RESHAPE" and out.shape and len(out.shape) == 2 and \
                t.shape[0] == out.shape[0] and t.shape[-1] == channels:
            pass   # a row-major flatten: column j holds channel j % channels
        else:
            return None, f"{op.type} {quoted(out.name)} is between the layers"
        t = out


def channel_maxima(model: bytes, samples, names: list[str]) -> dict[str, np.ndarray]:
    """Largest value of each channel (last axis) of the named tensors over the samples."""
    runner = ModelRunner(model, keep_all=True, label="the float model")
    out: dict[str, np.ndarray] = {}
    for sample in samples:
        runner.run(sample)
        for n in names:
            m = runner.tensor(n).reshape(-1, runner.details[n]["shape"][-1]).max(axis=0)
            out[n] = m if n not in out else np.maximum(out[n], m)
    return out


def find_pairs(graph: Graph, observed_max: dict[str, np.ndarray] | None = None,
               report: EqualizeReport | None = None) -> list[Pair]:
    report = report if report is not None else EqualizeReport()
    pairs = []
    for op in graph.ops:
        if op.type not in FIRST or not _const_float(op.inputs[1]):
            continue
        name = op.outputs[0].name
        if len(op.inputs) > 2 and op.inputs[2] is not None and not _const_float(op.inputs[2]):
            continue
        act, relu6_max = _act(op), None
        if act is Activation.RELU6:
            relu6_max = (observed_max or {}).get(name)
            if relu6_max is None:
                report.skipped.append((name, "RELU6 and no calibration data"))
                continue
            relu6_max = np.asarray(relu6_max, np.float64).copy()
        elif act not in HOMOGENEOUS:
            report.skipped.append((name, f"activation {act.name}"))
            continue
        channels = _out_channels(op)
        second, why = _follow(graph, op.outputs[0], channels)
        if second is None:
            report.skipped.append((name, why))
            continue
        pairs.append(Pair(op, second, relu6_max))
    return pairs


def _out_channels(op: Op) -> int:
    w = op.inputs[1].data
    return w.shape[0] if op.type == "CONV_2D" else w.shape[3]


def output_ranges(op: Op) -> np.ndarray:
    """r1: max |W1| per output channel (CONV_2D OHWI axis 0, DEPTHWISE 1HWO axis 3)."""
    w = np.abs(op.inputs[1].data.astype(np.float64))
    axis = 0 if op.type == "CONV_2D" else 3
    return np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1).max(axis=1)


def input_ranges(op: Op, channels: int) -> np.ndarray:
    """r2: max |W2| over everything fed by input channel i of layer 2."""
    w = np.abs(op.inputs[1].data.astype(np.float64))
    if op.type == "CONV_2D":                       # OHWI: input channel axis 3
        return w.reshape(-1, w.shape[3]).max(axis=0)
    if op.type == "DEPTHWISE_CONV_2D":             # 1HW(C*m): outputs i*m .. i*m+m-1
        return w.reshape(-1, channels, w.shape[3] // channels).max(axis=(0, 2))
    return w.reshape(w.shape[0], -1, channels).max(axis=(0, 1))   # FC OI, column j -> j % C


def _input_multiplier(op: Op, s: np.ndarray) -> np.ndarray:
    """s broadcast onto layer 2's weight tensor, input-channel-wise."""
    w = op.inputs[1].data
    if op.type == "CONV_2D":
        return s.reshape(1, 1, 1, -1)
    if op.type == "DEPTHWISE_CONV_2D":
        return np.repeat(s, w.shape[3] // s.size).reshape(1, 1, 1, -1)
    return np.tile(s, w.shape[1] // s.size).reshape(1, -1)


def equalize_pair(graph: Graph, pair: Pair) -> np.ndarray:
    """Scale one pair in place; returns s."""
    first, second = pair.first, pair.second
    r1 = output_ranges(first)
    r2 = input_ranges(second, r1.size)
    ok = (r1 > 0) & (r2 > 0)
    s = np.where(ok, np.sqrt(np.where(ok, r1, 1.0) / np.where(ok, r2, 1.0)), 1.0)
    if pair.relu6_max is not None:     # stay below the clip; leave clipping channels alone
        m = pair.relu6_max
        s = np.where(m >= RELU6_CLIP * (1 - 1e-6), 1.0,
                     np.maximum(s, m / (RELU6_CLIP * (1 - RELU6_MARGIN))))
        pair.relu6_max = m / s
    w1 = first.inputs[1].data.astype(np.float64)
    shape = (-1, 1, 1, 1) if first.type == "CONV_2D" else (1, 1, 1, -1)
    graph.set_const_input(first, 1, (w1 / s.reshape(shape)).astype(np.float32))
    if len(first.inputs) > 2 and first.inputs[2] is not None:
        b1 = first.inputs[2].data.astype(np.float64)
        graph.set_const_input(first, 2, (b1 / s).astype(np.float32))
    w2 = second.inputs[1].data.astype(np.float64)
    graph.set_const_input(second, 1, (w2 * _input_multiplier(second, s)).astype(np.float32))
    return s


def equalize(graph: Graph, observed_max: dict[str, np.ndarray] | None = None,
             options: EqualizeOptions | None = None) -> EqualizeReport:
    """Equalize every eligible pair of `graph` in place (module docstring)."""
    options = options or EqualizeOptions()
    report = EqualizeReport()
    pairs = find_pairs(graph, observed_max, report)
    for pair in pairs:
        if pair.relu6_max is not None:
            report.relu6_pinned[pair.names[0]] = int(
                (pair.relu6_max >= RELU6_CLIP * (1 - 1e-6)).sum())
        report.pairs.append(pair.names)
    for it in range(options.max_iterations):
        moved = 0.0
        for pair in pairs:
            s = equalize_pair(graph, pair)
            moved = max(moved, float(np.abs(np.log(s)).max()) if s.size else 0.0)
        report.iterations = it + 1
        if moved < options.tol:
            break
    return report
