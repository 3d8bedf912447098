"""What to do about a tensor that loses precision: one diagnosis, one line, per tensor.

compare() ranks tensors by op SQNR (the error each op adds by itself); this module says why
the op loses it and which conversion flag helps, from facts compare has or gathers cheaply
while it runs (RangeStats: the reference values against the tensor's quantized range) and
from the quantized model's structure (inputs, weights, what follows the op):

* FROM_INPUT   the tensor's error comes in with its inputs: their SQNR is at least
               INPUT_MARGIN_DB below the op's own -- fix the op that produces the worst input;
* FIXED_OUTPUT an op whose int8 output parameters are fixed by TFLite's quantization spec
               (SOFTMAX / LOGISTIC: scale 1/256, zero point -128; TANH 1/128, 0: the
               spec's restrictions, which LiteRT's int8 kernels assume -- the reference
               softmax writes 256 levels of 1/256 whatever the tensor says). Probabilities
               below half a step (1/512) read exactly 0; the remedy is a float op at the end
               (--keep-float SOFTMAX: DEQUANTIZE before it);
* CLIPPING     at least CLIP_FRACTION of the reference values fall outside the quantized
               range (by more than half a step): the range was calibrated too narrow;
* RANGE        the output's rounding alone explains the op's error (the SQNR a uniform
               rounding noise of step s gives a signal of RMS r, 10 log10(12 r^2 / s^2), is
               within ROUNDING_MARGIN_DB of the op SQNR) and the range is over WIDE_SPREAD
               times the RMS: a few large values set it -- a range choice that trades a
               little clipping for a finer step (--calib-method mse; auto also tries it per
               tensor for the last layers) or float to the end of the model; for a model
               input, its real range (--input-range);
* RESOLUTION   the same, with the range well used: only more bits help (float to the end);
* WEIGHTS      an op with int8 weights whose error is not its output rounding: per-tensor
               weights -> per-channel; per-channel -> bias correction / keep it float;
* ARITHMETIC   anything else (the integer kernel's own arithmetic).

Keeping one op float does not remove its output rounding when the op after it is quantized
(a QUANTIZE with the same range is inserted), so "keep it float" names the op and every op
after it up to the model output (KEEP_CHAIN ops at most), and is offered for the output
rounding only that close to the end. int16 activations (TFLite's 16x8 mode: 65536 levels,
256x finer steps, the same int8 weights) are the spec's remedy for a wide range
mid-network: the advice names the op for --int16-ops (ops without a 16x8 kernel go float).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from enum import Enum

import numpy as np

from ...interpreter import native
from ...interpreter.kernels import OPS
from ...interpreter.kernels.opdef import QuantRule
from edgelite.names import quoted, shown
from .exact import ExactSum
from .metrics import sample_sums

INPUT_MARGIN_DB = 6.0     # inputs' error >= 4x the op's own: the op is not the cause
ROUNDING_MARGIN_DB = 3.0  # output rounding >= half the op's own error: it is the cause
CLIP_FRACTION = 1e-3      # 0.1 % of the values clipped is worth widening the range
WIDE_SPREAD = 10.0        # range / RMS above this: a few large values set the range (a
                          # uniform signal has 3.5, a Gaussian clipped at 4 sigma 8)
KEEP_CHAIN = 4            # "keep it float to the output" only this close to the end
BOUNDARY_OPS = frozenset(n for n, op in OPS.items() if op.boundary)  # QUANTIZE, DEQUANTIZE
FIXED_OUTPUT_OPS = frozenset(n for n, op in OPS.items() if op.quant is QuantRule.FIXED_OUTPUT)


class AdviceKind(str, Enum):
    FROM_INPUT = "from_input"
    FIXED_OUTPUT = "fixed_output"
    CLIPPING = "clipping"
    RANGE = "range"
    RESOLUTION = "resolution"
    WEIGHTS = "weights"
    ARITHMETIC = "arithmetic"


@dataclass(frozen=True)
class Advice:
    kind: AdviceKind
    text: str                          # one line: the diagnosis, then what to do
    keep_float: tuple[str, ...] = ()   # --keep-float patterns of the suggested float ops
    flags: tuple[str, ...] = ()        # other convert flags suggested, first = first to try
    cost_bytes: int = 0                # size the keep_float ops add (int8 -> float32 weights)
    step: float | None = None          # the tensor's quantization step
    rms: float | None = None           # RMS of its reference values
    fraction: float | None = None      # clipped (CLIPPING) or read-as-0 (FIXED_OUTPUT) share
    input_sqnr_db: float | None = None
    source: str | None = None          # FROM_INPUT: the input tensor whose op to fix


class RangeStats:
    """The reference values of one per-tensor quantized tensor against its real range
    [s (qmin - z), s (qmax - z)], fed one sample at a time."""

    def __init__(self, scale: float, zero_point: int, dtype: np.dtype) -> None:
        info = np.iinfo(dtype)
        self.step = scale
        self.lo, self.hi = scale * (int(info.min) - zero_point), scale * (int(info.max) - zero_point)
        self.count = 0
        self.squares = ExactSum()  # sum ref^2, exact: merged per shard in any order
        self.clipped = 0    # beyond the range by more than half a step
        self.tiny = 0       # non-zero but below half a step in magnitude: reads as 0

    def update(self, ref: np.ndarray, sum_sq: float | None = None,
               use_native: bool | None = None) -> None:
        """Add one sample; `sum_sq`: its sum ref^2 when already taken (metrics.sample_sums,
        whose order this sum follows); `use_native`: as in sample_sums."""
        ref = np.asarray(ref)
        half = self.step / 2
        self.count += ref.size
        self.squares.add(sample_sums(ref, ref)[0] if sum_sq is None else sum_sq)
        if use_native is None:
            use_native = native.choose(None)
        if use_native and ref.dtype == np.float32:   # the same comparisons, in double
            clipped, tiny = native.module.range_counts(np.ascontiguousarray(ref),
                                                        self.lo - half, self.hi + half, half)
        else:
            r = ref.astype(np.float64).ravel()
            clipped = np.count_nonzero((r < self.lo - half) | (r > self.hi + half))
            tiny = np.count_nonzero((r != 0) & (np.abs(r) < half))
        self.clipped += int(clipped)
        self.tiny += int(tiny)

    def merge(self, other: "RangeStats") -> None:
        self.count += other.count
        self.squares.merge(other.squares)
        self.clipped += other.clipped
        self.tiny += other.tiny

    @property
    def sum_sq(self) -> float:
        return self.squares.value

    @property
    def rms(self) -> float:
        return math.sqrt(self.sum_sq / self.count) if self.count else 0.0

    @property
    def rounding_sqnr_db(self) -> float:
        """The SQNR uniform rounding noise (variance step^2 / 12) leaves the signal."""
        if self.sum_sq == 0.0:
            return -math.inf
        return 10.0 * math.log10(12.0 * self.rms ** 2 / self.step ** 2)


def range_stats(tensor) -> RangeStats | None:
    """RangeStats for a per-tensor quantized tensor of the quantized model, else None."""
    q = tensor.quantization
    if tensor.dtype is None or tensor.dtype.kind not in "iu" or q is None or q.scale.size != 1:
        return None
    zp = int(q.zero_point[0]) if q.zero_point.size else 0
    return RangeStats(float(q.scale[0]), zp, tensor.dtype)


class ModelFacts:
    """What the diagnoses need from the quantized model: producers, consumers, weights."""

    def __init__(self, subgraph, reports: dict) -> None:
        self.sg, self.reports = subgraph, reports   # reports: {quant tensor index: report}
        self.producer, self.consumers = {}, {}
        for op in subgraph.operators:
            for t in op.outputs:
                self.producer[t] = op.index
            for t in op.inputs:
                if t >= 0:
                    self.consumers.setdefault(t, []).append(op.index)
        self.type_count = Counter(op.name for op in subgraph.operators)
        self.by_name = {}
        for r in reports.values():
            self.by_name.setdefault(r.name, r)

    def input_report(self, op_index: int):
        """The report of the op's non-constant input with the lowest SQNR (through QUANTIZE /
        DEQUANTIZE boundaries), or None."""
        from .compare import base_name
        found = []
        for t in self.sg.operators[op_index].inputs:
            for _ in range(4):   # a boundary op or two between tensors
                if t < 0 or self.sg.tensors[t].is_constant or t in self.reports:
                    break
                k = self.producer.get(t)
                if k is None or self.sg.operators[k].name not in BOUNDARY_OPS:
                    break
                t = self.sg.operators[k].inputs[0]
            if t < 0 or self.sg.tensors[t].is_constant:
                continue
            r = self.reports.get(t) or self.by_name.get(base_name(self.sg.tensors[t].name))
            if r is not None:
                found.append(r)
        return min(found, key=lambda r: r.sqnr_db, default=None)

    def weights(self, op_index: int) -> list:
        """The op's int8 / uint8 constant inputs (weights; int32 biases excluded)."""
        return [self.sg.tensors[t] for t in self.sg.operators[op_index].inputs
                if t >= 0 and self.sg.tensors[t].is_constant
                and self.sg.tensors[t].dtype is not None
                and self.sg.tensors[t].dtype.itemsize == 1]

    def cost(self, ops: list[int]) -> int:
        """Bytes the ops' 8-bit weights take more as float32."""
        return sum(3 * int(np.prod(w.shape, dtype=np.int64)) for k in ops for w in self.weights(k))

    def quantized_input(self, op_index: int) -> str | None:
        """The model input's name when the op is the QUANTIZE of a model input."""
        op = self.sg.operators[op_index]
        if op.name == "QUANTIZE" and op.inputs and op.inputs[0] in set(self.sg.inputs):
            return self.sg.tensors[op.inputs[0]].name
        return None

    def chain_to_output(self, op_index: int) -> list[int] | None:
        """The op and every op after it up to a model output (a single path of at most
        KEEP_CHAIN ops, boundary ops skipped), or None when the op is not that close (or
        is a boundary op itself)."""
        if self.sg.operators[op_index].name in BOUNDARY_OPS:
            return None
        chain, k = [op_index], op_index
        outputs = set(self.sg.outputs)
        while True:
            outs = [t for t in self.sg.operators[k].outputs]
            if any(t in outputs for t in outs):
                return chain
            nxt = [c for t in outs for c in self.consumers.get(t, [])]
            if len(nxt) != 1:
                return None
            k = nxt[0]
            if self.sg.operators[k].name in BOUNDARY_OPS:
                if any(t in outputs for t in self.sg.operators[k].outputs):
                    return chain
                continue
            chain.append(k)
            if len(chain) > KEEP_CHAIN:
                return None

    def pattern(self, op_index: int) -> str:
        """The --keep-float pattern for an op: its type when the model has one such op,
        else the GraphDef node name its output keeps."""
        from .compare import base_name
        op = self.sg.operators[op_index]
        if self.type_count[op.name] == 1:
            return op.name
        return base_name(self.sg.tensors[op.outputs[0]].name)


def _keep_float_text(patterns: tuple[str, ...], cost: int) -> str:
    flags = " ".join(f"--keep-float {p if p in OPS else quoted(p)}" for p in patterns)
    return f"{flags} (+{cost} bytes)"


def from_input(report, source, culprit, stats: RangeStats | None) -> Advice:
    """`source`: the worst input; `culprit`: the tensor upstream whose op adds the error
    (the first one back along the worst inputs that is not FROM_INPUT itself). A range
    that also clips is mentioned (its own, smaller, share of the error)."""
    where = (f"{quoted(culprit.name)} (op SQNR {culprit.op_sqnr_db:.1f} dB)"
             if culprit.op_sqnr_db is not None else quoted(culprit.name))
    also = ""
    if stats is not None and stats.count and stats.clipped / stats.count >= CLIP_FRACTION:
        also = (f"; its own range [{stats.lo:.4g}, {stats.hi:.4g}] also clips "
                f"{100 * stats.clipped / stats.count:.2f} % of values")
    return Advice(
        AdviceKind.FROM_INPUT,
        f"error comes from its input (input SQNR {source.sqnr_db:.1f} dB, own op error "
        f"{report.op_sqnr_db:.1f} dB): fix the op that produces {where}{also}",
        input_sqnr_db=source.sqnr_db, source=culprit.name)


def fixed_output(report, stats: RangeStats, keep: tuple[str, ...], cost: int) -> Advice:
    name = report.op or "the op"
    frac = stats.tiny / stats.count if stats.count else 0.0
    return Advice(
        AdviceKind.FIXED_OUTPUT,
        f"int8 {shown(name)} output step is fixed at {stats.step:.4g} (TFLite spec): "
        f"{100 * frac:.1f} % of its values (those below {stats.step / 2:.4g}) read 0 -- for a "
        f"float {shown(name).lower()}: {_keep_float_text(keep, cost)}",
        keep_float=keep, cost_bytes=cost, step=stats.step, rms=stats.rms, fraction=frac)


def _input_range_flag(input_name: str) -> str:
    return f"--input-range {quoted(input_name)}:MIN,MAX"


def clipping(report, stats: RangeStats, input_name: str | None, keep: tuple[str, ...],
             cost: int) -> Advice:
    frac = stats.clipped / stats.count
    end = f"; or keep it float to the output: {_keep_float_text(keep, cost)}" if keep else ""
    fix = (f"give the input's real range ({_input_range_flag(input_name)})" if input_name
           else "the calibration data did not reach these values: calibrate on more "
           "representative samples, with --calib-method minmax (the other methods clip on "
           "purpose)")
    return Advice(
        AdviceKind.CLIPPING,
        f"clips {100 * frac:.2f} % of values (range [{stats.lo:.4g}, {stats.hi:.4g}]): "
        f"{fix}{end}",
        flags=(_input_range_flag(input_name) if input_name else "--calib-method minmax",),
        keep_float=keep, cost_bytes=cost, step=stats.step, rms=stats.rms, fraction=frac)


def _int16_text(own: str | None) -> str:
    """16x8 for the op (--int16-ops), or for the model where the tensor is a QUANTIZE's
    (a model input: no op of its own to move)."""
    flag = "--quantize int16x8" if own is None else \
        f"--int16-ops {own if own in OPS else quoted(own)}"
    return f"int16 activations (16x8: 256x finer steps, same int8 weights): {flag}"


def output_rounding(report, stats: RangeStats, keep: tuple[str, ...], cost: int,
                    input_name: str | None, own: str | None) -> Advice:
    """RANGE when the range is over WIDE_SPREAD times the signal RMS (rare large values set
    it), else RESOLUTION: the range is well used and only more bits would help."""
    spread = (stats.hi - stats.lo) / stats.rms if stats.rms else math.inf
    facts = (f"step {stats.step:.3g} vs signal RMS {stats.rms:.3g} (range {spread:.0f}x the "
             f"RMS; rounding alone allows {stats.rounding_sqnr_db:.1f} dB)")
    end = (f"; or keep it float to the output: {_keep_float_text(keep, cost)}" if keep else
           f"; or {_int16_text(own)}")
    common = dict(keep_float=keep, cost_bytes=cost, step=stats.step, rms=stats.rms)
    if input_name and spread > WIDE_SPREAD:
        return Advice(AdviceKind.RANGE, f"input range too wide: {facts} -- give the input's "
                      f"real range ({_input_range_flag(input_name)})",
                      flags=(_input_range_flag(input_name),), step=stats.step, rms=stats.rms)
    if spread > WIDE_SPREAD:
        return Advice(
            AdviceKind.RANGE,
            f"range too wide: {facts} -- try --calib-method mse (least squared error range) "
            f"or auto (tries mse/percentile, and per tensor for the last layers){end}",
            flags=("--calib-method mse", "--calib-method auto"), **common)
    more = (f"keep it float to the output: {_keep_float_text(keep, cost)}" if keep else
            _int16_text(own))
    return Advice(
        AdviceKind.RESOLUTION,
        f"8-bit resolution: {facts}, the range is well used -- only more bits help: {more}",
        **common)


def weight_error(report, per_channel: bool, keep: tuple[str, ...], cost: int,
                 stats: RangeStats | None) -> Advice:
    allows = (f" (output rounding alone allows {stats.rounding_sqnr_db:.1f} dB)"
              if stats is not None else "")
    if not per_channel:
        return Advice(
            AdviceKind.WEIGHTS,
            f"weight rounding, one scale for the whole tensor{allows}: per-channel weights "
            f"(drop --per-tensor) or --equalize; or keep it float: {_keep_float_text(keep, cost)}",
            keep_float=keep, flags=("--equalize",), cost_bytes=cost)
    return Advice(
        AdviceKind.WEIGHTS,
        f"weight rounding{allows}: keep it float: {_keep_float_text(keep, cost)}, or try "
        "--bias-correction / --calib-method auto",
        keep_float=keep, flags=("--bias-correction",), cost_bytes=cost)


def arithmetic(report, keep: tuple[str, ...], cost: int, stats: RangeStats | None) -> Advice:
    allows = (f" (output rounding alone allows {stats.rounding_sqnr_db:.1f} dB)"
              if stats is not None else "")
    return Advice(
        AdviceKind.ARITHMETIC,
        f"integer {shown(report.op)} arithmetic loses precision{allows}: keep it float: "
        f"{_keep_float_text(keep, cost)}",
        keep_float=keep, cost_bytes=cost)


def _upstream(source, facts: ModelFacts):
    """Back along the worst inputs, past ops that only pass the error on (FROM_INPUT advice,
    given in graph order so inputs have theirs, or exact ops such as MAX_POOL_2D), to the
    tensor whose own op is the cause."""
    seen = set()
    while source.op_index >= 0 and source.name not in seen:
        seen.add(source.name)
        exact = source.op_sqnr_db is None or math.isinf(source.op_sqnr_db)
        passes_on = source.advice is not None and source.advice.kind is AdviceKind.FROM_INPUT
        nxt = facts.input_report(source.op_index) if exact or passes_on else None
        if nxt is None:
            break
        source = nxt
    return source


def advise(report, stats: RangeStats | None, facts: ModelFacts) -> Advice | None:
    """The advice for one tensor (module doc), or None (a graph input, an exact op, no
    op SQNR measured, a QUANTIZE / DEQUANTIZE whose error is not its range's)."""
    op_db = report.op_sqnr_db
    if report.op_index < 0 or op_db is None or math.isinf(op_db) or math.isnan(op_db):
        return None
    k = report.op_index
    source = facts.input_report(k)
    own_is_small = source is not None and source.sqnr_db + INPUT_MARGIN_DB <= op_db
    chain = facts.chain_to_output(k)
    end_keep = tuple(facts.pattern(i) for i in chain) if chain else ()
    end_cost = facts.cost(chain) if chain else 0
    if report.op in FIXED_OUTPUT_OPS and stats is not None and stats.count:
        if not own_is_small or stats.tiny / stats.count >= CLIP_FRACTION:
            return fixed_output(report, stats, end_keep, end_cost)
    if own_is_small:
        return from_input(report, source, _upstream(source, facts), stats)
    input_name = facts.quantized_input(k)
    if stats is not None and stats.count and stats.clipped / stats.count >= CLIP_FRACTION:
        return clipping(report, stats, input_name, end_keep, end_cost)
    if stats is not None and stats.count and (
            stats.rounding_sqnr_db <= op_db + ROUNDING_MARGIN_DB):
        return output_rounding(report, stats, end_keep, end_cost, input_name,
                               None if report.op in BOUNDARY_OPS else facts.pattern(k))
    if report.op in BOUNDARY_OPS:   # a QUANTIZE / DEQUANTIZE only rounds: nothing else
        return None
    own = (facts.pattern(k),)
    weights = facts.weights(k)
    if weights:
        per_channel = any(w.quantization is not None and w.quantization.scale.size > 1
                          for w in weights)
        return weight_error(report, per_channel, own, facts.cost([k]), stats)
    return arithmetic(report, own, 0, stats)
