"""SVDF (interpreter/kernels/svdf.py) against LiteRT on both kernel sets, over three
consecutive invokes (the activation state carries) and again after a reset: float32
within 1e-5 of max |LiteRT|; hybrid (int8 weights; symmetric or asymmetric inputs) and
full-integer (int8 input / output, int16 state and time weights) bit-exact, output and
state alike; rank 1 and higher."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels import OPS
from edgelite.interpreter.kernels.versions import signature_of
from edgelite.interpreter.loader.model import load_model
from tests.interpreter.lstm_models import assert_matches_litert_over_invokes

from tests.interpreter.tflite_builder import ModelBuilder


@dataclass(frozen=True)
class SvdfSpec:
    kind: str = "float"  # "float", "hybrid" or "integer"
    batch: int = 2
    n_input: int = 6
    units: int = 4
    rank: int = 1
    memory: int = 5
    bias: bool = True
    activation: str = "RELU"
    asymmetric: bool = False
    input_zp: int = 5
    output_zp: int = -10
    seed: int = 0

    @property
    def filters(self) -> int:
        return self.units * self.rank


S_IN, S_STATE, S_OUT, S_WF, S_WT = 1 / 64, 2.0**-10, 1 / 32, 0.01, 2.0**-14


def svdf_model(spec: SvdfSpec) -> bytes:
    b = ModelBuilder()
    rng = np.random.default_rng(spec.seed)
    f, m = spec.filters, spec.memory
    integer = spec.kind == "integer"
    x = b.tensor("input", [spec.batch, spec.n_input], np.int8 if integer else np.float32,
                 **({"scale": S_IN, "zero_point": spec.input_zp} if integer else {}))
    if spec.kind == "float":
        wf = b.tensor("weights_feature", [f, spec.n_input],
                      data=rng.normal(0, 0.5, (f, spec.n_input)).astype(np.float32))
        wt = b.tensor("weights_time", [f, m], data=rng.normal(0, 0.5, (f, m)).astype(np.float32))
    else:
        qf = rng.integers(-127, 128, (f, spec.n_input)).astype(np.int8)
        wf = b.tensor("weights_feature", qf.shape, np.int8, data=qf, scale=S_WF)
        if integer:
            qt = rng.integers(-20000, 20000, (f, m)).astype(np.int16)
            wt = b.tensor("weights_time", qt.shape, np.int16, data=qt, scale=S_WT)
        else:
            qt = rng.integers(-127, 128, (f, m)).astype(np.int8)
            wt = b.tensor("weights_time", qt.shape, np.int8, data=qt, scale=0.02)
    bias = -1
    if spec.bias and integer:
        qb = rng.integers(-2**21, 2**21, spec.units).astype(np.int32)  # +-4 output steps
        bias = b.tensor("bias", [spec.units], np.int32, data=qb, scale=S_STATE * S_WT)
    elif spec.bias:
        bias = b.tensor("bias", [spec.units],
                        data=rng.normal(0, 0.3, spec.units).astype(np.float32))
    state = b.tensor("activation_state", [spec.batch, m * f], np.int16 if integer else np.float32,
                     is_variable=True, **({"scale": S_STATE, "zero_point": 0} if integer else {}))
    y = b.tensor("output", [spec.batch, spec.units], np.int8 if integer else np.float32,
                 **({"scale": S_OUT, "zero_point": spec.output_zp} if integer else {}))
    b.op("SVDF", [x, wf, wt, bias, state], [y], rank=spec.rank,
         fused_activation_function=spec.activation, asymmetric_quantize_inputs=spec.asymmetric)
    return b.build([x], [y])


def feeds(spec: SvdfSpec, invokes: int = 3, seed: int = 1, grid: bool = False):
    """Random inputs; ``grid``: on k / 32, as int8 data dequantized (rounding ties)."""
    rng = np.random.default_rng(seed)
    shape = (spec.batch, spec.n_input)
    if spec.kind == "integer":
        return [[rng.integers(-128, 128, shape).astype(np.int8)] for _ in range(invokes)]
    if grid:
        return [[(rng.integers(-32, 33, shape) / 32).astype(np.float32)]
                for _ in range(invokes)]
    out = [[rng.uniform(-1, 1, shape).astype(np.float32)] for _ in range(invokes)]
    out[1][0][0] = 0  # a batch row of zeros
    return out


VARIANTS = {
    "rank1": SvdfSpec(),
    "rank2_tanh": SvdfSpec(rank=2, activation="TANH"),
    "rank3_no_bias": SvdfSpec(rank=3, bias=False, batch=1, memory=3),
    "none_batch3": SvdfSpec(activation="NONE", batch=3, memory=1),
    "wide": SvdfSpec(n_input=20, units=8, rank=2, memory=10),
}


@pytest.mark.parametrize("kind", ["float", "hybrid", "hybrid_asymmetric"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_float_and_hybrid_match_litert(name, kind):
    spec = VARIANTS[name]
    spec = SvdfSpec(**{**spec.__dict__, "kind": kind.split("_")[0],
                       "asymmetric": kind.endswith("asymmetric")})
    for seed in (1, 2):
        outs = assert_matches_litert_over_invokes(svdf_model(spec), feeds(spec, seed=seed),
                                                  rtol=0 if spec.kind == "hybrid" else 1e-5)
        assert outs[0][0].shape == (spec.batch, spec.units)
        np.testing.assert_array_equal(outs[0][0], outs[3][0])  # after the reset: as at first


@pytest.mark.parametrize("asymmetric", [False, True], ids=["symmetric", "asymmetric"])
def test_hybrid_on_dequantized_inputs_matches_litert(asymmetric):
    spec = SvdfSpec(kind="hybrid", asymmetric=asymmetric, n_input=20, units=8, rank=2,
                    memory=6)
    assert_matches_litert_over_invokes(svdf_model(spec), feeds(spec, 6, seed=4, grid=True),
                                       rtol=0)


INTEGER = {
    "rank1": SvdfSpec(kind="integer"),
    "rank2": SvdfSpec(kind="integer", rank=2, input_zp=-3, output_zp=7),
    "rank4_no_bias_batch1": SvdfSpec(kind="integer", rank=4, bias=False, batch=1, units=3),
    "wide": SvdfSpec(kind="integer", n_input=24, units=8, rank=2, memory=12, batch=3),
}


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_is_bit_exact(name):
    spec = INTEGER[name]
    for seed in (1, 2, 3):
        outs = assert_matches_litert_over_invokes(svdf_model(spec), feeds(spec, 4, seed=seed))
        states = np.concatenate([o[1].reshape(-1) for o in outs])
        assert np.any(states != 0) and np.any(np.abs(states) > 1000)  # the state moves
        ys = np.concatenate([o[0].reshape(-1) for o in outs])
        assert len(np.unique(ys)) > 5  # not saturated


@pytest.mark.parametrize("spec, want", [
    (SvdfSpec(), 1), (SvdfSpec(kind="hybrid"), 2), (SvdfSpec(kind="hybrid", asymmetric=True), 4),
    (SvdfSpec(kind="integer"), 3)], ids=["float", "hybrid", "hybrid_asymmetric", "integer"])
def test_version_rule(spec, want):
    model = load_model(svdf_model(spec))
    sg = model.subgraphs[0]
    assert OPS["SVDF"].version(signature_of(sg.operators[0], sg)) == want


def _set_option(**values):
    def change(sg, m):
        for k, v in values.items():
            setattr(sg.operators[0].builtinOptions, k, v)
    return change


@pytest.mark.parametrize("spec, edit, error, text", [
    (SvdfSpec(units=4, rank=3), None, ShapeError, "rank 3 must be >= 1 and divide the"),
    (SvdfSpec(kind="integer"), _set_option(fusedActivationFunction=0), UnsupportedOpError,
     "LiteRT's integer SVDF takes only the RELU activation"),
], ids=["rank_does_not_divide", "integer_not_relu"])
def test_bad_files_get_one_line(spec, edit, error, text):
    from tests.interpreter.lstm_models import edited
    model = svdf_model(spec)
    if spec.rank == 3 and edit is None:  # 12 filters, rank 3 -> edit the rank to 5
        model = edited(model, _set_option(rank=5))
        text = "rank 5 must be >= 1 and divide the 12 filters"
    else:
        model = edited(model, edit)
    with pytest.raises(error) as info:
        Interpreter(model_content=model).allocate_tensors()
    assert text in str(info.value) and "SVDF" in str(info.value)
