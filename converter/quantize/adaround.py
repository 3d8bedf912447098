"""AdaRound: learned up / down rounding of the weights (Nagel et al. 2020, "Up or Down?
Adaptive Rounding for Post-Training Quantization"), layer by layer, on the calibration data.

Round-to-nearest minimises each weight's own error; what matters is the layer's output error.
For a CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED with float weights W, quantization scale
s and zero point z per output channel c (as calibrated -- unchanged here), in steps
w = W / s + z, the stored integers are
    q = clip(floor(w) + h, qmin, qmax),   h in {0, 1} per weight
and the layer's output error over its input rows (im2col patches for a conv, one patch per
input channel for a depthwise conv, input vectors for a fully connected layer) is
    E_c = || s_c (q_c - z_c) X^T - W_c X_f^T ||^2                       (bias and activation aside)
X: the rows as the quantized model produces them. X_f, with target FLOAT (the default): the
same rows in the float model -- the paper's "asymmetric reconstruction" (section 5), which
also lets the rounding compensate the errors of the layers before; X_f = X with target
QUANTIZED: ||W X - W_q X||^2, the weight rounding's own error. With d = q - w, u = W / s,
    E_c / s_c^2 = d G_c d^T + 2 d . b_c + e_c,    G_c = X^T X,
    b_c = (u_c (X - X_f)^T) X,   e_c = |u_c (X - X_f)^T|^2         (b = e = 0 when X_f = X)
G is shared by the output channels of a conv / fully connected layer and per input channel
for a depthwise conv; G, b and e are sums over rows, accumulated sample by sample, so every
Adam step costs one (O x K) . (K x K) product however many rows there are (or (O x K) .
(K x R) . (R x K) when there are fewer rows R than weights K per channel: then the rows are
kept).

The binary problem is relaxed (paper eq. 21-24):
    h(V) = clip(sigmoid(V) (zeta - gamma) + gamma, 0, 1),   zeta = 1.1, gamma = -0.1
    loss = sum_c E_c(h) / R_c  +  lambda * sum_c mean_k (1 - |2 h - 1|^beta)
where R_c = d G_c d^T for round-to-nearest's d: each channel's error is measured against the
rounding error round-to-nearest makes, so lambda and the learning rate do not depend on the
layer's scale or the data's magnitude. V starts where h(V) = frac(w) (the relaxed weights
equal the float ones); Adam on V for a fixed number of steps; no regulariser for the first
`warmup` steps, then beta falls linearly from 20 to 2, pushing every h to 0 or 1; finally
h = 1 where V >= 0 (h >= 0.5).

Channels are independent (own weights, own error), so the result is checked per channel: a
channel keeps its learned rounding only if its error E_c on the rows is strictly lower than
with round-to-nearest's integers (the rewrite's); the report gives, per layer, the output
mean squared error of both (real units, mean over rows and channels).

Each layer learns from its own inputs as the already-quantized model produces them: the
quantized model runs op by op (staged.run_staged) and a layer is rounded just before it
runs, so its inputs carry the rounding of every layer before it. With target FLOAT the float
model runs op by op alongside (each float op right after its quantized twin), so both
layers' inputs are at hand without keeping every float activation. At most `max_rows` rows
per layer enter the sums (a seeded random subset, the same rows of both models, the same
number per sample). The stored integers change; scales, zero points, biases and all else
stay as the rewrite made them, so the file is a normal TFLite file.
"""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable

import numpy as np

from ...interpreter.blas import threads
from ...interpreter.kernels import OPS
from ...interpreter.kernels.base import OpContext
from ...interpreter.kernels.common.window import conv_windows, patches_view
from ..ir import Graph, Op
from .staged import real, run_staged

ZETA, GAMMA = 1.1, -0.1     # stretch of the rectified sigmoid (paper section 3.3)
LAYERS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
OUT_AXIS = {n: OPS[n].affine.out_axis for n in LAYERS}   # OHWI 0, 1HWO 3, OI 0 (OpDef.affine)


class Target(Enum):
    FLOAT = "float"            # W x_f: the float layer on the float model's inputs
    QUANTIZED = "quantized"    # W x: the float weights on the quantized model's inputs


@dataclass(frozen=True)
class AdaRoundOptions:
    target: Target = Target.FLOAT
    iterations: int = 1000       # Adam steps per layer (all its channels at once)
    learning_rate: float = 0.01  # Adam's step on V (h goes from 0 to 1 over V ~ -2.4 .. 2.4)
    reg_weight: float = 10.0     # lambda (see the module doc for its scale)
    beta: tuple[float, float] = (20.0, 2.0)   # annealed from the first to the second
    warmup: float = 0.2          # fraction of the steps without the regulariser
    max_rows: int = 4096         # input rows per layer, a seeded random subset
    seed: int = 0


@dataclass
class LayerRounding:
    mse_nearest: float       # layer output MSE with round-to-nearest (the rewrite's weights)
    mse_adaround: float      # the same with the weights kept (never above mse_nearest)
    channels: int
    channels_kept: int       # channels whose learned rounding was kept
    flipped: int             # weights now rounded the other way than to nearest
    rows: int                # input rows the errors were measured on


@dataclass
class AdaRoundReport:
    target: Target = Target.FLOAT
    # by the layer's output tensor, the float model's name (a graph output's int8 tensor
    # is renamed by the rewrite)
    layers: dict[str, LayerRounding] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (layer, reason)

    def summary(self) -> str:
        if not self.layers:
            return "adaround: no layer rounded"
        before = sum(r.mse_nearest for r in self.layers.values())
        after = sum(r.mse_adaround for r in self.layers.values())
        flipped = sum(r.flipped for r in self.layers.values())
        return (f"adaround: {len(self.layers)} layer(s), {flipped} weight(s) rounded the "
                f"other way; layer output MSE summed over the layers {before:.4g} -> "
                f"{after:.4g}")


# -- the layers' input rows and their error ---------------------------------------------------

def input_rows(op: Op, x: np.ndarray, pick: np.ndarray | None = None) -> np.ndarray:
    """One sample's rows: (rows, K) -- im2col patches in the weights' (KH, KW, I) order for
    CONV_2D, input vectors for FULLY_CONNECTED -- or (rows, KH * KW, C) for
    DEPTHWISE_CONV_2D (one patch per input channel); `pick`: only these rows (indices in
    that order; the others are never copied). Padding is real 0 (TFLite pads with the zero
    point)."""
    w = op.inputs[1].shape
    if op.type == "FULLY_CONNECTED":
        rows = x.reshape(-1, w[1])
        return rows if pick is None else rows[pick]
    _, kh, kw, _ = w
    wh, ww = _windows(op, x)
    padded = x
    if wh.pad_before or wh.pad_after or ww.pad_before or ww.pad_after:
        n, h, w_, c = x.shape
        padded = np.zeros((n, h + wh.pad_before + wh.pad_after,
                           w_ + ww.pad_before + ww.pad_after, c), x.dtype)
        padded[:, wh.pad_before:wh.pad_before + h, ww.pad_before:ww.pad_before + w_] = x
    patches = patches_view(padded, wh, ww)            # (N, OH, OW, KH, KW, C)
    if pick is not None:                              # (rows, KH, KW, C): the picked ones
        patches = patches[np.unravel_index(pick, patches.shape[:3])]
    if op.type == "DEPTHWISE_CONV_2D":
        return patches.reshape(-1, kh * kw, x.shape[3])
    return patches.reshape(-1, kh * kw * x.shape[3])


def _windows(op: Op, x: np.ndarray):
    """A conv's (height, width) windows on input `x`."""
    _, kh, kw, _ = op.inputs[1].shape
    ctx = OpContext(index=0, op_name=op.type, options=op.options, inputs=(), outputs=())
    return conv_windows(ctx, x.shape[1], x.shape[2], kh, kw)


def row_count(op: Op, x: np.ndarray) -> int:
    """How many rows input_rows(op, x) has."""
    if op.type == "FULLY_CONNECTED":
        return x.size // op.inputs[1].shape[1]
    wh, ww = _windows(op, x)
    return x.shape[0] * wh.size_out * ww.size_out


class Quadratic:
    """E_c(d) / s_c^2 = d G_c d^T + 2 d . b_c + e_c per output channel (module doc), summed
    over batches of rows (X, X_f or None). `in_channel`: for a depthwise conv, the input
    channel each output channel reads; `keep_rows`: keep X instead of G (fewer rows than K)."""

    def __init__(self, u: np.ndarray, batches: Iterable[tuple[np.ndarray, np.ndarray | None]],
                 in_channel: np.ndarray | None = None, keep_rows: bool = False) -> None:
        out, k = u.shape
        self.count = 0
        self.rows = self.gram = self.per_channel = None
        self.offset, self.const = np.zeros((out, k)), np.zeros(out)
        kept = []
        g = np.zeros((k, k) if in_channel is None else (int(in_channel.max()) + 1, k, k))
        for x, xf in batches:
            self.count += x.shape[0]
            if in_channel is not None:                  # x: (rows, K, C)
                g += np.einsum("rkc,rlc->ckl", x, x, optimize=True)
                if xf is not None:
                    xo = x[:, :, in_channel]
                    e = np.einsum("rko,ok->or", xo - xf[:, :, in_channel], u, optimize=True)
                    self.offset += np.einsum("or,rko->ok", e, xo, optimize=True)
                    self.const += np.einsum("or,or->o", e, e)
                continue
            if keep_rows:
                kept.append(x)
            else:
                g += x.T @ x
            if xf is not None:
                e = u @ (x - xf).T
                self.offset += e @ x
                self.const += np.einsum("or,or->o", e, e)
        if in_channel is not None:
            self.per_channel = g[in_channel]
        elif keep_rows:
            self.rows = np.concatenate(kept) if kept else np.zeros((0, k))
        else:
            self.gram = g

    def cast(self, dtype) -> "Quadratic":
        """The same error with its matrices in `dtype`."""
        other = copy.copy(self)
        for name in ("rows", "gram", "per_channel", "offset"):
            m = getattr(self, name)
            setattr(other, name, None if m is None else m.astype(dtype))
        return other

    def apply(self, d: np.ndarray) -> np.ndarray:
        """d G_c for every channel (d: (O, K))."""
        if self.per_channel is not None:
            return np.einsum("ok,okl->ol", d, self.per_channel)
        if self.rows is not None:
            return (d @ self.rows.T) @ self.rows
        return d @ self.gram

    def gradient(self, d: np.ndarray) -> np.ndarray:
        """Half the gradient of E_c / s_c^2 with respect to d."""
        return self.apply(d) + self.offset

    def rounding(self, d: np.ndarray) -> np.ndarray:
        """d G_c d^T per channel: the error the weights' rounding alone makes."""
        return np.einsum("ok,ok->o", d, self.apply(d))

    def energy(self, d: np.ndarray) -> np.ndarray:
        """E_c / s_c^2 per channel."""
        return self.rounding(d) + 2 * np.einsum("ok,ok->o", d, self.offset) + self.const


# -- the optimisation -----------------------------------------------------------------------

class Adam:
    """Adam (Kingma & Ba 2015, algorithm 1 with the "epsilon hat" form of section 2),
    updating `x` in place, in preallocated buffers (the same float32 operations, in the
    same order, as the textbook one-liners: only the temporaries are gone)."""

    B1, B2, EPS = 0.9, 0.999, 1e-8     # the paper's defaults

    def __init__(self, x: np.ndarray, learning_rate: float) -> None:
        self.x, self.lr, self.t = x, learning_rate, 0
        self.m, self.v = np.zeros_like(x), np.zeros_like(x)
        self._a, self._b = np.empty_like(x), np.empty_like(x)

    def scalars(self) -> tuple[float, float]:
        """Count a step; its bias-corrected learning rate and epsilon."""
        self.t += 1
        c2 = math.sqrt(1 - self.B2 ** self.t)
        return self.lr * c2 / (1 - self.B1 ** self.t), self.EPS * c2

    def step(self, grad: np.ndarray) -> None:
        """One step; overwrites nothing but x and the moments (`grad` is kept)."""
        lr, eps = self.scalars()
        a, b = self._a, self._b
        self.m *= self.B1
        self.m += np.multiply(grad, 1 - self.B1, out=a)          # m += (1 - B1) g
        self.v *= self.B2
        np.multiply(grad, 1 - self.B2, out=a)
        self.v += np.multiply(a, grad, out=a)                    # v += (1 - B2) g g
        np.sqrt(self.v, out=a)
        a += eps
        np.multiply(self.m, lr, out=b)
        self.x -= np.divide(b, a, out=b)                         # x -= lr m / (sqrt v + eps)


class Relaxed:
    """The relaxed rounding's loss gradient with respect to V (module doc), element-wise
    work in preallocated float32 buffers; `base`, `w`, `scale`, `free` as in learn_rounding."""

    STRETCH, SHIFT = np.float32(ZETA - GAMMA), np.float32(GAMMA)
    INDEXED = 4096      # weights from which the regulariser may skip the clipped ones

    def __init__(self, quad: Quadratic, base, w, scale, free, reg: np.float32) -> None:
        self.quad, self.base, self.w, self.scale, self.free = quad, base, w, scale, free
        self.reg = reg
        self.sig, self.h, self.dh, self.t = (np.empty_like(w) for _ in range(4))

    def step(self, v: np.ndarray, adam: Adam, beta: float | None) -> None:
        """One Adam step on `v` (adam.x) at regulariser exponent `beta`."""
        adam.step(self.gradient(v, beta))

    def few_live(self, inside: np.ndarray) -> bool:
        """A large layer whose weights are mostly clipped (_regularise)."""
        return inside.size >= self.INDEXED and 2 * np.count_nonzero(inside) < inside.size

    def gradient(self, v: np.ndarray, beta: float | None) -> np.ndarray:
        """d loss / d V at `v` (`beta`: the regulariser's exponent, None: no regulariser);
        a new array."""
        sig, h, dh, t = self.sig, self.h, self.dh, self.t
        np.negative(v, out=sig)
        np.exp(sig, out=sig)
        sig += 1.0
        np.divide(1.0, sig, out=sig)                                 # sigmoid(v)
        np.multiply(sig, self.STRETCH, out=h)
        h += self.SHIFT
        # dh/dv, zero where h is clipped to 0 or 1
        np.multiply(sig, self.STRETCH, out=dh)
        dh *= np.subtract(1.0, sig, out=t)
        inside = (h > 0) & (h < 1)
        dh *= inside
        np.clip(h, 0.0, 1.0, out=h)
        np.multiply(h, self.free, out=t)
        t += self.base
        t -= self.w                                                  # d = q - w
        g = np.ascontiguousarray(self.quad.apply(t))    # (a view of it is updated below)
        g += self.quad.offset
        g *= self.scale
        if beta is not None:
            self._regularise(g, h, inside, beta)
        g *= dh
        return g

    def _regularise(self, g: np.ndarray, h: np.ndarray, inside: np.ndarray,
                    beta: float) -> None:
        """g -= d/dh of lambda (1 - |2h - 1|^beta) = -2 lambda beta |a|^(beta - 1) sign(a),
        a = 2h - 1 (overwrites h). The power is the loop's costliest operation (float32
        pow is not vectorised); outside 0 < h < 1 (h clipped) the gradient is multiplied
        by dh = 0 anyway, so once those weights are the majority of a large layer -- as the
        annealing proceeds -- only the others' terms are computed (the same numbers; a
        weight whose gradient is 0 may get -0.0 for +0.0, which moves nothing)."""
        power, factor = np.float32(beta - 2.0), self.reg * np.float32(2.0 * beta)
        if self.few_live(inside):
            live = np.flatnonzero(inside)
            a = h.ravel().take(live)
            a *= 2.0
            a -= 1.0
            r = np.abs(a)
            np.power(r, power, out=r)
            a *= factor
            a *= r
            g.ravel()[live] -= a
            return
        a = np.multiply(h, 2.0, out=h)
        a -= 1.0
        t = np.abs(a, out=self.t)
        np.power(t, power, out=t)
        a *= factor
        a *= t
        g -= a


def learn_rounding(w: np.ndarray, quad: Quadratic, qmin: int, qmax: int,
                   nearest: np.ndarray, options: AdaRoundOptions) -> np.ndarray:
    """The learned integers (O, K) for weights `w` in quantization steps; `nearest` holds
    round-to-nearest's integers (their errors normalise each channel's loss). The loop runs
    in float32 (the data's precision; half the memory traffic of float64)."""
    base = np.floor(w)
    # a weight whose floor or ceiling is outside [qmin, qmax] has one possible integer
    # (the clip's): it keeps it and gets no gradient
    free = (base >= qmin) & (base + 1 <= qmax)
    base = np.clip(base, qmin, qmax)
    frac = np.where(free, w - base, 0.0)
    v = np.ascontiguousarray(np.log((frac - GAMMA) / (ZETA - frac)), np.float32)  # h(v) = frac
    norm = quad.rounding(nearest - w)
    # per channel: 2 / E_c(nearest) (the error's gradient scale), 0 on the free mask's holes
    scale = (2.0 / np.where(norm > 0, norm, 1.0))[:, None] * free
    base, w, scale = (np.ascontiguousarray(a, np.float32) for a in (base, w, scale))
    reg = np.float32(options.reg_weight / w.shape[1])   # lambda, averaged over K weights
    from .adaround_native import relaxed_for        # (it builds on this module)
    relaxed = relaxed_for(quad.cast(np.float32), base, w, scale, free, reg)
    adam = Adam(v, options.learning_rate)
    warm = int(options.warmup * options.iterations)
    beta0, beta1 = options.beta
    with np.errstate(over="ignore"):          # exp(-v) = inf for v << 0: sigmoid 0, fine
        for t in range(options.iterations):
            beta = None
            if t >= warm:
                beta = beta0 + (beta1 - beta0) * (t - warm) / max(1, options.iterations - warm - 1)
            relaxed.step(v, adam, beta)
    return base.astype(np.float64) + (v >= 0) * free


# -- one layer ------------------------------------------------------------------------------

def _eligible(float_op: Op, quant_op: Op, graph: Graph) -> str:
    """'' if the layer can be rounded, else why not."""
    w, x = quant_op.inputs[1], quant_op.inputs[0]
    if w is None or not w.is_const or w.quant is None or w.dtype == np.float32:
        return "weights not quantized"
    if x.dtype == np.float32 or x.quant is None:
        return "input not quantized"
    f = float_op.inputs[1]
    if float_op.type != quant_op.type or f is None or not f.is_const or \
            f.data.dtype != np.float32 or f.data.shape != w.shape:
        return "no float weights"
    if graph.use_count(w) != 1:
        return "weights shared with another op"
    if quant_op.type == "CONV_2D" and w.shape[3] != x.shape[-1]:
        return "grouped convolution"
    return ""


def _as_matrix(a: np.ndarray, axis: int) -> np.ndarray:
    """(output channels, K): the weights of each output channel in a row."""
    return np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)


def _from_matrix(m: np.ndarray, shape: tuple, axis: int) -> np.ndarray:
    moved = (shape[axis],) + tuple(n for i, n in enumerate(shape) if i != axis)
    return np.moveaxis(m.reshape(moved), 0, axis)


def round_layer(float_op: Op, quant_op: Op, inputs: list[np.ndarray],
                float_inputs: list[np.ndarray] | None, rng: np.random.Generator,
                options: AdaRoundOptions) -> LayerRounding:
    """Learn the rounding of one layer from its real-valued inputs in the quantized model
    (and in the float model: target FLOAT), one array per sample, and store the integers of
    the channels it improves."""
    wq = quant_op.inputs[1]
    axis = OUT_AXIS[quant_op.type]
    out = wq.shape[axis]
    scale = np.broadcast_to(np.asarray(wq.quant.scale, np.float64).ravel(), (out,))
    zero = np.broadcast_to(np.asarray(wq.quant.zero_point, np.float64).ravel(), (out,))
    qmin = -127 if wq.dtype == np.int8 else int(np.iinfo(wq.dtype).min)  # int8: narrow range
    qmax = int(np.iinfo(wq.dtype).max)
    # (O, K) in C order, as the loop's arrays: a product's rounding may depend on the layout
    u = np.ascontiguousarray(_as_matrix(float_op.inputs[1].data.astype(np.float64), axis)
                             / scale[:, None])
    w = u + zero[:, None]
    nearest = np.ascontiguousarray(_as_matrix(wq.data.astype(np.float64), axis))
    each = row_count(quant_op, inputs[0])
    take = min(each, math.ceil(options.max_rows / len(inputs)))

    def batches():
        for i, x in enumerate(inputs):
            pick = np.sort(rng.choice(each, take, replace=False)) if take < each else None
            xf = None if float_inputs is None else input_rows(quant_op, float_inputs[i], pick)
            yield input_rows(quant_op, x, pick), xf

    in_channel = None
    if quant_op.type == "DEPTHWISE_CONV_2D":     # output o reads input o // multiplier
        in_channel = np.arange(out) // (out // inputs[0].shape[-1])
    # small matrices, thousands of products: one BLAS thread (spinning BLAS threads on a
    # busy CPU made each step a thousand times slower: interpreter/blas.py)
    with threads(1):
        quad = Quadratic(u, batches(), in_channel,
                         keep_rows=in_channel is None and take * len(inputs) < u.shape[1])
        learned = learn_rounding(w, quad, qmin, qmax, nearest, options)
        e_near, e_learn = quad.energy(nearest - w), quad.energy(learned - w)
    keep = (e_learn < e_near) & np.any(learned != nearest, axis=1)
    final = np.where(keep[:, None], learned, nearest)
    wq.data = np.ascontiguousarray(_from_matrix(final, wq.shape, axis), wq.dtype)
    per_value = scale ** 2 / (quad.count * out)            # E_c -> mean squared error
    return LayerRounding(
        mse_nearest=float(np.sum(per_value * e_near)),
        mse_adaround=float(np.sum(per_value * np.where(keep, e_learn, e_near))),
        channels=out, channels_kept=int(keep.sum()),
        flipped=int(np.count_nonzero(final != nearest)), rows=quad.count)


# -- the model ------------------------------------------------------------------------------

def side_by_side(float_graph: Graph, quant_graph: Graph,
                 twins: dict[int, Op]) -> tuple[Graph, dict[int, Op]]:
    """One graph running the quantized model and the float model together: each float op
    (copied) right after its quantized twin (`twins`: id(quantized op) -> float op), so
    that before a quantized layer runs, its input and the float layer's input are both
    live. Returns the graph and, for each quantized op's copy, the original."""
    g = Graph()
    position = {id(op): i for i, op in enumerate(float_graph.ops)}
    floats = list(float_graph.ops)
    order, original, done = [], {}, 0
    for q in quant_graph.ops:
        c = q.copy()
        original[id(c)] = q
        order.append(c)
        f = twins.get(id(q))
        if f is not None and id(f) in position:
            order += [op.copy() for op in floats[done:position[id(f)] + 1]]
            done = max(done, position[id(f)] + 1)
    order += [op.copy() for op in floats[done:]]
    g.inputs = [*float_graph.inputs, *quant_graph.inputs]
    g.ops = order
    g.outputs = [*float_graph.outputs, *quant_graph.outputs]
    return g, original


def apply_adaround(float_graph: Graph, quant_graph: Graph, layers: list[tuple[Op, Op]],
                   samples: list[dict], options: AdaRoundOptions | None = None,
                   progress_bar=None) -> AdaRoundReport:
    """Round the weights of the quantized layers of `layers` ((float op, quantized op)
    pairs: every op of the float graph and its copy in the quantized one) in place, in graph
    order, each on its inputs in the partly rounded quantized model (module doc).
    `progress_bar(label, total)` (QuantizeOptions.progress_bar) counts the layers."""
    options = options or AdaRoundOptions()
    report = AdaRoundReport(options.target)
    rounded: dict[int, Op] = {}
    for f, q in layers:
        if q.type in LAYERS:
            why = _eligible(f, q, quant_graph)
            if why:
                report.skipped.append((f.outputs[0].name, why))
            else:
                rounded[id(q)] = f
    if not rounded or not samples:
        return report
    if options.target is Target.FLOAT:
        graph, original = side_by_side(float_graph, quant_graph, {id(q): f for f, q in layers})
    else:
        graph, original = quant_graph, {id(q): q for q in quant_graph.ops}

    def before(op: Op, values) -> None:
        q = original.get(id(op))
        f = None if q is None else rounded.get(id(q))
        if f is None:
            return
        rng = np.random.default_rng([options.seed, len(report.layers)])
        inputs = real(q.inputs[0], values[id(q.inputs[0])])
        float_inputs = None
        if options.target is Target.FLOAT:
            float_inputs = real(f.inputs[0], values[id(f.inputs[0])])
        report.layers[f.outputs[0].name] = round_layer(f, q, inputs, float_inputs, rng,
                                                       options)
        update(1)

    with (progress_bar or no_progress_bar)("AdaRound", len(rounded)) as update:
        run_staged(graph, samples, before)
    return report


@contextlib.contextmanager
def no_progress_bar(label: str, total: int | None):
    yield lambda n: None
