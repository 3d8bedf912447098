"""interpreter/kernels/lstm/integer_params.py: the integer LSTM's parameters come from the
intermediates TFLite's quantizer records and power-of-two state scales; a file without
them is one line naming the op."""

from __future__ import annotations

import pytest

from edgelite.errors import ShapeError, UnsupportedOpError
from tests.interpreter.lstm_models import LstmSpec, assert_refused


def _no_hidden_scale(sg, m):
    sg.tensors[sg.operators[0].intermediates[4]].quantization = None


def _no_intermediates(sg, m):
    sg.operators[0].intermediates = []


def _cell_scale_not_pot(sg, m):
    sg.tensors[sg.operators[0].inputs[19]].quantization.scale = [0.0003]


HOSTILE = [
    ("no_hidden_scale", _no_hidden_scale, ShapeError,
     "intermediate 4 ('hidden_intermediate') of the integer LSTM has no quantization"),
    ("no_intermediates", _no_intermediates, UnsupportedOpError,
     "needs the 5 intermediate tensors TFLite's quantizer records"),
    ("cell_scale_not_pot", _cell_scale_not_pot, UnsupportedOpError,
     "cell state 'cell_state' has scale 0.0003"),
]


@pytest.mark.parametrize("name, change, error, text", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_files_get_one_line_naming_the_op(name, change, error, text):
    assert_refused(LstmSpec(integer=True), change, error, text)
