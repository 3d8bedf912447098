"""quantize() as a pipeline: named steps over one Plan.

Each step is a small function of the plan; the tuples below list them in order, each with the
condition under which it runs, and a step may finish the plan (``plan.done``: the weights-
only modes, the loop models, the final rewrite). auto.py builds a plan per candidate with
its ranges already measured and runs the same steps (``run``), so there is one definition
of what quantizing means. The whole pipeline is ``CHECK``, auto.py's ``HELD_OUT``, then
``QUANTIZE`` (assembled in __init__.py).

    check          the options against the graph (modes, loops)
    held_out       --calib-method auto / transforms to verify: auto.py chooses on held-out
                   samples and quantizes with its choice, done (the step is auto.py's)
    weights_only   DYNAMIC / FLOAT16: int8 / float16 weights, done (weights_only.py)
    check_data     the tools that measure the model have data; --keep-float names exist
    equalize       cross-layer equalization of the float weights (equalize.py)
    calibrate      activation ranges from the calibration data (calibrate.py, observers/)
    given_ranges   --input-range, --mean-std, --default-range
    float_ops      ops that must stay float (index arithmetic, NaN / inf, outside the
                   integer kernels' domain, --keep-float) and the rewrite's configuration
    subgraphs      models with WHILE / IF: every subgraph rewritten, done (subgraphs.py)
    sequence       int8 sequence models: LSTM forms, the 16x8 head (lstm_check.py,
                   sequence_head.py)
    rewrite        to int8 / uint8 / int16, done (rewrite.py)
    measured       the rewrite with the steps that measure the model on the calibration
                   data: --min-sqnr / --max-accuracy-drop's search, AdaRound, bias
                   correction, done
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from ..export import export_tflite
from ..ir import Graph, all_graphs, has_subgraphs
from ..runner import run_all
from ..sample_data import names_list
from ..shape_inference import infer_shapes
from .adaround import apply_adaround
from .attention_masks import clamp_additive_masks
from .bias_correction import bias_correct
from .calibrate import collect_ranges, graph_samples, usable_indexed, usable_samples
from .equalize import channel_maxima, equalize, relu6_layers
from .float_ops import check_ranges, never_ran, non_finite_ops, outside_kernels
from .goals import calibration_labels, goal_kind, top1
from .index_arithmetic import index_arithmetic
from .lstm_check import choose as choose_lstm_forms
from .lstm_check import with_weights_only
from .metrics import sqnr
from .options import FULL_INTEGER, QuantizeOptions, QuantMode
from .params import Affine, QType
from .report import QuantizeReport
from .rewrite import IOType, RewriteConfig, quantize_graph
from .selective import (Goal, GoalKind, Measurement, candidates, keep_float_ops, search,
                        split_fallback)
from .sequence_head import head_ops
from .subgraphs import quantize_with_subgraphs
from .weights_only import dynamic_range, float16


@dataclass
class Plan:
    """What the steps share: the graph quantized in place and what is decided so far."""
    graph: Graph
    options: QuantizeOptions
    report: QuantizeReport
    given_samples: list | None = None   # samples in memory instead of options' data
    ranges_given: dict | None = None    # ranges measured already (auto.py)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    input_params: dict[str, Affine] = field(default_factory=dict)
    cfg: RewriteConfig | None = None
    done: bool = False

    @property
    def qtype(self) -> QType | None:
        return self.options.mode.qtype

    @property
    def loops(self) -> bool:
        return has_subgraphs(self.graph)

    @property
    def has_data(self) -> bool:
        return self.given_samples is not None or self.options.calibration.data is not None

    @property
    def goal(self) -> GoalKind | None:
        return goal_kind(self.options.precision)

    @property
    def needs_data(self) -> bool:
        t = self.options.transforms
        return t.bias_correction or t.adaround or self.goal is not None

    def samples(self) -> Iterator:
        """The calibration samples, from the start (each call reads them again)."""
        if self.given_samples is not None:
            return iter(self.given_samples)
        c = self.options.calibration
        return graph_samples(c.data, self.graph, c.preprocess)

    def usable(self) -> list:
        return usable_samples(self.samples(), self.options.calibration.samples)


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[Plan], None]
    when: Callable[[Plan], bool] = lambda plan: True


def check(plan: Plan) -> None:
    """Fail early, in one line, on what the options cannot do with this graph."""
    options, t = plan.options, plan.options.transforms
    options.check()
    if plan.loops and options.mode in FULL_INTEGER and (
            held_out_check(options) or t.bias_correction or t.adaround or t.equalize
            or plan.goal is not None):
        raise EdgeliteError("the model has control flow (WHILE / IF): --calib-method auto, "
                            "--equalize, --bias-correction, --adaround, --min-sqnr and "
                            "--max-accuracy-drop do not handle loops yet; quantize it with a "
                            "calibration method alone (e.g. --calib-method minmax)")


def weights_only(plan: Plan) -> None:
    if plan.options.mode is QuantMode.DYNAMIC:
        dynamic_range(plan.graph, plan.options.precision.per_channel)
    else:
        float16(plan.graph)
    plan.done = True


def check_data(plan: Plan) -> None:
    """The tools that measure the model have data; the op names given exist."""
    if plan.needs_data and not plan.has_data:
        raise EdgeliteError("bias correction, --adaround, --min-sqnr and --max-accuracy-drop "
                            "measure the model on calibration data: give --calib DATA")
    precision = plan.options.precision
    if precision.keep_float:
        keep_float_ops(plan.graph, precision.keep_float)   # fail early on unknown names
    if precision.int16_ops:
        keep_float_ops(plan.graph, precision.int16_ops)
    infer_shapes(plan.graph)


def equalize_step(plan: Plan) -> None:
    graph, observed = plan.graph, None
    if plan.has_data and relu6_layers(graph):
        observed = channel_maxima(export_tflite(graph), plan.usable(), relu6_layers(graph))
    plan.report.equalization = equalize(graph, observed)
    plan.options.say(f"equalized {len(plan.report.equalization.pairs)} layer pair(s)")


def calibrate(plan: Plan) -> None:
    c = plan.options.calibration
    plan.report.calib_method = c.method
    if plan.ranges_given is not None:
        plan.ranges.update(plan.ranges_given)
        return
    if not plan.has_data:
        return
    activations = {t.name for t in plan.graph.tensors()
                   if not t.is_const and t.dtype == np.float32}
    plan.report.calibration = collect_ranges(export_tflite(plan.graph), plan.samples,
                                             c.samples, c.progress, c.method, activations,
                                             c.workers, c.ray)
    plan.ranges.update(plan.report.calibration.ranges)


def given_ranges(plan: Plan) -> None:
    io, graph = plan.options.io, plan.graph
    names = {t.name for t in graph.inputs}
    for name in [*io.input_ranges, *io.mean_std]:
        if name not in names:
            raise EdgeliteError(f"{quoted(name)} is not a model input; inputs are "
                                f"{names_list(sorted(names))}")
    plan.ranges.update(io.input_ranges)
    for name, (mean, std) in io.mean_std.items():
        # TOCO's quantized_input_stats: real = (q - mean) / std, q in the io type's range.
        qtype = plan.qtype
        io_q = QType.UINT8 if io.io_type is IOType.UINT8 else qtype
        zp = mean - (128 if io_q is QType.UINT8 and qtype is QType.INT8 else 0)
        plan.input_params[name] = Affine(np.array([1.0 / std], np.float32),
                                         np.array([int(round(zp))], np.int64))
    if io.default_range is not None:
        for t in graph.tensors():
            if not t.is_const and t.dtype == np.float32:
                plan.ranges.setdefault(t.name, io.default_range)
    plan.report.ranges = plan.ranges


def float_ops(plan: Plan) -> None:
    graph, ranges, options = plan.graph, plan.ranges, plan.options
    clamp_additive_masks(graph, ranges)  # attention masks: a floor, not -1e9
    non_finite = non_finite_ops(graph, ranges, plan.report.calibration is not None)
    check_ranges(graph, ranges, set(plan.input_params), non_finite)
    outside, indices = outside_kernels(graph, ranges, plan.qtype), index_arithmetic(graph)
    keep = options.precision.keep_float
    plan.report.kept_float = {
        **dict.fromkeys(indices, "index arithmetic (float values that end as indices)"),
        **dict.fromkeys(outside, "what calibration saw is outside the integer kernel's "
                        "domain (a comparison with a scale >= 1, a divisor near 0)"),
        **dict.fromkeys(non_finite, "NaN / inf, which integers cannot hold"),
        **dict.fromkeys(keep, "--keep-float")}
    plan.cfg = RewriteConfig(plan.qtype, options.precision.per_channel, options.io.io_type,
                             output_type=options.io.output_type,
                             keep_float=frozenset(keep) | non_finite | outside | indices,
                             int16=frozenset(options.precision.int16_ops))


def subgraphs(plan: Plan) -> None:
    graph, report, cfg, io = plan.graph, plan.report, plan.cfg, plan.options.io
    inner = dict(report.calibration.subgraph_ranges) if report.calibration else {}
    if io.default_range is not None:  # the subgraphs' tensors too
        for k, sub in enumerate(all_graphs(graph)[1:], 1):
            given = inner.setdefault(k, {})
            for t in sub.tensors():
                if not t.is_const and t.dtype == np.float32:
                    given.setdefault(t.name, io.default_range)
    elif report.calibration is not None:
        cfg = replace(cfg, keep_float=cfg.keep_float | never_ran(graph, inner))
    for k, sub in enumerate(all_graphs(graph)[1:], 1):
        cfg = replace(cfg, keep_float=cfg.keep_float
                      | outside_kernels(sub, inner.get(k, {}), plan.qtype)
                      | index_arithmetic(sub))
    quantize_with_subgraphs(graph, plan.ranges, inner, cfg, plan.input_params)
    plan.done = True


def sequence(plan: Plan) -> None:
    """An int8 sequence model: the classifier head 16x8 (sequence_head.py), each LSTM
    the integer kernel runs measured and written integer or weights-only (lstm_check.py)."""
    precision, cfg = plan.options.precision, plan.cfg
    if precision.sequence_head == "int16":
        cfg = replace(cfg, int16=cfg.int16 | head_ops(plan.graph))

    def quantize_one(q: Graph, weights_only: frozenset[str]) -> None:
        quantize_graph(q, plan.ranges, with_weights_only(cfg, weights_only), plan.input_params)

    names, plan.report.lstms = choose_lstm_forms(
        plan.graph, precision.lstm, keep_float_ops(plan.graph, cfg.keep_float),
        lambda: plan.usable() if plan.has_data else None, quantize_one)
    for lstm in plan.report.lstms:
        plan.options.say(lstm.line())
    plan.cfg = with_weights_only(cfg, names)


def rewrite(plan: Plan) -> None:
    quantize_graph(plan.graph, plan.ranges, plan.cfg, plan.input_params)
    plan.done = True


def measured(plan: Plan) -> None:
    """The rewrite with the tools that measure quantized copies on the calibration data:
    the float-op search (--min-sqnr / --max-accuracy-drop), then AdaRound and bias
    correction on the final copy (and on every copy the search measures)."""
    options, report, cfg = plan.options, plan.report, plan.cfg
    precision, transforms = options.precision, options.transforms
    indexed = usable_indexed(plan.samples(), options.calibration.samples)
    data = [sample for _, sample in indexed]
    float_graph = copy.deepcopy(plan.graph)

    def build(extra: frozenset[str] = frozenset()) -> Graph:
        """A quantized copy of float_graph with `extra` ops also kept float."""
        q = copy.deepcopy(float_graph)
        pairs = list(zip(float_graph.ops, q.ops))
        wide, floats = split_fallback(float_graph, extra, precision.fallback)
        quantize_graph(q, plan.ranges, replace(cfg, keep_float=cfg.keep_float | floats,
                                               int16=cfg.int16 | wide), plan.input_params)
        if transforms.adaround:
            report.adaround = apply_adaround(float_graph, q, pairs, data,
                                             progress_bar=options.progress_bar)
        if transforms.bias_correction:
            report.bias_correction = bias_correct(q, pairs, data)
        return q

    final_keep: frozenset[str] = frozenset()
    kind = plan.goal
    if kind is not None:
        reference = run_all(export_tflite(float_graph), data)
        labels = None
        if kind is GoalKind.MAX_ACCURACY_DROP:
            labels = calibration_labels(precision.labels, [i for i, _ in indexed])
            goal = Goal(kind, precision.max_accuracy_drop, top1(reference, labels))
        else:
            goal = Goal(kind, precision.min_sqnr)

        def evaluate(keep: frozenset[str]) -> Measurement:
            outputs = run_all(export_tflite(build(keep)), data)
            acc = None if labels is None else top1(outputs, labels)
            return Measurement(sqnr(reference, outputs), acc)

        report.selective = search(
            evaluate, candidates(float_graph, keep_float_ops(float_graph, precision.keep_float)),
            goal, float_graph, precision.fallback)
        final_keep = frozenset(report.selective.kept)
        options.say(report.selective.summary())
    final = build(final_keep)
    for done in (report.adaround, report.bias_correction):
        if done is not None:
            options.say(done.summary())
    plan.graph.__dict__.update(final.__dict__)   # the caller's graph becomes the quantized one
    plan.done = True


CHECK = Step("check", check)
QUANTIZE = (   # what follows the check (and auto.py's held-out choice, which runs these)
    Step("weights_only", weights_only, lambda p: p.options.mode not in FULL_INTEGER),
    Step("check_data", check_data),
    Step("equalize", equalize_step, lambda p: p.options.transforms.equalize),
    Step("calibrate", calibrate),
    Step("given_ranges", given_ranges),
    Step("float_ops", float_ops),
    Step("subgraphs", subgraphs, lambda p: p.loops),
    Step("sequence", sequence, lambda p: p.qtype is QType.INT8),
    Step("rewrite", rewrite, lambda p: not p.needs_data),
    Step("measured", measured),
)


def run(plan: Plan, steps: tuple[Step, ...]) -> QuantizeReport:
    """Run `steps` in order on `plan` until one finishes it; the report names the steps
    run."""
    for step in steps:
        if plan.done:
            break
        if step.when(plan):
            plan.report.steps.append(step.name)
            step.run(plan)
    return plan.report


def held_out_check(options: QuantizeOptions) -> bool:
    """--calib-method auto, or an explicit transform to verify on held-out samples (auto.py)."""
    t = options.transforms
    if options.mode not in FULL_INTEGER:
        return False
    return t.auto or (not t.force and options.calibration.data is not None and bool(t.asked()))
