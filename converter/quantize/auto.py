"""Nothing applied blind: choices checked on calibration samples held out of calibration.

Every calibration method and transform optimises something local (a tensor's range, a
layer's weights or mean error); none is guaranteed to lower the *output* error, and on real
networks some raise it. So the choices are measured where it matters, by cross-validation
on the calibration samples: ``FOLDS`` folds, sample i held out in fold i % FOLDS; a
candidate is quantized once per fold on the other samples and scored on the held-out ones,
so every sample is scored once by a model that did not see it (choice.Score). It is scored
at the logits when the model ends in a softmax / logistic (``scoring_graph`` says why), and
at the outputs too. A candidate replaces the simpler one it is judged against only when it
wins clearly across the folds (choice.judge: a mean gain above MARGIN_DB, on every fold or
above the folds' spread, no worse at the outputs) -- with a few dozen samples smaller or
less steady gains are luck, and the more candidates are tried the likelier one is lucky.

* ``--calib-method auto`` (``QuantizeOptions(auto=True)``) tries the candidates simplest
  first, in tiers; within a tier each is judged against the best so far, and the clear
  winner with the largest mean gain (if any) becomes the best:
  1. the calibration methods of ``METHODS`` against min/max (the baseline);
  2. per tensor, the ranges of the last quantized layers (where real classifiers lose
     most: the global pool and the logits) from each other method;
  3. the transforms, by cost (``TRANSFORM_TIERS``): equalization and bias correction
     (each on top of the best; the other then on top of a winner), then AdaRound (it
     learns every layer's rounding once per fold);
  4. with ``--fallback int16`` (``Fallback.INT16``), last: 16x8 for the ops that gain most
     from it -- each candidate op (selective.candidates, with a 16x8 kernel) is ranked by
     the calibration samples' SQNR with it alone run 16x8, and the top 1, 2, 4, 8, ... are
     tried.
  Each replacement wins clearly over the one before, so the choice is never below min/max
  on the held-out samples. The final model is calibrated on all the samples with it.
* An explicit ``--equalize`` / ``--bias-correction`` / ``--adaround`` is checked the same
  way: leaving it out is tried, and when that wins clearly the transform is reverted with
  a warning, unless ``force_transforms``.

The report (QuantizeReport.auto) lists every candidate with its held-out SQNRs, its gain on
each fold over the candidate it was judged against, their mean and spread, the verdict and
the choice. The folds are scored at once in worker processes, one per core (fold_pool.py);
their sums are added in fold order, so the choice is the same as in one process.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from edgelite.errors import EdgeliteError
from ...interpreter.kernels import OPS
from ...interpreter.kernels.opdef import PROBABILITY_OUTPUT
from edgelite.names import shown
from ..export import export_tflite
from ..ir import Graph
from ..runner import run_all
from .adaround import no_progress_bar
from .calibrate import graph_samples, usable_samples
from .calibrate_methods import collect_methods
from .equalize import channel_maxima, equalize, relu6_layers
from .fold_pool import FoldPool
from .choice import MARGIN_DB, Score, Verdict, db, judge
from .metrics import sqnr
from .observers import CalibConfig, CalibMethod
from .options import QuantizeOptions, TransformOptions
from .pipeline import CHECK, QUANTIZE, Plan, Step, held_out_check, run
from .report import QuantizeReport
from .selective import Fallback

FOLDS = 4               # cross-validation: each sample held out once, in one of 4 folds
MIN_SAMPLES = FOLDS     # one held-out sample per fold at least
LAST_LAYERS = 3         # tensors tried per tensor: the outputs of the last quantized ops
# final ops scored at their input (scoring_graph): those whose output is a probability
# (fixed output parameters 1/256: SOFTMAX, LOGISTIC)
SQUASHING = frozenset(n for n, op in OPS.items() if op.fixed_output is PROBABILITY_OUTPUT)
METHODS = (CalibConfig(CalibMethod.MINMAX), CalibConfig(CalibMethod.PERCENTILE, 99.99),
           CalibConfig(CalibMethod.PERCENTILE, 99.9), CalibConfig(CalibMethod.MSE),
           CalibConfig(CalibMethod.ENTROPY))
TRANSFORMS = TransformOptions.NAMES
TRANSFORM_TIERS = (("equalize", "bias_correction"), ("adaround",))  # by cost, cheapest first


@dataclass(frozen=True)
class Candidate:
    method: CalibConfig
    transforms: frozenset[str] = frozenset()
    ranges: tuple[tuple[str, str], ...] = ()   # (tensor, method) overrides, per tensor
    wide: tuple[str, ...] = ()                 # ops run 16x8 (int16 activations)

    def label(self) -> str:
        parts = [str(self.method), *sorted(t.replace("_", "-") for t in self.transforms)]
        parts += [f"{shown(name, 40)}: {method}" for name, method in self.ranges]
        if self.wide:
            parts.append(f"16x8: {len(self.wide)} op(s)")
        return " + ".join(parts)


@dataclass
class Tried:
    """One candidate of the search: its score and, but for the baseline, the verdict
    against the simpler candidate it was judged against (`against`: its index)."""

    cand: Candidate
    score: Score
    against: int | None = None
    verdict: Verdict | None = None
    note: str = ""                  # a clear winner another one of its tier outgained


@dataclass
class AutoReport:
    samples: int                                # calibration samples, each held out once
    folds: int                                  # cross-validation folds
    scored: str = "outputs"                     # what Score.db measures: "outputs" / "logits"
    tried: list[Tried] = field(default_factory=list)
    chosen: Candidate | None = None
    reverted: list[str] = field(default_factory=list)  # explicit transforms undone

    @property
    def baseline(self) -> Score:
        return self.tried[0].score

    def score_of(self, cand: Candidate) -> Score:
        return next(t.score for t in self.tried if t.cand == cand)

    def index_of(self, cand: Candidate) -> int:
        return next(k for k, t in enumerate(self.tried) if t.cand == cand)

    def table(self) -> str:
        lines = [f"held-out SQNR ({self.samples} calibration samples, {self.folds} folds: each "
                 "sample scored by a model calibrated without it); a candidate replaces the "
                 f"simpler one it is judged against (vs) only if its mean gain at the "
                 f"{self.scored} exceeds {MARGIN_DB} dB and it wins on every fold or its mean "
                 "gain exceeds the folds' spread (std), without losing at the outputs:",
                 f"    # {self.scored:>7s} outputs  vs  {'gain per fold (dB)':<{7 * self.folds}s}"
                 "   mean spread  candidate -- verdict"]
        for k, t in enumerate(self.tried):
            v = t.verdict
            if v is None:
                judged, verdict = f"{'':4s}  {'':<{7 * self.folds}s} {'':6s} {'':6s}", "baseline"
            else:
                judged = (f"{t.against:4d}  {v.gains_text():<{7 * self.folds}s} "
                          f"{v.mean:+6.2f} {v.spread:6.2f}")
                verdict = ("kept: " if v.kept else "not kept: ") + v.reason + (
                    f"; {t.note}" if t.note else "")
            mark = " <- chosen" if t.cand == self.chosen else ""
            lines.append(f"  {k:3d} {t.score.db:7.2f} {t.score.output_db:7.2f} {judged}  "
                         f"{t.cand.label()} -- {verdict}{mark}")
        for name in self.reverted:
            lines.append(f"  warning: --{name.replace('_', '-')} made the held-out error "
                         "worse and was not applied (force it with --force-transforms)")
        return "\n".join(lines)


def folds(samples: list) -> list[tuple[list, list]]:
    """``FOLDS`` (fit, held out) splits: sample i is held out in fold i % FOLDS, so every
    sample is scored once, by a model calibrated without it."""
    if len(samples) < MIN_SAMPLES:
        raise EdgeliteError(f"checking quantization choices holds out calibration samples: "
                            f"give at least {MIN_SAMPLES} (there are {len(samples)})")
    return [([s for i, s in enumerate(samples) if i % FOLDS != f], samples[f::FOLDS])
            for f in range(FOLDS)]


def _calibrate(graph: Graph, samples: list, methods, equalized: bool) -> Mapping:
    """{method: the activation ranges it gives on ``samples``} for each of ``methods``,
    from one calibration (calibrate_methods.py), after equalization if asked (it changes
    the activations' scale)."""
    g = copy.deepcopy(graph)
    if equalized:
        equalize(g, _observed(g, samples))
    activations = {t.name for t in g.tensors() if not t.is_const and t.dtype == np.float32}
    return collect_methods(export_tflite(g), samples, methods, activations)


class _Calibrations:
    """``_calibrate`` on one graph and sample set: every method of ``METHODS`` from one
    calibration, per equalized or not (a method outside them alone); each method's range
    of a tensor is computed when first read (calibrate_methods.Methods)."""

    def __init__(self, graph: Graph, samples: list) -> None:
        self.graph, self.samples = graph, samples
        self._found: dict[tuple[tuple, bool], Mapping] = {}

    def __call__(self, method: CalibConfig, equalized: bool) -> Mapping:
        methods = METHODS if method in METHODS else (method,)
        key = (methods, equalized)
        if key not in self._found:
            self._found[key] = _calibrate(self.graph, self.samples, methods, equalized)
        return self._found[key][method]


# what scoring a candidate does without: the float-op searches (they run once, on the final
# choice), the user's callbacks and the data source (the folds get their samples)
_UNSCORED = dict(min_sqnr=None, max_accuracy_drop=None, labels=None, log=None,
                 progress=None, progress_bar=None, calib=None)


def scoring_options(options):
    """``options`` as candidates are scored with them (``_UNSCORED``); nothing left that
    does not pickle, so fold_pool sends them to its workers as they are."""
    return replace(options, **_UNSCORED)


def _options_for(options, cand: Candidate, scoring: bool = False):
    """``options`` with the candidate's method and transforms (``scoring``: as
    scoring_options)."""
    flags = {t: t in cand.transforms for t in TRANSFORMS}
    return replace(scoring_options(options) if scoring else options, calib_method=cand.method,
                   auto=False, force_transforms=True,
                   int16_ops=options.precision.int16_ops + cand.wide, **flags)


def _ranges_for(cand: Candidate, calibrated) -> dict:
    """The candidate's ranges: its method's, with its per-tensor overrides
    (``calibrated(method, equalized)`` gives a method's ranges)."""
    eq = "equalize" in cand.transforms
    ranges = dict(calibrated(cand.method, eq))
    for name, method in cand.ranges:
        ranges[name] = calibrated(CalibConfig.parse(method), eq)[name]
    return ranges


def scoring_graph(graph: Graph) -> tuple[Graph, list[int], list[int]]:
    """(graph, scored, outputs): a copy whose outputs are the tensors scored followed by the
    graph's outputs that are not scored; `scored` and `outputs` index both sets in it. An
    output made by a final SOFTMAX / LOGISTIC is scored at its input, the logits: an int8
    softmax's probabilities carry the error of a few uncertain samples (a logit error moves
    p = 0.5 a lot and p = 0.999 not at all), so on a few dozen samples their SQNR ranks
    candidates by luck, while the logits' error is every sample's (fashion_xception, 400
    held-out images: bias correction +0.55 dB at the logits, -0.09 dB at the
    probabilities)."""
    g = copy.deepcopy(graph)
    outputs = list(g.outputs)
    scored = []
    for t in outputs:
        op = g.producer(t)
        squash = op is not None and op.type in SQUASHING and not g.consumers(t)
        scored.append(op.inputs[0] if squash else t)
    scored = list(dict.fromkeys(scored))
    g.outputs = scored + [t for t in outputs if t not in scored]
    return g, list(range(len(scored))), [g.outputs.index(t) for t in outputs]


def _sums(ref: list, out: list, which: list[int]) -> tuple[float, float]:
    """(signal, noise): sums of squares over the outputs `which` of every sample."""
    signal = noise = 0.0
    for r_sample, o_sample in zip(ref, out):
        for i in which:
            r64 = np.asarray(r_sample[i], np.float64)
            signal += float(np.sum(r64 * r64))
            noise += float(np.sum((r64 - np.asarray(o_sample[i], np.float64)) ** 2))
    return signal, noise


class Fold:
    """One fold of the search: copies of the float graph quantized with a candidate on the
    fit samples and scored on the held-out ones (one calibration per method and
    equalization, kept for the whole search); `model`: the graph exported, for the float
    reference outputs."""

    def __init__(self, graph: Graph, model: bytes, options, fit: list, held: list,
                 scored: list[int], outputs: list[int]) -> None:
        self.graph, self.options, self.fit, self.held = graph, options, fit, held
        self.scored, self.outputs = scored, outputs
        self.reference = run_all(model, held)
        self.calibrated = _Calibrations(graph, fit)

    def sums(self, cand: Candidate) -> tuple[float, float, float, float]:
        """(signal, noise) of the candidate at the scored tensors, then at the outputs."""
        q = copy.deepcopy(self.graph)
        quantize_with(q, _options_for(self.options, cand, scoring=True), self.fit,
                      _ranges_for(cand, self.calibrated))
        outputs = run_all(export_tflite(q), self.held)
        return (*_sums(self.reference, outputs, self.scored),
                *_sums(self.reference, outputs, self.outputs))


class _Scorer:
    """Scores candidates on every fold (Fold), the folds in parallel processes where
    there are cores for them (fold_pool.py); a context manager (it ends those processes)."""

    def __init__(self, graph: Graph, options, samples: list, update=None) -> None:
        self.update = update or (lambda n: None)  # one call per candidate scored
        graph, scored, outputs = scoring_graph(graph)
        self.folds = FoldPool(graph, scoring_options(options), folds(samples), scored,
                              outputs, options.calibration.workers)
        self.report = AutoReport(len(samples), FOLDS,
                                 "outputs" if scored == outputs else "logits")

    def __enter__(self) -> "_Scorer":
        return self

    def __exit__(self, *exc) -> None:
        self.folds.close()

    def score(self, cand: Candidate) -> Score:
        signal, noise, out_signal, out_noise = 0.0, [], 0.0, 0.0
        for s, n, out_s, out_n in self.folds.sums(cand):    # added up in fold order
            signal += s
            noise.append(n)
            out_signal += out_s
            out_noise += out_n
        self.update(1)
        return Score(signal, tuple(noise), db(out_signal, out_noise))

    def baseline(self, cand: Candidate) -> Candidate:
        self.report.tried.append(Tried(cand, self.score(cand)))
        return cand

    def tier(self, base: Candidate, cands: list[Candidate]) -> Candidate:
        """Each of `cands` judged against `base` (tried before); the clear winner with the
        largest mean gain, or `base` if none wins clearly."""
        report = self.report
        against = report.index_of(base)
        winners = []
        for cand in cands:
            score = self.score(cand)
            verdict = judge(score, report.tried[against].score)
            report.tried.append(Tried(cand, score, against, verdict))
            if verdict.kept:
                winners.append(report.tried[-1])
        if not winners:
            return base
        top = max(winners, key=lambda t: t.verdict.mean)
        for t in winners:
            if t is not top:
                t.note = f"#{report.index_of(top.cand)} gains more"
        return top.cand


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


def most_candidates(graph: Graph, options) -> int | None:
    """How many candidates choose() scores at most (each tier of transforms may end
    early), or None where the 16x8 step makes it depend on the measurements."""
    if options.precision.fallback is Fallback.INT16:
        return None
    methods = len(METHODS)
    tensors = len(_last_tensors(graph, LAST_LAYERS))
    transforms = sum(len(tier) * (len(tier) + 1) // 2 for tier in TRANSFORM_TIERS)
    return methods + tensors * (methods - 1) + transforms


def choose(graph: Graph, options, samples: list, update=None) -> AutoReport:
    """Try the candidates on held-out samples, simplest first (module doc); the report
    names the choice."""
    with _Scorer(graph, options, samples, update) as scorer:
        return _search(scorer, graph, options, samples)


def _search(scorer: _Scorer, graph: Graph, options, samples: list) -> AutoReport:
    """choose()'s tiers on `scorer`."""
    best = scorer.baseline(Candidate(METHODS[0]))
    best = scorer.tier(best, [Candidate(m) for m in METHODS[1:]])  # 1. the method
    for name in _last_tensors(graph, LAST_LAYERS):                # 2. per tensor
        best = scorer.tier(best, [replace(best, ranges=best.ranges + ((name, str(m)),))
                                  for m in METHODS if m != best.method])
    for tier in TRANSFORM_TIERS:                                  # 3. the transforms
        left = set(tier)
        while left:
            cands = [replace(best, transforms=best.transforms | {t}) for t in sorted(left)]
            chosen = scorer.tier(best, cands)
            if chosen == best:
                break
            left -= chosen.transforms
            best = chosen
    if options.precision.fallback is Fallback.INT16:              # 4. 16x8 for the ops
        base = best                                               #    that gain most
        ranked = _ranked_for_16x8(graph, options, samples, base)
        k = 1
        while k <= len(ranked):
            best = scorer.tier(best, [replace(base, wide=tuple(ranked[:k]))])
            k = k * 2 if k * 2 <= len(ranked) or k == len(ranked) else len(ranked)
    scorer.report.chosen = best
    return scorer.report


def _ranked_for_16x8(graph: Graph, options, samples: list, base: Candidate) -> list[str]:
    """The candidate ops with a 16x8 kernel, best first: by the calibration samples' SQNR
    (at the outputs) with that op alone run 16x8 on top of ``base``."""
    from .rules import INT16_OPS
    from .selective import candidates
    names = [n for n in candidates(graph, set())
             if next(op for op in graph.ops if op.outputs[0].name == n).type in INT16_OPS]
    reference = run_all(export_tflite(graph), samples)
    ranges = _ranges_for(base, _Calibrations(graph, samples))
    gains = []
    for name in names:
        q = copy.deepcopy(graph)
        quantize_with(q, _options_for(options, replace(base, wide=(name,)), scoring=True),
                      samples, ranges)
        gains.append((sqnr(reference, run_all(export_tflite(q), samples)), name))
    return [name for _, name in sorted(gains, key=lambda g: -g[0])]


def check_transforms(graph: Graph, options, samples: list, update=None) -> AutoReport:
    """Explicit --equalize / --bias-correction / --adaround, each measured against leaving
    it out: reverted only when leaving it out wins clearly (choice.judge)."""
    asked = options.transforms.asked()
    with _Scorer(graph, options, samples, update) as scorer:
        chosen = scorer.baseline(Candidate(options.calibration.method, asked))
        for transform in sorted(asked):
            without = replace(chosen, transforms=chosen.transforms - {transform})
            if scorer.tier(chosen, [without]) == without:
                chosen = without
                scorer.report.reverted.append(transform)
    scorer.report.chosen = chosen
    return scorer.report


def quantize_with(graph: Graph, options: QuantizeOptions, samples: list,
                  ranges: dict | None) -> QuantizeReport:
    """The pipeline's steps on `samples` in memory, with `ranges` measured already (None:
    calibrate), without a held-out check of its own."""
    return run(Plan(graph, options, QuantizeReport(options.mode), samples, ranges),
               (CHECK, *QUANTIZE))


def quantize_checked(graph: Graph, options: QuantizeOptions) -> QuantizeReport:
    """quantize() with its choices checked on held-out samples (auto, or explicit
    transforms not forced): choose, then quantize on all the samples with the choice."""
    c = options.calibration
    if c.data is None:
        raise EdgeliteError("--calib-method auto holds out calibration samples to choose the "
                            "method: give --calib DATA")
    samples = usable_samples(graph_samples(c.data, graph, c.preprocess), c.samples)
    auto = options.transforms.auto
    total = most_candidates(graph, options) if auto else 1 + len(options.transforms.asked())
    bar = options.progress_bar or no_progress_bar
    with bar("auto: candidates" if auto else "checking transforms", total) as update:
        report = (choose if auto else check_transforms)(copy.deepcopy(graph), options,
                                                        samples, update)
    chosen = report.chosen
    ranges = None
    if chosen.ranges:  # per-tensor overrides: each method calibrated on all the samples
        ranges = _ranges_for(chosen, _Calibrations(graph, samples))
    result = quantize_with(graph, _options_for(options, chosen), samples, ranges)
    result.auto = report
    options.say(report.table())
    return result


def held_out(plan: Plan) -> None:
    """The pipeline's held-out step: choose, quantize with the choice; done."""
    report = quantize_checked(plan.graph, plan.options)
    report.steps[:0] = plan.report.steps
    plan.report, plan.done = report, True


HELD_OUT = Step("held_out", held_out,
                lambda plan: plan.given_samples is None and held_out_check(plan.options))
