"""Quantization: choose ranges, then rewrite the float graph.

Modes (QuantMode): INT8 / UINT8 full-integer (ranges from FakeQuant nodes, the user, and/or
calibration), INT16X8 (full-integer with symmetric int16 activations, int8 weights and int64
biases: TFLite's 16x8 scheme, for ops with 16x8 kernels; the others stay float), DYNAMIC (int8
weights, float activations), FLOAT16 (float16 weights).

Full-integer pipeline (each step switchable in QuantizeOptions):
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

import copy
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Callable, ContextManager

import numpy as np

from ...interpreter.errors import EdgeliteError
from ...interpreter.names import quoted
from ..shape_inference import infer_shapes
from ..export import export_tflite
from ..files import quoted_path
from ..ir import Graph, all_graphs, has_subgraphs
from ..sample_data import names_list
from .adaround import AdaRoundReport, apply_adaround
from .attention_masks import clamp_additive_masks
from .bias_correction import BiasCorrectionReport, bias_correct
from .calibrate import (CalibrationStats, Preprocess, collect_ranges, graph_samples,
                        usable_indexed, usable_samples)
from .equalize import EqualizeReport, channel_maxima, equalize, relu6_layers
from .index_arithmetic import index_arithmetic
from .lstm_check import LstmCheck, LstmForm, with_weights_only
from .lstm_check import choose as choose_lstm_forms
from .memory_samples import once_iterable
from .metrics import sqnr
from .observers import CalibConfig, CalibMethod
from .params import Affine, QType, activation
from .rewrite import IOType, RewriteConfig, quantize_graph
from .subgraphs import quantize_with_subgraphs
from ..runner import run_all
from .selective import (Fallback, Goal, GoalKind, Measurement, SelectiveReport, candidates,
                        keep_float_ops, search, split_fallback)
from .sequence_head import head_ops
from .weights_only import dynamic_range, float16

if TYPE_CHECKING:
    from .auto import AutoReport


class QuantMode(Enum):
    INT8 = "int8"
    UINT8 = "uint8"
    INT16X8 = "int16x8"
    DYNAMIC = "dynamic"
    FLOAT16 = "float16"

    @property
    def qtype(self) -> QType | None:
        """The activations' type of a full-integer mode (None for the weights-only ones)."""
        return {"int8": QType.INT8, "uint8": QType.UINT8, "int16x8": QType.INT16}.get(self.value)


FULL_INTEGER = (QuantMode.INT8, QuantMode.UINT8, QuantMode.INT16X8)
# What each full-integer mode's model may take and give (--io-type).
IO_TYPES = {QuantMode.INT8: (IOType.FLOAT, IOType.INT8, IOType.UINT8),
            QuantMode.UINT8: (IOType.FLOAT, IOType.INT8, IOType.UINT8),
            QuantMode.INT16X8: (IOType.FLOAT, IOType.INT16)}


@dataclass
class QuantizeOptions:
    mode: QuantMode = QuantMode.INT8
    per_channel: bool = True
    io_type: IOType = IOType.FLOAT     # the inputs' type (and the outputs', unless
    output_type: IOType | None = None  # this is given: int8 in, float out)
    # .npy / .npz / folder, or data in memory: arrays, {name: array}, an iterable or a
    # generator function of samples (memory_samples.py)
    calib: object | None = None
    calib_samples: int | None = None
    calib_preprocess: Preprocess = Preprocess()
    input_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    mean_std: dict[str, tuple[float, float]] = field(default_factory=dict)
    default_range: tuple[float, float] | None = None
    progress: Callable[[int], None] | None = None    # one call per calibration sample
    # the longer steps (AdaRound's layers, auto's candidates): progress_bar(label, total)
    # is a context manager giving an update(n) callback (cli/progress.py draws one)
    progress_bar: Callable[[str, int | None], ContextManager[Callable[[int], None]]] | None \
        = None
    # accuracy tools (full-integer modes)
    calib_method: CalibConfig | CalibMethod | str = CalibMethod.MINMAX  # "percentile:99.9"
    equalize: bool = False              # cross-layer equalization before calibration
    bias_correction: bool = False       # needs calibration data
    adaround: bool = False              # learned weight rounding, needs calibration data
    keep_float: tuple[str, ...] = ()    # op types / node names left float
    int16_ops: tuple[str, ...] = ()     # ... run 16x8 in an int8 model (int16 activations)
    min_sqnr: float | None = None       # dB over the outputs on the calibration data
    fallback: Fallback = Fallback.FLOAT  # where --min-sqnr / --max-accuracy-drop move ops
    max_accuracy_drop: float | None = None  # fraction (0.01 = one point), needs `labels`
    labels: str | None = None           # class per calibration sample (.npy / .npz)
    auto: bool = False                  # choose method and transforms on held-out data (auto.py)
    # int8 sequence models: each LSTM integer or weights-only (lstm_check.py), the
    # classifier head 16x8 ("int16") or int8 (sequence_head.py)
    lstm: LstmForm = LstmForm.AUTO
    sequence_head: str = "int16"
    force_transforms: bool = False      # keep --equalize / --bias-correction even when they
                                        # make the held-out error worse (auto.py checks)
    log: Callable[[str], None] | None = None   # one line per finished step
    workers: int | None = None          # calibrate (min / max) in N processes ...
    ray: str | None = None              # ... or on Ray: "local" or an address

    def __post_init__(self) -> None:
        self.mode = _enum(QuantMode, self.mode, "quantize")
        self.io_type = _enum(IOType, self.io_type, "io_type")
        if self.output_type is not None:
            self.output_type = _enum(IOType, self.output_type, "output_type")
        self.calib = once_iterable(self.calib) if self.calib is not None else None
        if isinstance(self.calib_method, str) and self.calib_method.strip().lower() == "auto":
            self.auto, self.calib_method = True, CalibMethod.MINMAX
        self.calib_method = CalibConfig.parse(self.calib_method)
        self.keep_float = tuple(self.keep_float)
        self.int16_ops = tuple(self.int16_ops)
        self.fallback = Fallback(self.fallback)
        self.lstm = LstmForm(self.lstm)
        if self.sequence_head not in ("int16", "int8"):
            raise EdgeliteError(f"sequence_head is int16 or int8, not {self.sequence_head!r}")


def _enum(kind, value, what: str):
    """An enum member from itself or its value ("int8"), else one clear error."""
    if isinstance(value, kind):
        return value
    try:
        return kind(value.strip().lower() if isinstance(value, str) else value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise EdgeliteError(f"{what} is one of {allowed}, not {value!r}") from None


@dataclass
class QuantizeReport:
    mode: QuantMode
    calibration: CalibrationStats | None = None
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    calib_method: CalibConfig = CalibConfig()
    equalization: EqualizeReport | None = None
    bias_correction: BiasCorrectionReport | None = None
    adaround: AdaRoundReport | None = None
    selective: SelectiveReport | None = None
    auto: "AutoReport | None" = None     # what --calib-method auto tried and chose
    lstms: list[LstmCheck] = field(default_factory=list)  # the LSTMs measured (lstm_check.py)
    # ops the rewrite was told to leave float (--keep-float patterns: an output name or an
    # op type) -> why; ops without an integer kernel stay float too, unlisted
    kept_float: dict[str, str] = field(default_factory=dict)

    def float_reasons(self) -> dict[str, str]:
        """kept_float with the later steps' choices: --min-sqnr's search, weights-only
        LSTMs."""
        reasons = dict(self.kept_float)
        if self.selective is not None:
            flag = "--min-sqnr" if self.selective.goal.kind is GoalKind.MIN_SQNR else \
                "--max-accuracy-drop"
            reasons.update(dict.fromkeys(self.selective.kept, f"kept float by {flag}"))
        for check in self.lstms:
            if not check.integer:
                reasons[check.name] = "LSTM weights-only: " + check.line()
        return reasons


def quantize(graph: Graph, options: QuantizeOptions, samples: list | None = None,
             ranges_given: dict[str, tuple[float, float]] | None = None) -> QuantizeReport:
    """Quantize `graph` in place (shapes must be inferred).

    ``samples``: calibration samples in memory (instead of reading ``options.calib``);
    ``ranges_given``: activation ranges already calibrated with ``options.calib_method``
    on those samples (auto.py reuses one calibration for several candidates)."""
    loops = has_subgraphs(graph)
    _check_mode(options)
    if loops and options.mode in FULL_INTEGER and (
            _held_out_check(options) or options.bias_correction or options.adaround
            or options.equalize or _goal_kind(options) is not None):
        raise EdgeliteError("the model has control flow (WHILE / IF): --calib-method auto, "
                            "--equalize, --bias-correction, --adaround, --min-sqnr and "
                            "--max-accuracy-drop do not handle loops yet; quantize it with a "
                            "calibration method alone (e.g. --calib-method minmax)")
    if samples is None and _held_out_check(options):
        from .auto import quantize_checked
        return quantize_checked(graph, options)
    report = QuantizeReport(options.mode)
    if options.mode is QuantMode.DYNAMIC:
        dynamic_range(graph, options.per_channel)
        return report
    if options.mode is QuantMode.FLOAT16:
        float16(graph)
        return report
    qtype = options.mode.qtype
    log = options.log or (lambda line: None)
    goal_kind = _goal_kind(options)
    needs_data = options.bias_correction or options.adaround or goal_kind is not None
    has_data = samples is not None or options.calib is not None
    if needs_data and not has_data:
        raise EdgeliteError("bias correction, --adaround, --min-sqnr and --max-accuracy-drop "
                            "measure the model on calibration data: give --calib DATA")
    if options.keep_float:
        keep_float_ops(graph, options.keep_float)       # fail early on unknown names
    if options.int16_ops:
        keep_float_ops(graph, options.int16_ops)
    infer_shapes(graph)

    given = samples

    def samples():
        if given is not None:
            return iter(given)
        return graph_samples(options.calib, graph, options.calib_preprocess)

    if options.equalize:
        observed = None
        if has_data and relu6_layers(graph):
            observed = channel_maxima(export_tflite(graph),
                                      usable_samples(samples(), options.calib_samples),
                                      relu6_layers(graph))
        report.equalization = equalize(graph, observed)
        log(f"equalized {len(report.equalization.pairs)} layer pair(s)")
    ranges: dict[str, tuple[float, float]] = {}
    report.calib_method = options.calib_method
    if ranges_given is not None:
        ranges.update(ranges_given)
    elif has_data:
        activations = {t.name for t in graph.tensors()
                       if not t.is_const and t.dtype == np.float32}
        report.calibration = collect_ranges(export_tflite(graph), samples,
                                            options.calib_samples, options.progress,
                                            options.calib_method, activations,
                                            options.workers, options.ray)
        ranges.update(report.calibration.ranges)
    names = {t.name for t in graph.inputs}
    for name in [*options.input_ranges, *options.mean_std]:
        if name not in names:
            raise EdgeliteError(f"{quoted(name)} is not a model input; inputs are "
                                f"{names_list(sorted(names))}")
    ranges.update(options.input_ranges)
    input_params = {}
    for name, (mean, std) in options.mean_std.items():
        # TOCO's quantized_input_stats: real = (q - mean) / std, q in the io type's range.
        io = QType.UINT8 if options.io_type is IOType.UINT8 else qtype
        zp = mean - (128 if io is QType.UINT8 and qtype is QType.INT8 else 0)
        input_params[name] = Affine(np.array([1.0 / std], np.float32),
                                    np.array([int(round(zp))], np.int64))
    if options.default_range is not None:
        for t in graph.tensors():
            if not t.is_const and t.dtype == np.float32:
                ranges.setdefault(t.name, options.default_range)
    report.ranges = ranges
    clamp_additive_masks(graph, ranges)  # attention masks: a floor, not -1e9
    non_finite = _non_finite_ops(graph, ranges, report.calibration is not None)
    _check_ranges(graph, ranges, set(input_params), non_finite)
    outside, indices = _outside_kernels(graph, ranges, qtype), index_arithmetic(graph)
    report.kept_float = {
        **dict.fromkeys(indices, "index arithmetic (float values that end as indices)"),
        **dict.fromkeys(outside, "what calibration saw is outside the integer kernel's "
                        "domain (a comparison with a scale >= 1, a divisor near 0)"),
        **dict.fromkeys(non_finite, "NaN / inf, which integers cannot hold"),
        **dict.fromkeys(options.keep_float, "--keep-float")}
    cfg = RewriteConfig(qtype, options.per_channel, options.io_type,
                        output_type=options.output_type,
                        keep_float=frozenset(options.keep_float) | non_finite | outside
                        | indices, int16=frozenset(options.int16_ops))
    if loops:
        inner = dict(report.calibration.subgraph_ranges) if report.calibration else {}
        if options.default_range is not None:  # the subgraphs' tensors too
            for k, sub in enumerate(all_graphs(graph)[1:], 1):
                given = inner.setdefault(k, {})
                for t in sub.tensors():
                    if not t.is_const and t.dtype == np.float32:
                        given.setdefault(t.name, options.default_range)
        elif report.calibration is not None:
            cfg = replace(cfg, keep_float=cfg.keep_float | _never_ran(graph, inner))
        for k, sub in enumerate(all_graphs(graph)[1:], 1):
            cfg = replace(cfg, keep_float=cfg.keep_float
                          | _outside_kernels(sub, inner.get(k, {}), qtype)
                          | index_arithmetic(sub))
        quantize_with_subgraphs(graph, ranges, inner, cfg, input_params)
        return report
    if qtype is QType.INT8:
        cfg = _sequence_choices(graph, options, cfg, ranges, input_params, report,
                                lambda: usable_samples(samples(), options.calib_samples)
                                if has_data else None)
    if not needs_data:
        quantize_graph(graph, ranges, cfg, input_params)
        return report
    indexed = usable_indexed(samples(), options.calib_samples)
    data = [sample for _, sample in indexed]
    float_graph = copy.deepcopy(graph)

    def build(extra: frozenset[str] = frozenset()) -> Graph:
        """A quantized copy of float_graph with `extra` ops also kept float."""
        q = copy.deepcopy(float_graph)
        pairs = list(zip(float_graph.ops, q.ops))
        wide, floats = split_fallback(float_graph, extra, options.fallback)
        quantize_graph(q, ranges, replace(cfg, keep_float=cfg.keep_float | floats,
                                          int16=cfg.int16 | wide), input_params)
        if options.adaround:
            report.adaround = apply_adaround(float_graph, q, pairs, data,
                                             progress_bar=options.progress_bar)
        if options.bias_correction:
            report.bias_correction = bias_correct(q, pairs, data)
        return q

    final_keep: frozenset[str] = frozenset()
    if goal_kind is not None:
        reference = run_all(export_tflite(float_graph), data)
        labels = None
        if goal_kind is GoalKind.MAX_ACCURACY_DROP:
            labels = _calibration_labels(options.labels, [i for i, _ in indexed])
            goal = Goal(goal_kind, options.max_accuracy_drop, _top1(reference, labels))
        else:
            goal = Goal(goal_kind, options.min_sqnr)

        def evaluate(keep: frozenset[str]) -> Measurement:
            outputs = run_all(export_tflite(build(keep)), data)
            acc = None if labels is None else _top1(outputs, labels)
            return Measurement(sqnr(reference, outputs), acc)

        report.selective = search(
            evaluate, candidates(float_graph, keep_float_ops(float_graph, options.keep_float)),
            goal, float_graph, options.fallback)
        final_keep = frozenset(report.selective.kept)
        log(report.selective.summary())
    final = build(final_keep)
    if report.adaround is not None:
        log(report.adaround.summary())
    if report.bias_correction is not None:
        log(report.bias_correction.summary())
    graph.__dict__.update(final.__dict__)   # the caller's graph becomes the quantized one
    return report


def _sequence_choices(graph: Graph, options: QuantizeOptions, cfg: RewriteConfig, ranges,
                      input_params, report: QuantizeReport, samples) -> RewriteConfig:
    """An int8 sequence model: the classifier head 16x8 (sequence_head.py), each LSTM
    the integer kernel runs measured and written integer or weights-only (lstm_check.py)."""
    if options.sequence_head == "int16":
        cfg = replace(cfg, int16=cfg.int16 | head_ops(graph))

    def quantize_one(q: Graph, weights_only: frozenset[str]) -> None:
        quantize_graph(q, ranges, with_weights_only(cfg, weights_only), input_params)

    names, report.lstms = choose_lstm_forms(graph, options.lstm,
                                            keep_float_ops(graph, cfg.keep_float), samples,
                                            quantize_one)
    for check in report.lstms:
        (options.log or (lambda line: None))(check.line())
    return with_weights_only(cfg, names)


def _check_mode(options: QuantizeOptions) -> None:
    """The mode's I/O types; what int16x8 does not combine with yet."""
    if options.mode not in FULL_INTEGER:
        return
    for flag, io in (("--io-type", options.io_type), ("--output-type", options.output_type)):
        if io is not None and io not in IO_TYPES[options.mode]:
            allowed = " or ".join(t.value for t in IO_TYPES[options.mode])
            raise EdgeliteError(f"--quantize {options.mode.value} takes {flag} {allowed}, "
                                f"not {io.value}")
    if (options.fallback is Fallback.INT16 or options.int16_ops) and \
            options.mode is not QuantMode.INT8:
        raise EdgeliteError("--fallback int16 / --int16-ops run ops of an int8 model 16x8: "
                            f"they need --quantize int8, not {options.mode.value}")
    if options.mode is QuantMode.INT16X8:
        tools = {"--calib-method auto": options.auto, "--bias-correction":
                 options.bias_correction, "--adaround": options.adaround,
                 "--min-sqnr": options.min_sqnr is not None,
                 "--max-accuracy-drop": options.max_accuracy_drop is not None}
        used = [name for name, on in tools.items() if on]
        if used:
            raise EdgeliteError(f"{', '.join(used)}: not available with --quantize int16x8 "
                                "yet; use --quantize int8 for them, or int16x8 with a "
                                "calibration method alone (--calib-method ...)")
        if any(mean != 0 for mean, _ in options.mean_std.values()):
            raise EdgeliteError("int16x8 inputs are symmetric (zero point 0): --mean-std "
                                "needs mean 0 with --quantize int16x8")


def _held_out_check(options: QuantizeOptions) -> bool:
    """--calib-method auto, or an explicit transform to verify on held-out samples (auto.py)."""
    from .auto import TRANSFORMS
    if options.mode not in FULL_INTEGER:
        return False
    return options.auto or (not options.force_transforms and options.calib is not None
                            and any(getattr(options, t, False) for t in TRANSFORMS))


def _goal_kind(options: QuantizeOptions) -> GoalKind | None:
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


def _calibration_labels(path: str, positions: list[int]) -> np.ndarray:
    """The labels of the calibration samples used (their positions in the data file)."""
    from ..accuracy.sources import load_labels
    y = load_labels(path)
    if positions and len(y) <= positions[-1]:
        raise EdgeliteError(f"--labels {quoted_path(path)} holds {len(y)} labels for at least "
                            f"{positions[-1] + 1} calibration samples: give one label per "
                            "sample, in the same order")
    return y[positions]


def _top1(outputs: list[list[np.ndarray]], labels: np.ndarray) -> float:
    """Top-1 accuracy of the first output's scores (as `edgelite eval`)."""
    scores = np.stack([o[0].reshape(-1) for o in outputs])
    if scores.shape[1] <= int(labels.max()):
        raise EdgeliteError(f"the model's first output has {scores.shape[1]} score(s) per "
                            f"sample; the labels go up to {int(labels.max())}")
    return float(np.mean(scores.argmax(axis=1) == labels))


def _non_finite_ops(graph: Graph, ranges, calibrated: bool) -> frozenset[str]:
    """Ops about NaN and inf, which int8 cannot hold, stay float (named by their first output,
    as --keep-float takes them): IsFinite's SUB and EQUAL (x - x == 0: calibrated, x - x is
    the single value 0, which a quantized comparison cannot take; TF 2.21's int8 file makes
    them int8 with the output scale 7.8e-9, which LiteRT's SUB does not rescale to -- see
    interpreter/kernels/add_paths.py -- and gets True from EQUAL's own rescaling; float
    costs no op more), and after calibration the ops writing or reading a float activation it gave no
    range because it held NaN or inf on every sample (the log of a negative number)."""
    def unranged(t) -> bool:
        return (calibrated and t is not None and t.dtype == np.float32 and not t.is_const
                and t.range is None and t.name not in ranges and not graph.is_input(t))
    return frozenset(op.outputs[0].name for op in graph.ops if op.outputs and (
        op.origin == "IsFinite" or any(map(unranged, (*op.inputs, *op.outputs)))))


COMPARISONS = frozenset({"EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
                         "LESS_EQUAL"})


def _outside_kernels(graph: Graph, ranges, qtype: QType) -> frozenset[str]:
    """Ops whose integer kernels cannot take what calibration saw stay float: a comparison
    of a tensor whose scale would be 1 or more (comparisons.cc then shifts by a negative
    amount: undefined), a DIV whose divisor's range comes within half a step of 0 (a
    divisor quantized to the zero point: div.cc refuses it at invoke). Index arithmetic a graph does in float (loop counters, box areas) is where
    they come from."""
    def span(t) -> tuple[float, float] | None:
        if t.is_const:
            return (float(t.data.min()), float(t.data.max())) if t.data.size else None
        return t.range or ranges.get(t.name)

    def coarse(t) -> bool:
        r = span(t)
        return r is not None and float(activation(r[0], r[1], qtype).scale[0]) >= 1.0

    kept = set()
    for op in graph.ops:
        floats = [t for t in op.inputs if t is not None and t.dtype == np.float32]
        if op.type in COMPARISONS and any(map(coarse, floats)):
            kept.add(op.outputs[0].name)
        elif op.type == "DIV" and len(op.inputs) > 1 and op.inputs[1].dtype == np.float32:
            r = span(op.inputs[1])  # a divisor within half a step of 0 quantizes to 0
            half = float(activation(*r, qtype).scale[0]) / 2 if r is not None else 0.0
            if r is not None and r[0] - half <= 0.0 <= r[1] + half:
                kept.add(op.outputs[0].name)
    return frozenset(kept)


def _never_ran(graph: Graph, inner: dict[int, dict]) -> frozenset[str]:
    """Ops of a subgraph that calibration never ran (a loop whose body no sample entered,
    an IF branch never taken) stay float: no range was seen for their activations. The
    subgraph's inputs and outputs are not asked: the caller's tensors give them theirs."""
    kept = set()
    for k, sub in enumerate(all_graphs(graph)[1:], 1):
        seen = inner.get(k, {})
        edge = {id(t) for t in (*sub.inputs, *sub.outputs)}

        def unranged(t) -> bool:
            return (t is not None and t.dtype == np.float32 and not t.is_const
                    and id(t) not in edge and t.range is None and t.name not in seen)
        kept |= {op.outputs[0].name for op in sub.ops
                 if op.outputs and any(map(unranged, (*op.inputs, *op.outputs)))}
    return frozenset(kept)


def _check_ranges(graph: Graph, ranges, given: set[str],
                  kept_float: frozenset[str] = frozenset()) -> None:
    """One error naming every tensor that needs a range and has none."""
    from .rules import FIXED_OUTPUT, INTEGER_OPS, SAME_AS_INPUT
    need = [t for t in graph.inputs if t.dtype == np.float32 and t.name not in given]
    for op in graph.ops:
        if op.outputs and op.outputs[0].name in kept_float:
            continue
        if op.type in INTEGER_OPS and op.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT:
            need += [t for t in op.outputs if t.dtype == np.float32]
    missing = [t.name for t in need if t.range is None and t.name not in ranges]
    if missing:
        listed = ", ".join(quoted(n) for n in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise EdgeliteError(
            f"{len(missing)} tensor(s) have no range: {listed}{more}. Calibrate with --calib "
            "DATA, or give ranges with --input-range / --mean-std (inputs) or "
            "--default-range MIN,MAX")


__all__ = ["QuantMode", "FULL_INTEGER", "Fallback", "QuantizeOptions", "QuantizeReport",
           "IOType", "Preprocess", "CalibMethod", "CalibConfig", "quantize", "sqnr"]
