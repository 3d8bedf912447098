"""The op records (kernels/opdef.py) as the interpreter sees them: KERNELS is derived from
OPS, the records' facts hold together and agree with the schema and LiteRT, and a kernel
with several strategies puts the chosen strategy's own eval in the invoke() list."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.kernels import KERNELS, OPS, activations, conv, softmax
from edgelite.interpreter.kernels.base import Kernel
from edgelite.interpreter.kernels.opdef import OpDef, QuantRule, collect
from edgelite.schema import ops as schema_ops
from tests.support import litert_interpreter

from ..op_models import op_model
from .test_conv import conv_model
from .test_softmax import softmax_model


def test_kernels_are_the_records_kernels():
    assert set(KERNELS) == set(OPS)
    for name, op in OPS.items():
        assert op.name == name and name in schema_ops.BUILTIN_CODE
    # One kernel for every input: the record's own; both paths: chosen in prepare().
    assert KERNELS["QUANTIZE"] is OPS["QUANTIZE"].float
    assert KERNELS["RELU"] not in (OPS["RELU"].float, OPS["RELU"].integer)


def test_quantization_facts_hold_together():
    for name, op in OPS.items():
        # The quantizer emits an op in int8 only where an int8 kernel runs it.
        assert op.has_integer or op.quant is QuantRule.FLOAT_ONLY, name
        assert (op.fixed_output is not None) == (op.quant is QuantRule.FIXED_OUTPUT), name
        assert not (op.exact and op.quant is QuantRule.FLOAT_ONLY), name
        assert not (op.per_sample and op.reduction), name
    # int8 RELU_N1_TO_1 / RELU_0_TO_1 have integer kernels, so they quantize like RELU.
    assert {n for n in ("RELU", "RELU_N1_TO_1", "RELU_0_TO_1", "RELU6")
            if OPS[n].quant is QuantRule.OWN_RANGE} == {"RELU", "RELU_N1_TO_1",
                                                         "RELU_0_TO_1", "RELU6"}


def test_fused_activation_needs_the_option():
    for name, op in OPS.items():
        if op.fused_activation:
            assert "fused_activation_function" in schema_ops.default_options(name), name


# The recurrent ops' option is the cell's own activation (applied inside the cell), not a
# clamp of the output: the converter never fuses a following activation into them.
RECURRENT = {"LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM", "RNN",
             "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN", "SVDF"}


def _has_option_without_fusion():
    return sorted(n for n, op in OPS.items() if not op.fused_activation
                  and "fused_activation_function" in schema_ops.default_options(n)
                  and n not in RECURRENT)


def test_the_unfused_ops_with_the_option_are_the_ones_litert_refuses():
    assert _has_option_without_fusion() == ["CONCATENATION", "L2_NORMALIZATION"]


@pytest.mark.parametrize("op", _has_option_without_fusion())
def test_litert_refuses_a_fused_activation_where_the_record_has_none(op):
    x = np.ones((1, 4), np.float32)
    operands, out, extra = ([x, x], (1, 8), {"axis": 1}) if op == "CONCATENATION" else \
        ([x], (1, 4), {})
    model, _ = op_model(op, operands, [(out, np.float32)], fused_activation_function="RELU",
                        **extra)
    with pytest.raises(RuntimeError, match="activation != kTfLiteActNone"):
        litert_interpreter(model)  # LiteRT's reference kernels: Prepare fails


def test_records_take_their_facts_by_keyword():
    kernel = OPS["RELU"].float
    with pytest.raises(TypeError):
        OpDef("RELU", kernel)  # the kernel must be named: float= or integer=
    assert OpDef("RELU", float=kernel).kernel is kernel


def test_an_op_declared_twice_is_refused():
    class Module:
        __name__ = "twice"
        OPS = (OpDef("RELU", float=Kernel(None, None)), OpDef("RELU", float=Kernel(None, None)))

    with pytest.raises(ValueError, match="RELU is declared twice"):
        collect(Module)


# --------------------------------------------------------------------------- strategies


def _step(model: bytes, **kw):
    """(eval, record) of the one op's invoke() step."""
    interp = Interpreter(model_content=model, **kw)
    interp.allocate_tensors()
    (fn, record, _, _), = interp._steps
    return fn, record


@pytest.mark.parametrize("kernel,stride,eval_fn,record_type", [
    (1, 1, conv.eval_pointwise, conv.PointwiseRecord),
    (3, 1, conv.eval_im2col, conv.Im2colRecord),
    (3, 2, conv.eval_im2col, conv.Im2colRecord),
])
def test_float_conv_steps_call_their_strategy(rng, kernel, stride, eval_fn, record_type):
    w = rng.uniform(-1, 1, (4, kernel, kernel, 3)).astype(np.float32)
    model = conv_model((1, 8, 8, 3), w, np.zeros(4, np.float32), stride=(stride, stride))
    fn, record = _step(model, native=False)  # (the native step: test_native_conv_blas)
    assert fn is eval_fn and type(record) is record_type


def test_float_conv_taps_strategy_is_its_own_step(rng, monkeypatch):
    monkeypatch.setattr(conv, "IM2COL_MAX_BYTES", 0)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    fn, record = _step(conv_model((1, 8, 8, 3), w, np.zeros(4, np.float32)), native=False)
    assert fn is conv.eval_taps and len(record.taps) == 9


@pytest.mark.parametrize("kernels,eval_fn,record_type", [
    ("reference", softmax.eval_reference, softmax.ReferenceSoftmaxRecord),
    ("default", softmax.eval_table, softmax.TableSoftmaxRecord),
])
def test_int8_softmax_steps_call_their_kernel_sets_arithmetic(kernels, eval_fn, record_type):
    fn, record = _step(softmax_model(np.int8, (2, 10), (0.05, 3), 1.0), kernels=kernels,
                       native=False)  # the numpy kernels (the native one: test_native_ops)
    assert fn is eval_fn and type(record) is record_type


@pytest.mark.parametrize("approximate,eval_fn", [(True, activations.eval_gelu_tanh),
                                                 (False, activations.eval_gelu_erfc)])
def test_gelu_steps_call_their_formula(approximate, eval_fn):
    x = np.linspace(-3, 3, 8, dtype=np.float32)
    model, _ = op_model("GELU", [x], [((8,), np.float32)], approximate=approximate)
    assert _step(model, native=False)[0] is eval_fn  # (the C kernel: test_native_float_ops)
