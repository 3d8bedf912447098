"""Which sequence LSTMs keep their signal as TFLite's integer LSTM: measured, per LSTM.

TFLite's integer LSTM (quantize/lstm.py; LiteRT's and TFLite Micro's kernels) computes each
gate's input term W x + b into an int16 at 2^-12 (Q3.12) and saturates it there, at +-8,
before the recurrent term R h is added (LiteRT: MatrixBatchVectorMultiplyAccumulate into a
zeroed gate, lstm_eval.cc; TFLM: its own FULLY_CONNECTED to int16). Without layer norm the
gate scale is fixed. A trained LSTM whose input term leaves +-8 while R h pulls the sum back
(text_lstm's first layer: |W x + b| up to 23 on its output gate, beyond 8 at 12 % of the
steps) computes a different gate there -- a closed output gate opens, a cell state that
should drift negative stays positive -- and no choice of the other parameters (cell scale,
cell clip, the state's scale) changes that: the layer stays near 30 dB where rounding alone
allows 40.

So each LSTM the integer kernel can run (lstm.fits) is measured on the calibration samples
before the rewrite, in graph order: the model quantized as it will be written up to that
LSTM (the LSTMs before it in their chosen forms) against the float model, SQNR over the
LSTM's output, in both forms: TFLite's integer LSTM, and float arithmetic with its eight
weight matrices stored int8 behind DEQUANTIZE ("weights-only": symmetric, one scale per
matrix, the integer LSTM's own integers), which LiteRT and TFLite Micro both run. It is
written weights-only where the integer LSTM is below ``MIN_SQNR`` and weights-only is better
by more than ``MARGIN_DB`` (an LSTM whose int8 weights, or whose input, lose the signal
stays integer); else integer. ``LstmForm`` overrides the choice.

What weights-only costs: the file stays int8-sized (the biases and states float32), but the
LSTM is float arithmetic -- LiteRT, TFLite Micro and edgelite agree on it to float32
rounding, not bit for bit (an int8 value requantized after it may move one step), and
TFLite Micro dequantizes the weights into its arena at every invoke (LiteRT once).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from edgelite.names import quoted
from ..export import export_tflite
from ..ir import Graph, Op
from ..runner import ModelRunner
from .lstm import WEIGHTS, BIASES, fits
from .metrics import sqnr
from .rules import RECURRENT

# An integer LSTM below this SQNR on the calibration data may go weights-only. Measured on
# the sample models' calibration data: integer LSTMs that work reach 37.9-42.2 dB (rnn_lstm,
# both of rnn_bilstm, rnn_tf1_dynamic_rnn, license_lstm, text_lstm's second layer; 2.1-7.2
# dB below weights-only), text_lstm's first layer 29.9 dB (weights-only 41.7 dB).
MIN_SQNR = 35.0
MARGIN_DB = 3.0     # ... and weights-only must beat it by more than this
GATE_LIMIT = 8.0    # Q3.12: what the kernels' int16 gate terms hold
SAMPLES = 128       # calibration samples measured at most (two model runs per LSTM each)


class LstmForm(Enum):
    """How --quantize int8 writes a sequence LSTM the integer kernel can run."""
    AUTO = "auto"                  # integer where it keeps MIN_SQNR, else weights-only
    INTEGER = "integer"            # TFLite's integer LSTM always (TensorFlow's choice)
    WEIGHTS_ONLY = "weights-only"  # float arithmetic, int8 weights behind DEQUANTIZE


@dataclass(frozen=True)
class LstmCheck:
    name: str           # the LSTM's output tensor (a --keep-float pattern)
    node: str           # the TF node it came from (what the log names)
    sqnr: float         # integer LSTM vs float on the calibration samples, dB
    weights_only: float  # the same, weights-only
    gate_peak: float    # max |W x + b| over the gates and samples
    integer: bool       # written as the integer LSTM

    def line(self) -> str:
        form = "integer" if self.integer else "float, weights int8 (weights-only)"
        why = ""
        if not self.integer and self.gate_peak > GATE_LIMIT:
            why = (f"; its input-to-gate sums reach {self.gate_peak:.1f}, the integer "
                   f"kernel holds +-{GATE_LIMIT:g}")
        return (f"LSTM {quoted(self.node or self.name)}: integer {self.sqnr:.1f} dB, "
                f"weights-only {self.weights_only:.1f} dB on the calibration data (floor "
                f"{MIN_SQNR:g}) -> {form}{why}")


def candidates(graph: Graph, kept: set[int]) -> list[Op]:
    """The LSTMs the integer kernel could run (not kept float by the user)."""
    return [op for op in graph.ops if op.type in RECURRENT and fits(op) and id(op) not in kept]


def _gate_peak(op: Op, x: list[np.ndarray]) -> float:
    """max |W_g x + b_g| over the gates, steps and samples."""
    w = np.concatenate([op.inputs[i].data for i in WEIGHTS[:4]]).astype(np.float64)
    b = np.concatenate([op.inputs[i].data for i in BIASES]).astype(np.float64)
    xs = np.concatenate([a.reshape(-1, w.shape[1]) for a in x]).astype(np.float64)
    return float(np.abs(xs @ w.T + b).max()) if xs.size else 0.0


def _measure(graph: Graph, name: str, samples: list, ref: list) -> float:
    runner = ModelRunner(export_tflite(graph), keep_all=True, label="the quantized LSTM")
    got = []
    for sample in samples:
        runner.run(sample)
        got.append(runner.tensor(name).astype(np.float64))
    return sqnr(ref, got)


def check(graph: Graph, lstms: list[Op], samples: list, quantize_one) -> list[LstmCheck]:
    """Measure each of ``lstms`` (ops of ``graph``, in order) on ``samples``;
    ``quantize_one(copy, weights_only)`` quantizes a copy of the graph with the LSTMs named
    ``weights_only`` written weights-only."""
    runner = ModelRunner(export_tflite(graph), keep_all=True, label="the float model")
    ref = {op.outputs[0].name: [] for op in lstms}
    seen = {op.inputs[0].name: [] for op in lstms}
    for sample in samples:
        runner.run(sample)
        for name, values in (*ref.items(), *seen.items()):
            values.append(runner.tensor(name).astype(np.float64))
    out: list[LstmCheck] = []
    chosen: frozenset[str] = frozenset()   # the LSTMs before, written weights-only
    for op in lstms:
        name = op.outputs[0].name
        db = {}
        for form, weights_only in (("integer", chosen), ("weights-only", chosen | {name})):
            q = copy.deepcopy(graph)
            quantize_one(q, weights_only)
            db[form] = _measure(q, name, samples, ref[name])
        keep = db["integer"] >= MIN_SQNR or db["weights-only"] <= db["integer"] + MARGIN_DB
        out.append(LstmCheck(name, op.name, db["integer"], db["weights-only"],
                             _gate_peak(op, seen[op.inputs[0].name]), keep))
        if not keep:
            chosen |= {name}
    return out


def choose(graph: Graph, form: LstmForm, kept: set[int], samples,
           quantize_one) -> tuple[frozenset[str], list[LstmCheck]]:
    """(output names of the LSTMs to write weights-only, the measurements); ``samples()``
    gives the calibration samples (None without calibration data)."""
    lstms = candidates(graph, kept)
    if not lstms or form is LstmForm.INTEGER:
        return frozenset(), []
    if form is LstmForm.WEIGHTS_ONLY:
        return frozenset(op.outputs[0].name for op in lstms), []
    samples = (samples() or [])[:SAMPLES]
    if not samples:   # nothing to measure on: TFLite's integer LSTM, as TensorFlow writes it
        return frozenset(), []
    checks = check(graph, lstms, samples, quantize_one)
    return frozenset(c.name for c in checks if not c.integer), checks


def with_weights_only(cfg, names: frozenset[str]):
    """RewriteConfig ``cfg`` with the LSTMs ``names`` float and their weights int8."""
    return replace(cfg, keep_float=cfg.keep_float | names,
                   int8_weights=cfg.int8_weights | names)
