"""Compare a quantized model with its float reference, tensor by tensor.

Both models run on the same samples (batch 1 each) with every tensor kept. Tensors are matched
by name: quantized tensors keep the float tensor's GraphDef node name; tensors added at a
quantization boundary are "<name>_int8" / "_uint8" / "_int16" / "_float", and TFLite's
converter joins fused names with ";" -- both are reduced to the base name when matching.
When several quantized tensors share a base name, an integer (quantized) one is preferred
(e.g. "probs_int8" over the dequantized output "probs": same values, and it has a scale).
Constants are ignored. For each matched tensor the report gives SQNR, cosine similarity, max
error in quantization steps and mean error (bias), all against the float model, the quantized
model's op that wrote it, and the op SQNR: the error that op adds by itself (local.py).

`worst()` ranks tensors by op SQNR, lowest first, because the cumulative SQNR of everything
downstream of a bad layer is as low or lower than the bad layer's own (later layers amplify
the noise), while the op SQNR drops only where precision is lost. `worst(by="sqnr")` ranks by
the cumulative SQNR, `by="graph"` keeps graph order.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from ...interpreter import blas, native
from ..files import shown_path
from ..runner import ModelRunner
from ..sample_data import names_list
from .advice import Advice, ModelFacts, advise, range_stats
from .classification import precision
from .op_replay import OneOp, one_op_models
from .report import compare_table, compare_to_dict
from .metrics import TensorStats, dequantized, top_k_hits
from ..shards.execute import map_shards
from ..shards.source import PIECE_SAMPLES, shards_of
from .sources import DataSource, LoadedModel, ModelSource, load_model, sample_at

_BOUNDARY = re.compile(r"_(int8|uint8|int16|float)$")


def base_name(name: str) -> str:
    """The GraphDef node name a tensor stands for (see module doc)."""
    return _BOUNDARY.sub("", name.split(";")[0])


@dataclass
class TensorReport:
    name: str                   # the reference tensor's name
    quant_name: str             # the matched tensor of the quantized model
    op: str                     # op type that writes it in the quantized model ("" = input)
    op_index: int               # that op's index (-1 for a graph input)
    dtype: str                  # the quantized model's dtype for it
    scale: float | None         # its per-tensor scale (None: float or per-channel)
    sqnr_db: float
    cosine: float
    max_abs_error: float        # in real units
    max_error_lsb: float | None  # in quantization steps (None for a float tensor)
    mean_error: float           # mean of (quantized - reference): the bias
    op_sqnr_db: float | None = None  # error the op adds alone (None: not measured)
    order: int = 0              # position in graph order
    advice: Advice | None = None  # what to do about it (advice.py)


@dataclass
class OutputReport:
    name: str
    sqnr_db: float
    cosine: float
    top1_agreement: float | None  # None unless the output is a score vector (last dim > 1)


@dataclass
class CompareReport:
    reference: str
    quantized: str
    samples: int
    tensors: list[TensorReport]            # graph order
    outputs: list[OutputReport]
    output_sqnr_db: float                  # over all outputs together
    unmatched: list[str] = field(default_factory=list)  # reference tensors not found

    @property
    def top1_agreement(self) -> float | None:
        return next((o.top1_agreement for o in self.outputs
                     if o.top1_agreement is not None), None)

    def worst(self, top: int | None = None, by: str = "op") -> list[TensorReport]:
        """Tensors worst first (see module doc): by "op" SQNR (the cumulative SQNR where the
        op SQNR was not measured), by cumulative "sqnr", or in "graph" order; ties in graph
        order."""
        if by not in SORT_KEYS:
            raise EdgeliteError(f"sort by one of {', '.join(SORT_KEYS)}, not {quoted(by)}")
        if by == "graph":
            ranked = sorted(self.tensors, key=lambda t: t.order)
        else:
            ranked = sorted(self.tensors, key=lambda t: (_db_key(
                t.op_sqnr_db if by == "op" and t.op_sqnr_db is not None else t.sqnr_db),
                t.order))
        return ranked if top is None else ranked[:top]

    def culprit(self) -> TensorReport | None:
        """The tensor whose op loses the most precision (worst()[0])."""
        return next(iter(self.worst(1)), None)

    def to_dict(self, top: int | None = None, by: str = "op") -> dict:
        return compare_to_dict(self, top, by)

    def table(self, top: int | None = None, by: str = "op") -> str:
        return compare_table(self, top, by)


SORT_KEYS = ("op", "sqnr", "graph")


def _db_key(db: float) -> float:
    return -math.inf if math.isnan(db) else db


@dataclass
class _Pair:
    ref_index: int
    quant_index: int
    stats: TensorStats
    report: TensorReport
    local: TensorStats | None = None


class Setup:
    """What measuring a pair of models needs, built the same way in every process: the
    matched tensor pairs, the one-op replays and which tensors have range statistics."""

    def __init__(self, ref: ModelRunner, quant: ModelRunner, ref_content: bytes) -> None:
        self.ref, self.quant = ref, quant
        self.pairs, self.unmatched = _match(ref, quant)
        self.replay, self.local_pairs = _replay(ref, ref_content, self.pairs)
        sg = quant.interp.model.subgraphs[0]
        self.ranged = [range_stats(sg.tensors[p.quant_index]) is not None for p in self.pairs]
        self.float_match = {p.ref_index: p.quant_index for p in self.pairs}
        self.scored = [d["shape"].size > 0 and int(d["shape"][-1]) > 1 for d in ref.outputs]
        self.position = {id(p): k for k, p in enumerate(self.pairs)}
        # (scale, zero point) where the quantized tensor is read as stored integers
        self.quant_params = [_per_tensor(sg.tensors[p.quant_index]) for p in self.pairs]
        self.quant_index_params = {p.quant_index: q for p, q in zip(self.pairs,
                                                                     self.quant_params)
                                   if q is not None}

    def tally(self) -> "Tally":
        """Empty statistics for a pass over some samples."""
        sg = self.quant.interp.model.subgraphs[0]
        outs = len(self.ref.outputs)
        return Tally(0, [TensorStats(p.stats.scale) for p in self.pairs],
                     [TensorStats(p.stats.scale) if p.local is not None else None
                      for p in self.pairs],
                     [range_stats(sg.tensors[p.quant_index]) for p in self.pairs],
                     [TensorStats() for _ in range(outs)], [0] * outs, [0] * outs)

    def measure(self, arrays: dict, labels: tuple[str, str]) -> "Tally":
        """The statistics of every sample of {ref input name: array}: each sample's tensors
        are read once and folded into running sums (nothing per sample is kept)."""
        ref, quant, t = self.ref, self.quant, self.tally()
        quant_arrays = {q: arrays[r] for r in ref.input_names for q in quant.input_names
                        if base_name(q) == base_name(r)}
        t.samples = len(next(iter(arrays.values())))
        # the runners' interpreters run BLAS on one thread (Settings.blas_threads); entered
        # once here, each invoke (~70 per sample with the op replays) skips setting it
        with blas.threads(1):
            for i in range(t.samples):
                ref_outs = ref.run(sample_at(arrays, i))
                quant_outs = quant.run(sample_at(quant_arrays, i))
                self._tensors(t)
                self._outputs(t, ref_outs, quant_outs, labels)
        return t

    def _tensors(self, t: "Tally") -> None:
        """Fold the tensors of the sample both models just ran into `t`."""
        ref, quant, fast = self.ref, self.quant, native.choose(None)
        refs = {p.ref_index: ref.stored(p.ref_index) for p in self.pairs}
        stored = {p.quant_index: quant.stored(p.quant_index) for p in self.pairs}
        deq: dict[int, np.ndarray] = {}

        def real(q: int) -> np.ndarray:   # the quantized model's value, dequantized once
            if q not in deq:
                params = self.quant_index_params.get(q)
                deq[q] = quant.interp.get_dequantized_tensor(q) if params is None else \
                    dequantized(stored[q], params, fast)
            return deq[q]

        for k, p in enumerate(self.pairs):
            q = self.quant_params[k]
            test = stored[p.quant_index] if q is not None else real(p.quant_index)
            r = refs[p.ref_index]
            sums = t.stats[k].update(r, test, q, fast)
            if t.ranges[k] is not None:
                t.ranges[k].update(r, sums[0], fast)
        for k, one in self.replay.items():
            one.run({x: real(self.float_match[x]) if x in self.float_match else
                     refs[x] if x in refs else ref.stored(x) for x in one.inputs})
            for p in self.local_pairs[k]:
                j = self.position[id(p)]
                q = self.quant_params[j]
                t.local[j].update(one.output(p.ref_index),
                                  stored[p.quant_index] if q is not None else real(p.quant_index),
                                  q, fast)

    def _outputs(self, t: "Tally", ref_outs, quant_outs, labels: tuple[str, str]) -> None:
        for k, (r, q) in enumerate(zip(ref_outs, quant_outs)):
            if r.size != q.size:
                raise EdgeliteError(f"output {k} has {r.size} values in "
                                    f"{shown_path(labels[0])} but {q.size} in "
                                    f"{shown_path(labels[1])}")
            t.outputs[k].update(r, q)
            if self.scored[k]:
                r2, q2 = r.reshape(-1, r.shape[-1]), q.reshape(-1, r.shape[-1])
                t.agree[k] += int(top_k_hits(q2, r2.argmax(axis=1), 1).sum())
                t.rows[k] += len(r2)


@dataclass
class Tally:
    """compare's statistics over some samples (one shard, or several merged): exact sums,
    counts and maxima, so merging in any order gives the same bits."""
    samples: int
    stats: list[TensorStats]
    local: list[TensorStats | None]
    ranges: list
    outputs: list[TensorStats]
    agree: list[int]
    rows: list[int]

    def merge(self, other: "Tally") -> None:
        self.samples += other.samples
        for mine, theirs in zip([*self.stats, *self.local, *self.ranges, *self.outputs],
                                [*other.stats, *other.local, *other.ranges, *other.outputs]):
            if mine is not None:
                mine.merge(theirs)
        self.agree = [a + b for a, b in zip(self.agree, other.agree)]
        self.rows = [a + b for a, b in zip(self.rows, other.rows)]


def compare(reference: ModelSource, quantized: ModelSource, data: DataSource,
            samples: int | None = None, inputs=None, outputs=None, input_shapes=None,
            progress: Callable[[int], None] | None = None, workers: int | None = None,
            ray: str | None = None, shard_samples: int = PIECE_SAMPLES) -> CompareReport:
    """Run `reference` (a float .tflite, or a .pb/.pbtxt converted to float with `inputs` /
    `outputs` / `input_shapes`) and `quantized` on the first `samples` samples of `data` and
    measure every matched tensor (see module doc).

    `data` is anything shards.shards_of takes (a file, a folder of shards, arrays, an
    iterable of batches); statistics are taken per shard and merged exactly, so `workers`
    (a process pool) and `ray` ("local" or a cluster address) give the same report.
    `progress` is called with the number of samples each finished shard held."""
    from .compare_job import CompareJob
    ref_model = reference if isinstance(reference, LoadedModel) else load_model(
        reference, None, inputs, outputs, input_shapes)
    quant_model = quantized if isinstance(quantized, LoadedModel) else load_model(quantized)
    ref, quant = ref_model.runner(keep_all=True), quant_model.runner(keep_all=True)
    kind = precision(ref)
    if kind in ("int8", "uint8", "int16"):
        article = "a" if kind == "uint8" else "an"
        raise EdgeliteError(f"the reference {shown_path(ref_model.label)} is {article} {kind} "
                            "model; give the float model (.tflite or the original .pb/.pbtxt) "
                            "as REF")
    if sorted(map(base_name, ref.input_names)) != sorted(map(base_name, quant.input_names)):
        raise EdgeliteError(f"the models have different inputs: "
                            f"{shown_path(ref_model.label)} has {names_list(ref.input_names)}, "
                            f"{shown_path(quant_model.label)} has "
                            f"{names_list(quant.input_names)}")
    if samples is not None and samples < 1:
        raise EdgeliteError(f"samples must be >= 1, got {samples}")
    if len(ref.outputs) != len(quant.outputs):
        raise EdgeliteError(f"{shown_path(ref_model.label)} has {len(ref.outputs)} output(s), "
                            f"{shown_path(quant_model.label)} has {len(quant.outputs)}")
    setup = Setup(ref, quant, ref_model.content)
    job = CompareJob(ref_model, quant_model)
    job.install(setup)  # this process measures with the runners built here
    total = setup.tally()
    for part in map_shards(job, shards_of(data, None, shard_samples, samples), workers, ray,
                           progress):
        total.merge(part)
    if total.samples == 0:
        raise EdgeliteError("the data holds no samples")
    return _report(setup, total, ref_model.label, quant_model.label)


def _report(setup: Setup, total: Tally, ref_label: str, quant_label: str) -> CompareReport:
    ref, quant = setup.ref, setup.quant
    tensors, input_indices = [], {int(d["index"]) for d in ref.inputs}
    ranges = {}
    for k, p in enumerate(setup.pairs):
        s, t = total.stats[k], p.report
        t.sqnr_db, t.cosine, t.mean_error = s.sqnr_db, s.cosine, s.mean_error
        t.max_abs_error, t.max_error_lsb = s.max_abs, s.max_error_lsb
        if total.local[k] is not None:
            t.op_sqnr_db = total.local[k].sqnr_db
        elif p.ref_index in input_indices:
            t.op_sqnr_db = s.sqnr_db   # the input's own quantization is all its error
        tensors.append(t)
        ranges[p.quant_index] = total.ranges[k]
    quant_sg = quant.interp.model.subgraphs[0]
    facts = ModelFacts(quant_sg, {p.quant_index: p.report for p in setup.pairs})
    for p in setup.pairs:
        p.report.advice = advise(p.report, ranges[p.quant_index], facts)
    all_outputs = TensorStats()
    for s in total.outputs:
        all_outputs.merge(s)
    scored = setup.scored
    out_reports = [OutputReport(d["name"], s.sqnr_db, s.cosine,
                                total.agree[k] / total.rows[k]
                                if scored[k] and total.rows[k] else None)
                   for k, (d, s) in enumerate(zip(ref.outputs, total.outputs))]
    return CompareReport(ref_label, quant_label, total.samples, tensors, out_reports,
                         all_outputs.sqnr_db, setup.unmatched)


def _candidates(runner: ModelRunner, quantized: bool) -> dict[str, list[dict]]:
    """Non-constant tensors by base name: float ones, plus (for the quantized model)
    integer tensors that have quantization parameters."""
    sg = runner.interp.model.subgraphs[0]
    out: dict[str, list[dict]] = {}
    for d in runner.interp.get_tensor_details():
        t = sg.tensors[d["index"]]
        if t.is_constant or t.dtype is None:
            continue
        is_float = t.dtype.kind == "f"
        is_quant = (quantized and t.dtype.kind in "iu" and t.quantization is not None
                    and t.quantization.scale.size > 0)
        if is_float or is_quant:
            out.setdefault(base_name(d["name"]), []).append(d)
    return out


def _match(ref: ModelRunner, quant: ModelRunner) -> tuple[list[_Pair], list[str]]:
    producers = {}
    for op in quant.interp._get_ops_details():
        for t in op["outputs"]:
            producers[int(t)] = (op["op_name"], op["index"])
    sg = quant.interp.model.subgraphs[0]
    candidates = _candidates(quant, quantized=True)
    pairs, unmatched = [], []
    for key, ref_list in _candidates(ref, quantized=False).items():
        for rd in ref_list:
            options = [qd for qd in candidates.get(key, [])
                       if int(np.prod(qd["shape"])) == int(np.prod(rd["shape"]))]
            if not options:
                unmatched.append(rd["name"])
                continue
            qd = min(options, key=lambda d: (np.dtype(d["dtype"]).kind == "f",
                                             d["name"] != rd["name"], d["index"]))
            q = sg.tensors[qd["index"]].quantization
            scale = None
            if np.dtype(qd["dtype"]).kind in "iu" and (
                    q.scale.size == 1 or list(qd["shape"]) == list(rd["shape"])):
                scale = _scale_array(q, tuple(int(s) for s in qd["shape"]))
            op, op_index = producers.get(qd["index"], ("", -1))
            per_tensor = float(q.scale[0]) if scale is not None and q.scale.size == 1 else None
            report = TensorReport(rd["name"], qd["name"], op, op_index,
                                  np.dtype(qd["dtype"]).name, per_tensor, math.nan, math.nan,
                                  math.nan, None, math.nan)
            pairs.append(_Pair(rd["index"], qd["index"], TensorStats(scale), report))
    pairs.sort(key=lambda p: (p.report.op_index, p.quant_index))
    for k, p in enumerate(pairs):
        p.report.order = k
    return pairs, unmatched


def _replay(ref: ModelRunner, content: bytes,
            pairs: list[_Pair]) -> tuple[dict[int, OneOp], dict[int, list]]:
    """One-op models of the reference ops that write matched tensors, and the pairs each
    one measures (their `local` stats are set up here)."""
    producer = {int(t): op["index"] for op in ref.interp._get_ops_details()
                for t in op["outputs"]}
    wanted = {producer[p.ref_index] for p in pairs if p.ref_index in producer}
    shapes = {d["index"]: tuple(int(x) for x in d["shape"])
              for d in ref.interp.get_tensor_details()}
    replay = one_op_models(content, wanted, shapes)
    local_pairs: dict[int, list[_Pair]] = {k: [] for k in replay}
    for p in pairs:
        k = producer.get(p.ref_index)
        if k in replay:
            p.local = TensorStats(p.stats.scale)
            local_pairs[k].append(p)
    return replay, local_pairs


def _per_tensor(tensor) -> tuple[float, int] | None:
    """(scale, zero point) of a per-tensor quantized int8 / uint8 / int16 tensor, else None
    (float tensors and per-channel ones are read dequantized)."""
    q = tensor.quantization
    if tensor.dtype is None or tensor.dtype.name not in ("int8", "uint8", "int16") or \
            q is None or q.scale.size != 1:
        return None
    return float(q.scale[0]), int(q.zero_point[0]) if q.zero_point.size else 0


def _scale_array(q, shape: tuple[int, ...]) -> np.ndarray | float:
    if q.scale.size == 1:
        return float(q.scale[0])
    broadcast = [1] * len(shape)
    broadcast[q.quantized_dimension] = -1
    return np.asarray(q.scale, np.float64).reshape(broadcast)
