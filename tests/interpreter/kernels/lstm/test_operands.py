"""interpreter/kernels/lstm/operands.py: an LSTM's weight, bias and state operands are
checked against the sizes the input and the states give; a wrong one is one line naming
the operand and the op."""

from __future__ import annotations

import pytest

from edgelite.errors import ShapeError
from tests.interpreter.lstm_models import LstmSpec, assert_refused


def _recurrent_shape(sg, m):  # recurrent_to_forget_weights: same bytes, [2, 8] not [4, 4]
    sg.tensors[sg.operators[0].inputs[6]].shape = [2, 8]


def _input_weights_shape(sg, m):  # input_to_cell_weights [3, 4] instead of [4, 3]
    sg.tensors[sg.operators[0].inputs[3]].shape = [3, 4]


HOSTILE = [
    ("recurrent_shape", _recurrent_shape,
     "recurrent_to_forget_weights 'recurrent_to_1' has shape [2, 8]; expected [4, 4]"),
    ("input_weights_shape", _input_weights_shape,
     "input_to_cell_weights 'input_to_2' has shape [3, 4]; expected [4, 3]"),
]


@pytest.mark.parametrize("name, change, text", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_files_get_one_line_naming_the_op(name, change, text):
    assert_refused(LstmSpec(), change, ShapeError, text)
