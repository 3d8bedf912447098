"""Small LSTM / RNN .tflite models for the recurrent kernels' tests (test helper).

Float models get seeded random float32 weights. Integer models are laid out as
TensorFlow's quantizer writes a full-int8 LSTM (operator_property.cc; compare
``edgelite inspect`` of a TF-made int8 Keras LSTM): int8 input / output / output state
(the output state shares the output's parameters), int8 symmetric weights with one scale
per tensor, int32 biases (scale s_in * s_w; s_LN * 2^-10 with layer norm), int16 peephole
weights and layer-norm coefficients, an int16 cell state with a power-of-two scale, and
five intermediates: the four gate scales (int16, read only with layer norm) and the
hidden value's int8 scale and zero point (the output's, without projection).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from edgelite.interpreter import Interpreter

from edgelite.schema import generated_tflite as tfl
from edgelite.schema import model_io

from tests.support import KERNEL_SETS, edgelite_interpreter, invoke, litert_interpreter

from .tflite_builder import ModelBuilder


@dataclass(frozen=True)
class LstmSpec:
    n_input: int = 3
    n_cell: int = 4
    n_output: int | None = None  # None: n_cell (no projection)
    batch: int = 1
    steps: int = 5
    time_major: bool = False
    cifg: bool = False
    peephole: bool = False
    projection: bool = False
    projection_bias: bool = True
    layer_norm: bool = False
    diagonal: bool = False  # rank-1 recurrent weights (float only)
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    activation: str = "TANH"
    integer: bool = False
    hybrid: bool = False  # int8 weights (and peepholes), everything else float32
    input_zp: int = 3
    output_zp: int = -7
    hidden_zp: int = -5  # with projection
    cell_log2: int = -11
    # int16 peephole weights in [-peephole_max, peephole_max) with this scale; a power of two
    # gives a power-of-two multiplier, so the products' rescaling often hits rounding ties
    peephole_max: int = 2000
    peephole_scale: float = 1e-4
    seed: int = 0
    inputs: int = 24  # 20: the older form without layer-norm slots
    options: dict = field(default_factory=dict)  # more / overriding builtin options

    @property
    def outputs(self) -> int:
        if self.n_output is not None:
            return self.n_output
        return self.n_cell

    def seq_shape(self, features: int) -> list[int]:
        if self.time_major:
            return [self.steps, self.batch, features]
        return [self.batch, self.steps, features]


S_IN, S_OUT, S_HIDDEN = 1 / 128, 1 / 100, 1 / 90


class _Weights:
    """Adds one direction's operands (17 tensors, inputs 1-17 of the LSTM) to a model."""

    def __init__(self, b: ModelBuilder, spec: LstmSpec, rng: np.random.Generator, tag: str):
        self.b, self.spec, self.rng, self.tag = b, spec, rng, tag

    def matrix(self, name: str, rows: int, cols: int, scale: float) -> int:
        if self.spec.integer or self.spec.hybrid:
            q = self.rng.integers(-127, 128, (rows, cols)).astype(np.int8)
            return self.b.tensor(f"{self.tag}{name}", q.shape, np.int8, data=q, scale=scale)
        w = self.rng.normal(0, 0.5, (rows, cols)).astype(np.float32)
        return self.b.tensor(f"{self.tag}{name}", w.shape, data=w)

    def vector(self, name: str, n: int, dtype, low: int, high: int, scale: float) -> int:
        if self.spec.hybrid and name.startswith("peephole"):  # int8 in a hybrid LSTM
            q = self.rng.integers(-127, 128, n).astype(np.int8)
            return self.b.tensor(f"{self.tag}{name}", [n], np.int8, data=q, scale=0.02)
        if self.spec.integer:
            q = self.rng.integers(low, high, n).astype(dtype)
            return self.b.tensor(f"{self.tag}{name}", [n], dtype, data=q, scale=scale)
        v = self.rng.normal(0, 0.5, n).astype(np.float32)
        return self.b.tensor(f"{self.tag}{name}", [n], data=v)

    def direction(self) -> list[int]:
        s = self.spec
        n, out = s.n_cell, s.outputs
        ops = [-1] * 17
        gates = range(1, 4) if s.cifg else range(4)
        for g in gates:
            s_w = 0.004 + 0.001 * g
            ops[g] = self.matrix(f"input_to_{g}", n, s.n_input, s_w)
            if s.diagonal:
                ops[4 + g] = self.vector(f"recurrent_to_{g}", n, np.int8, -127, 128, s_w)
            else:
                ops[4 + g] = self.matrix(f"recurrent_to_{g}", n, out, s_w)
            bias_scale = 1e-4 * 2.0**-10 if s.layer_norm else S_IN * s_w
            ops[11 + g] = self.vector(f"bias_{g}", n, np.int32, -3000, 3000, bias_scale)
        if s.peephole:
            for slot, g in ((8, 0), (9, 1), (10, 3)):
                if g or not s.cifg:
                    ops[slot] = self.vector(f"peephole_{g}", n, np.int16, -s.peephole_max,
                                            s.peephole_max, s.peephole_scale)
        if s.projection:
            ops[15] = self.matrix("projection", out, n, 0.01)
            if s.projection_bias:
                ops[16] = self.vector("projection_bias", out, np.int32, -500, 500,
                                      S_HIDDEN * 0.01)
        return ops

    def layer_norm(self) -> list[int]:
        s = self.spec
        return [-1 if (g == 0 and s.cifg) else
                self.vector(f"layer_norm_{g}", s.n_cell, np.int16, 8000, 20000, 1e-4)
                for g in range(4)]


def _states(b: ModelBuilder, spec: LstmSpec, tag: str) -> tuple[int, int]:
    out_state_shape, cell_shape = [spec.batch, spec.outputs], [spec.batch, spec.n_cell]
    if spec.integer:
        h = b.tensor(f"{tag}output_state", out_state_shape, np.int8, scale=S_OUT,
                     zero_point=spec.output_zp, is_variable=True)
        c = b.tensor(f"{tag}cell_state", cell_shape, np.int16, scale=2.0**spec.cell_log2,
                     is_variable=True)
        return h, c
    return (b.tensor(f"{tag}output_state", out_state_shape, is_variable=True),
            b.tensor(f"{tag}cell_state", cell_shape, is_variable=True))


def _intermediates(b: ModelBuilder, spec: LstmSpec) -> list[int]:
    gate_scale = 3e-4 if spec.layer_norm else 2.0**-12
    gates = [b.tensor(f"intermediate_{g}", [0], np.int16, scale=gate_scale * (1 + g / 8))
             for g in range(4)]
    hidden = (S_HIDDEN, spec.hidden_zp) if spec.projection else (S_OUT, spec.output_zp)
    return gates + [b.tensor("hidden_intermediate", [0], np.int8, scale=hidden[0],
                             zero_point=hidden[1])]


def _activation_tensor(b: ModelBuilder, name: str, shape, spec: LstmSpec, zp: int) -> int:
    if spec.integer:
        return b.tensor(name, shape, np.int8, scale=S_IN if name == "input" else S_OUT,
                        zero_point=zp)
    return b.tensor(name, shape)


def lstm_model(spec: LstmSpec, op: str = "UNIDIRECTIONAL_SEQUENCE_LSTM") -> bytes:
    """One UNIDIRECTIONAL_SEQUENCE_LSTM (or LSTM: one step, [batch, features]) op."""
    b = ModelBuilder()
    rng = np.random.default_rng(spec.seed)
    step = op == "LSTM"
    in_shape = [spec.batch, spec.n_input] if step else spec.seq_shape(spec.n_input)
    out_shape = [spec.batch, spec.outputs] if step else spec.seq_shape(spec.outputs)
    x = _activation_tensor(b, "input", in_shape, spec, spec.input_zp)
    weights = _Weights(b, spec, rng, "")
    operands = [x, *weights.direction(), *_states(b, spec, "")]
    if spec.inputs == 24:
        operands += weights.layer_norm() if spec.layer_norm else [-1] * 4
    y = _activation_tensor(b, "output", out_shape, spec, spec.output_zp)
    options = dict(fused_activation_function=spec.activation, cell_clip=spec.cell_clip,
                   proj_clip=spec.proj_clip)
    if not step:
        options["time_major"] = spec.time_major
    options.update(spec.options)
    intermediates = _intermediates(b, spec) if spec.integer else None
    b.op(op, operands, [y], intermediates=intermediates, **options)
    return b.build([x], [y])


def bidirectional_model(spec: LstmSpec, merge_outputs: bool = False, aux: str = "") -> bytes:
    """One BIDIRECTIONAL_SEQUENCE_LSTM (float). ``aux``: "" none; "cross" an auxiliary
    input with aux weights; "stacked" an auxiliary input without (the backward pass reads
    it instead of the input)."""
    b = ModelBuilder()
    rng = np.random.default_rng(spec.seed)
    x = b.tensor("input", spec.seq_shape(spec.n_input))
    fw = _Weights(b, spec, rng, "fw_").direction()
    bw = _Weights(b, spec, rng, "bw_").direction()
    states = [*_states(b, spec, "fw_"), *_states(b, spec, "bw_")]
    aux_ops, graph_inputs = [-1] * 9, [x]
    if aux:
        a = b.tensor("aux_input", spec.seq_shape(spec.n_input))
        graph_inputs.append(a)
        aux_ops[0] = a
        if aux == "cross":
            aux_spec = replace(spec, cifg=False)
            for d, tag in ((0, "fw_"), (1, "bw_")):
                w = _Weights(b, aux_spec, rng, f"{tag}aux_")
                for g in range(4):
                    aux_ops[1 + 4 * d + g] = w.matrix(f"to_{g}", spec.n_cell, spec.n_input, 0.01)
    units = 2 * spec.outputs if merge_outputs else spec.outputs
    outputs = [b.tensor("fw_output", spec.seq_shape(units))]
    if not merge_outputs:
        outputs.append(b.tensor("bw_output", spec.seq_shape(spec.outputs)))
    b.op("BIDIRECTIONAL_SEQUENCE_LSTM", [x, *fw, *bw, *states, *aux_ops], outputs,
         fused_activation_function=spec.activation, cell_clip=spec.cell_clip,
         proj_clip=spec.proj_clip, merge_outputs=merge_outputs, time_major=spec.time_major,
         **spec.options)
    return b.build(graph_inputs, outputs)


def rnn_model(spec: LstmSpec, op: str = "UNIDIRECTIONAL_SEQUENCE_RNN") -> bytes:
    """One UNIDIRECTIONAL_SEQUENCE_RNN (or RNN: one step) op, float32; ``spec.n_cell``
    is the number of units."""
    b = ModelBuilder()
    rng = np.random.default_rng(spec.seed)
    step = op == "RNN"
    units = spec.n_cell
    x = b.tensor("input", [spec.batch, spec.n_input] if step else spec.seq_shape(spec.n_input))
    w = _Weights(b, spec, rng, "")
    operands = [x, w.matrix("weights", units, spec.n_input, 0.01),
                w.matrix("recurrent_weights", units, units, 0.01),
                w.vector("bias", units, np.int32, -100, 100, 1e-4),
                b.tensor("hidden_state", [spec.batch, units], is_variable=True)]
    y = b.tensor("output", [spec.batch, units] if step else spec.seq_shape(units))
    options = dict(fused_activation_function=spec.activation, **spec.options)
    if not step:
        options["time_major"] = spec.time_major
    b.op(op, operands, [y], **options)
    return b.build([x], [y])


def with_zero_steps(spec: LstmSpec, feeds):
    """``feeds`` with time step 1 all zero and step 3 zero in batch row 0 (LiteRT skips
    the products of all-zero inputs, which shows with the activation NONE)."""
    out = []
    for f in feeds:
        f = f.copy()
        if spec.time_major:
            f[1], f[3, :1] = 0, 0
        else:
            f[:, 1], f[:1, 3] = 0, 0
        out.append(f)
    return out


def edited(model: bytes, change) -> bytes:
    """``model`` after ``change(subgraph_t, model_t)`` edits its object form (hostile
    variants of a valid model)."""
    m = tfl.ModelT.InitFromPackedBuf(model, 0)
    change(m.subgraphs[0], m)
    return model_io.pack_model(m)


def sequence_feeds(spec: LstmSpec, invokes: int, seed: int = 1, step: bool = False,
                   grid: bool = False):
    """``invokes`` random inputs (int8 for integer specs). ``grid``: float inputs on the
    grid k / 32 in [-1, 1], as values dequantized from int8 are (an embedding behind a
    DEQUANTIZE): their per-row quantization lands on rounding ties -- x / s exactly
    k + 0.5, a zero point exactly -0.5 -- which random floats almost never do."""
    rng = np.random.default_rng(seed)
    shape = [spec.batch, spec.n_input] if step else spec.seq_shape(spec.n_input)
    if spec.integer:
        return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(invokes)]
    if grid:
        return [(rng.integers(-32, 33, shape) / 32).astype(np.float32) for _ in range(invokes)]
    return [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(invokes)]


# --------------------------------------------------------------------------- comparison


def _invoke(interp, feeds) -> list[np.ndarray]:
    """The outputs, then every state tensor (the int16 cell state shows a difference of
    one unit that the int8 outputs may round away)."""
    outputs = invoke(interp, feeds)
    states = sorted((d["name"], d["index"]) for d in interp.get_tensor_details()
                    if d["name"].endswith("_state"))
    return outputs + [interp.get_tensor(index) for _, index in states]


def run_and_rerun(interp, feeds_per_invoke) -> list[list[np.ndarray]]:
    """Outputs (and states) of consecutive invokes (the state carries), then of the same
    feeds again after reset_all_variables()."""
    results = [_invoke(interp, f) for f in feeds_per_invoke]
    interp.reset_all_variables()
    return results + [_invoke(interp, f) for f in feeds_per_invoke]


def assert_matches_litert_over_invokes(model: bytes, feeds_per_invoke,
                                       kernels=KERNEL_SETS, rtol: float = 1e-5) -> list:
    """edgelite against LiteRT (each kernel set) over consecutive invokes and again after
    a reset: integer outputs equal, float ones within ``rtol`` of max |LiteRT|. Returns
    edgelite's outputs (the last kernel set's)."""
    ours = None
    for k in kernels:
        theirs = run_and_rerun(litert_interpreter(model, k), feeds_per_invoke)
        ours = run_and_rerun(edgelite_interpreter(model, k), feeds_per_invoke)
        for step, (a_outs, b_outs) in enumerate(zip(ours, theirs)):
            for a, b in zip(a_outs, b_outs, strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape, (k, step, a.shape, b.shape)
                if a.dtype.kind == "f":
                    tol = rtol * max(float(np.max(np.abs(b))), 1e-30)
                    np.testing.assert_allclose(a, b, rtol=0, atol=tol,
                                               err_msg=f"kernels={k} invoke {step}")
                else:
                    diff = np.flatnonzero(a != b)
                    assert diff.size == 0, (
                        f"kernels={k} invoke {step}: {diff.size} of {a.size} differ, first "
                        f"ours {a.reshape(-1)[diff[:5]].tolist()} vs LiteRT "
                        f"{b.reshape(-1)[diff[:5]].tolist()}")
    return ours


def assert_refused(spec: LstmSpec, change, error, text: str,
                   op: str = "UNIDIRECTIONAL_SEQUENCE_LSTM") -> None:
    """lstm_model(spec) edited by ``change`` fails allocate_tensors() with ``error``: one
    line holding ``text`` and naming the operator."""
    interp = Interpreter(model_content=edited(lstm_model(spec, op=op), change))
    with pytest.raises(error) as info:
        interp.allocate_tensors()
    message = str(info.value)
    assert text in message and "\n" not in message, message
    assert f"operator 0 ({op}" in message
