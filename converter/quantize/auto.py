"""Nothing applied blind: choices checked on calibration samples held out of calibration.

Every calibration method and transform optimises something local (a tensor's range, a
layer's weights or mean error); none is guaranteed to lower the *output* error, and on real
networks some raise it. So the choices are measured where it matters:

* ``--calib-method auto`` (``QuantizeOptions(auto=True)``) holds out every
  ``HOLD_OUT_EVERY``-th calibration sample, quantizes with the other samples, and scores
  each candidate by its output SQNR against the float model on the held-out ones:
  1. each calibration method of ``METHODS`` (min/max first: the baseline);
  2. then, greedily, each transform (``TRANSFORMS``: equalization, bias correction, and
     AdaRound where the converter has it) on top of the best so far, kept if it scores
     higher;
  3. then, where it pays, per tensor: the ranges of the last quantized layers (where real
     classifiers lose most: the global pool and the logits) are tried from each method in
     turn, each kept if it scores higher.
  A candidate is kept only when it beats the best so far, and min/max is the first, so the
  choice is never below min/max on the held-out samples. The final model is calibrated on
  all the samples with the chosen settings (the held-out ones included).
* An explicit ``--equalize`` / ``--bias-correction`` is checked the same way: with and
  without it on the held-out samples; when it makes the output error worse it is reverted
  with a warning, unless ``force_transforms``.

The report (QuantizeReport.auto) lists every candidate with its held-out SQNR and the choice.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from ...interpreter.errors import EdgeliteError
from ...interpreter.names import shown
from ..export import export_tflite
from ..ir import Graph
from ..runner import run_all
from .calibrate import collect_ranges, load_samples, usable_samples
from .equalize import channel_maxima, equalize, relu6_layers
from .metrics import sqnr
from .observers import CalibConfig, CalibMethod

HOLD_OUT_EVERY = 4      # every 4th calibration sample is held out
MIN_SAMPLES = 4         # below this there is nothing to hold out
LAST_LAYERS = 3         # tensors tried per tensor: the outputs of the last quantized ops
METHODS = (CalibConfig(CalibMethod.MINMAX), CalibConfig(CalibMethod.PERCENTILE, 99.99),
           CalibConfig(CalibMethod.PERCENTILE, 99.9), CalibConfig(CalibMethod.MSE),
           CalibConfig(CalibMethod.ENTROPY))
TRANSFORMS = ("equalize", "bias_correction", "adaround")  # QuantizeOptions flags, if present


@dataclass(frozen=True)
class Candidate:
    method: CalibConfig
    transforms: frozenset[str] = frozenset()
    ranges: tuple[tuple[str, str], ...] = ()   # (tensor, method) overrides, per tensor

    def label(self) -> str:
        parts = [str(self.method), *sorted(t.replace("_", "-") for t in self.transforms)]
        parts += [f"{shown(name, 40)}: {method}" for name, method in self.ranges]
        return " + ".join(parts)


@dataclass
class AutoReport:
    fit: int                                    # samples calibrated on while choosing
    held_out: int                               # samples scored on
    tried: list[tuple[Candidate, float]] = field(default_factory=list)  # held-out SQNR dB
    chosen: Candidate | None = None
    reverted: list[str] = field(default_factory=list)  # explicit transforms undone

    @property
    def baseline(self) -> float:
        return self.tried[0][1]

    def table(self) -> str:
        lines = [f"held-out output SQNR ({self.held_out} of {self.fit + self.held_out} "
                 "calibration samples held out):"]
        for cand, score in self.tried:
            mark = " <- chosen" if cand == self.chosen else ""
            lines.append(f"  {score:8.2f} dB  {cand.label()}{mark}")
        for name in self.reverted:
            lines.append(f"  warning: --{name.replace('_', '-')} made the held-out output "
                         "error worse and was not applied (force it with --force-transforms)")
        return "\n".join(lines)


def split(samples: list) -> tuple[list, list]:
    """(fit, held out): every HOLD_OUT_EVERY-th sample is held out."""
    if len(samples) < MIN_SAMPLES:
        raise EdgeliteError(f"checking quantization choices holds out calibration samples: "
                            f"give at least {MIN_SAMPLES} (there are {len(samples)})")
    held = samples[HOLD_OUT_EVERY - 1::HOLD_OUT_EVERY]
    fit = [s for i, s in enumerate(samples) if i % HOLD_OUT_EVERY != HOLD_OUT_EVERY - 1]
    return fit, held


def _calibrate(graph: Graph, samples: list, method: CalibConfig, equalized: bool) -> dict:
    """The activation ranges ``method`` gives on ``samples`` (after equalization if asked:
    it changes the activations' scale)."""
    g = copy.deepcopy(graph)
    if equalized:
        equalize(g, _observed(g, samples))
    activations = {t.name for t in g.tensors() if not t.is_const and t.dtype == np.float32}
    return collect_ranges(export_tflite(g), samples, None, None, method, activations).ranges


def _options_for(options, cand: Candidate, scoring: bool = False):
    """``options`` with the candidate's method and transforms (``scoring``: without the
    float-op searches, which run once, on the final choice)."""
    flags = {t: t in cand.transforms for t in _transforms(options)}
    quiet = dict(min_sqnr=None, max_accuracy_drop=None, labels=None, log=None,
                 progress=None) if scoring else {}
    return replace(options, calib_method=cand.method, auto=False, force_transforms=True,
                   **flags, **quiet)


def _ranges_for(cand: Candidate, calibrated) -> dict:
    """The candidate's ranges: its method's, with its per-tensor overrides
    (``calibrated(method, equalized)`` gives a method's ranges)."""
    eq = "equalize" in cand.transforms
    ranges = dict(calibrated(cand.method, eq))
    for name, method in cand.ranges:
        ranges[name] = calibrated(_method(method), eq)[name]
    return ranges


class _Scorer:
    """Quantizes copies of the float graph with candidate settings on the fit samples and
    scores them on the held-out ones (one calibration per method and equalization)."""

    def __init__(self, graph: Graph, options, fit: list, held: list) -> None:
        self.graph, self.options, self.fit, self.held = graph, options, fit, held
        self.reference = run_all(export_tflite(graph), held)
        self._ranges: dict[tuple[CalibConfig, bool], dict] = {}
        self.report = AutoReport(len(fit), len(held))

    def calibrated(self, method: CalibConfig, equalized: bool) -> dict:
        key = (method, equalized)
        if key not in self._ranges:
            self._ranges[key] = _calibrate(self.graph, self.fit, method, equalized)
        return self._ranges[key]

    def score(self, cand: Candidate) -> float:
        from . import quantize
        q = copy.deepcopy(self.graph)
        quantize(q, _options_for(self.options, cand, scoring=True), samples=self.fit,
                 ranges_given=_ranges_for(cand, self.calibrated))
        value = sqnr(self.reference, run_all(export_tflite(q), self.held))
        self.report.tried.append((cand, value))
        return value


def _transforms(options) -> tuple[str, ...]:
    names = {f.name for f in fields(options)}
    return tuple(t for t in TRANSFORMS if t in names)


def _method(text: str) -> CalibConfig:
    return CalibConfig.parse(text)


def _observed(graph: Graph, samples: list):
    layers = relu6_layers(graph)
    return channel_maxima(export_tflite(graph), samples, layers) if layers else None


def _last_tensors(graph: Graph, count: int) -> list[str]:
    """The float outputs of the last ``count`` ops that get their own calibrated range."""
    from .rules import FIXED_OUTPUT, INTEGER_OPS, SAME_AS_INPUT
    names = []
    for op in reversed(list(graph.ops)):
        if op.type in INTEGER_OPS and op.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT:
            names += [t.name for t in op.outputs if t.dtype == np.float32]
        if len(names) >= count:
            break
    return names[:count]


def _better(score: float, best: float) -> bool:
    return score > best + 1e-9 or (math.isinf(score) and not math.isinf(best))


def choose(graph: Graph, options, samples: list) -> AutoReport:
    """Try the candidates on held-out samples (module doc); the report names the choice."""
    fit, held = split(samples)
    scorer = _Scorer(graph, options, fit, held)
    best = Candidate(METHODS[0])
    best_score = scorer.score(best)
    for method in METHODS[1:]:                     # 1. the calibration method
        cand = Candidate(method)
        if _better(score := scorer.score(cand), best_score):
            best, best_score = cand, score
    for transform in _transforms(options):         # 2. the transforms, greedily
        cand = replace(best, transforms=best.transforms | {transform})
        if _better(score := scorer.score(cand), best_score):
            best, best_score = cand, score
    for name in _last_tensors(graph, LAST_LAYERS):  # 3. per tensor, the last layers
        for method in METHODS:
            if method == best.method:
                continue
            cand = replace(best, ranges=best.ranges + ((name, str(method)),))
            if _better(score := scorer.score(cand), best_score):
                best, best_score = cand, score
    scorer.report.chosen = best
    return scorer.report


def check_transforms(graph: Graph, options, samples: list) -> AutoReport:
    """Explicit --equalize / --bias-correction, each measured against leaving it out."""
    fit, held = split(samples)
    scorer = _Scorer(graph, options, fit, held)
    asked = frozenset(t for t in _transforms(options) if getattr(options, t))
    chosen = Candidate(options.calib_method, asked)
    full = scorer.score(chosen)
    for transform in sorted(asked):
        without = replace(chosen, transforms=chosen.transforms - {transform})
        if _better(scorer.score(without), full):
            chosen = without
            full = scorer.report.tried[-1][1]
            scorer.report.reverted.append(transform)
    scorer.report.chosen = chosen
    return scorer.report


def quantize_checked(graph: Graph, options):
    """quantize() with its choices checked on held-out samples (auto, or explicit
    transforms not forced): choose, then quantize on all the samples with the choice."""
    from . import quantize
    if options.calib is None:
        raise EdgeliteError("--calib-method auto holds out calibration samples to choose the "
                            "method: give --calib DATA")
    samples = usable_samples(load_samples(options.calib, [t.name for t in graph.inputs],
                                          options.calib_preprocess), options.calib_samples)
    report = (choose if options.auto else check_transforms)(copy.deepcopy(graph), options,
                                                            samples)
    chosen = report.chosen
    ranges = None
    if chosen.ranges:  # per-tensor overrides: each method calibrated on all the samples
        ranges = _ranges_for(chosen, lambda m, eq: _calibrate(graph, samples, m, eq))
    result = quantize(graph, _options_for(options, chosen), samples=samples,
                      ranges_given=ranges)
    result.auto = report
    (options.log or (lambda line: None))(report.table())
    return result
