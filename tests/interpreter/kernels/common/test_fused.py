"""The fused activation of a float op (fused.py): the ones TFLite's kernels do not apply
are refused."""

import pytest

from edgelite.interpreter import UnsupportedOpError
from tests.support import rand, run_edgelite

from ...tflite_builder import single_op_model


@pytest.mark.parametrize("act", ["TANH", "SIGN_BIT"])
def test_unsupported_fused_activation(rng, act):
    model = single_op_model("ADD", [(2,), (2,)], (2,), fused_activation_function=act)
    with pytest.raises(UnsupportedOpError, match=f"fused activation {act}"):
        run_edgelite(model, [rand(rng, (2,)), rand(rng, (2,))])
