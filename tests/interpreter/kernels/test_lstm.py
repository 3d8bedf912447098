"""UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM (interpreter/kernels/lstm/__init__.py: the records, the
choice of the float, hybrid or integer cell): files it refuses get one line naming the op.
The cells: lstm/test_float_cell.py, lstm/test_integer_cell.py, lstm/test_hybrid_cell.py."""

from __future__ import annotations

import pytest

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.schema import generated_tflite as tfl
from tests.interpreter.lstm_models import LstmSpec, assert_refused


def _inputs_21(sg, m):
    sg.operators[0].inputs = sg.operators[0].inputs[:21]


def _basic_kernel(sg, m):
    sg.operators[0].builtinOptions.kernelType = 1


def _hybrid(sg, m):  # float input and output, int8 weights
    for index in (sg.operators[0].inputs[0], sg.operators[0].outputs[0]):
        sg.tensors[index].type = tfl.TensorType.FLOAT32
        sg.tensors[index].quantization = None


HOSTILE = [
    ("inputs_21", LstmSpec(), _inputs_21, ShapeError,
     "expects 20 or 24 inputs (24 with layer norm), the file gives 21"),
    # float input with an integer LSTM's int8 / int16 states: not a hybrid LSTM LiteRT runs
    ("hybrid_integer_states", LstmSpec(integer=True), _hybrid, UnsupportedOpError,
     "state 'output_state' is int8; a hybrid LSTM's states are float32"),
]


@pytest.mark.parametrize("name, spec, change, error, text", HOSTILE,
                         ids=[h[0] for h in HOSTILE])
def test_hostile_files_get_one_line_naming_the_op(name, spec, change, error, text):
    assert_refused(spec, change, error, text)


def test_lstm_basic_kernel_is_refused():
    assert_refused(LstmSpec(), _basic_kernel, UnsupportedOpError, "BASIC LSTM kernel type",
                   op="LSTM")
