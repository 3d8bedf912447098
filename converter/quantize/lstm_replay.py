"""The cell state of every step of a float UNIDIRECTIONAL_SEQUENCE_LSTM, for calibration.

The integer LSTM's cell state scale (quantize/lstm.py) comes from the range of c over every
step of every calibration sample -- what TensorFlow's calibrator records with its logging
LSTM kernel (tools/optimize/calibration/builtin_logging_ops/lstm.cc). The float model only
holds c after the last step (its variable tensor), so calibration replays the cell on the
op's recorded input, from zero state (each sample is an independent sequence):

    z = W x_t + R h + b      i, f, o = sigmoid(z_i, z_f, z_o), g = tanh(z_g)
    c = f * c + i * g        (clipped to +-cell_clip when it is > 0)
    h = o * tanh(c)

in float32, as lstm_eval.cc EvalFloat computes it. Only the form quantize/lstm.py
quantizes is replayed (no peephole, projection, layer norm or CIFG).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...interpreter.loader.model_objects import Model
from ..ir import Activation

OPERATOR = "UNIDIRECTIONAL_SEQUENCE_LSTM"
ABSENT = (9, 10, 11, 16, 17, 20, 21, 22, 23)  # peephole, projection, layer norm


@dataclass(frozen=True)
class Cell:
    """One float sequence LSTM of the model: where its input and cell state are, and its
    weights stacked gate by gate (input, forget, cell, output)."""

    input_index: int
    cell_state: str          # the name of its cell-state tensor
    w: np.ndarray            # [4 U, F]
    r: np.ndarray            # [4 U, U]
    b: np.ndarray            # [4 U]
    time_major: bool
    clip: float

    def states(self, x: np.ndarray) -> np.ndarray:
        """c after every step, [T, B, U], for the sequence x ([B, T, F] or [T, B, F])."""
        x = np.asarray(x, np.float32)
        seq = x if self.time_major else x.transpose(1, 0, 2)
        steps, batch = seq.shape[:2]
        units = self.r.shape[1]
        pre = seq.reshape(steps * batch, -1) @ self.w.T + self.b
        pre = pre.reshape(steps, batch, 4 * units)
        h = np.zeros((batch, units), np.float32)
        c = np.zeros((batch, units), np.float32)
        out = np.empty((steps, batch, units), np.float32)
        for t in range(steps):
            z = pre[t] + h @ self.r.T
            i, f, g, o = (z[:, k * units:(k + 1) * units] for k in range(4))
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            if self.clip > 0:
                c = np.clip(c, -self.clip, self.clip)
            h = _sigmoid(o) * np.tanh(c)
            out[t] = c
        return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)


def float_cells(model: Model) -> list[Cell]:
    """The float sequence LSTMs of the main graph that can be replayed."""
    sub = model.subgraphs[0]
    cells = []
    for op in sub.operators:
        if op.name != OPERATOR or len(op.inputs) not in (20, 24) or \
                op.options.get("fused_activation_function") != Activation.TANH:
            continue
        t = [sub.tensors[i] if i >= 0 else None for i in op.inputs]
        if any(t[i] is not None for i in ABSENT if i < len(t)) or \
                any(t[i] is None or t[i].data is None or t[i].dtype != np.float32
                    for i in range(1, 9)) or \
                any(t[i] is None or t[i].data is None for i in range(12, 16)) or \
                t[0].dtype != np.float32 or t[19] is None or t[19].dtype != np.float32 or \
                len(t[0].shape) != 3:
            continue
        cells.append(Cell(op.inputs[0], t[19].name,
                          np.concatenate([t[i].data for i in range(1, 5)]).astype(np.float32),
                          np.concatenate([t[i].data for i in range(5, 9)]).astype(np.float32),
                          np.concatenate([t[i].data for i in range(12, 16)]).astype(np.float32),
                          bool(op.options.get("time_major", False)),
                          float(op.options.get("cell_clip", 0.0))))
    return cells
