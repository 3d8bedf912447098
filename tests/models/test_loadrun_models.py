"""TensorFlow's files that did not load or run (models/builders/zoo_loadrun.py, issue 25).

* dyn_audio: an STFT audio classifier on a [-1, -1] waveform. TF's framing writes a
  SPLIT_V with a zero-element piece on an empty buffer of its own (it used to be refused
  as "already defined by the file"), SHAPE chains into RANGE / PADV2 / STRIDED_SLICE /
  RESHAPE (the support report flagged them as computed at run time) and a CAST from
  complex64.
* dyn_chains: shapes computed from tf.shape through REDUCE_PROD, CAST, MUL, GATHER,
  PACK, FILL, CONCATENATION and RANGE.

Resized to several shapes on one interpreter, each folds every shape at allocation
(nothing dynamic, only the ops on data left to run), matches LiteRT with the same kernel
set (test_shape_models' rule: integers exactly, floats within LiteRT's own spread) and
TF's outputs within 1e-5 relative (the log-mel head: 1e-4); the support report finds
nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgelite.interpreter import load_model
from edgelite.interpreter.support import report
from tests.conftest import MODELS

from .test_shape_models import KERNEL_SETS, _assert_agree, _runtimes

# the ops left to run after folding: those on data only
AUDIO_OPS = ("PADV2 STRIDED_SLICE RESHAPE GATHER RESHAPE MUL EXPAND_DIMS RFFT2D SQUEEZE "
             "COMPLEX_ABS FULLY_CONNECTED LOG EXPAND_DIMS CONV_2D MEAN FULLY_CONNECTED CAST "
             "MUL MEAN")
CHAIN_OPS = "RESHAPE MUL CONCATENATION RESHAPE STRIDED_SLICE SUB GATHER TRANSPOSE RESHAPE ADD"
CASES = {  # file: (input shapes, ops left after folding, TF tolerance)
    "dyn_audio": (((1, 1000), (2, 300), (3, 64), (1, 129), (1, 1000)), AUDIO_OPS, 1e-4),
    "dyn_chains": (((1, 6), (2, 9), (3, 2), (1, 6)), CHAIN_OPS, 1e-5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resized_files_fold_and_match_litert_and_tf(name):
    shapes, ops, tol = CASES[name]
    golden = np.load(MODELS / f"{name}.golden.npz")
    runtimes = _runtimes(f"{name}.tf.tflite")
    for shape in shapes:
        key = "x".join(map(str, shape))
        results = {}
        for runtime, interp in runtimes.items():
            runner = interp.get_signature_runner()
            (input_name,) = runner.get_input_details()
            results[runtime] = runner(**{input_name: golden[f"{key}/{input_name}"]})
        outputs = sorted(results["litert-reference"])
        assert outputs == sorted(k.split("/")[1] for k in golden.files
                                 if k.startswith(f"{key}/") and not k.endswith(input_name))
        for out in outputs:
            _assert_agree({k: r[out] for k, r in results.items()}, f"{key} {out}")
            want, got = golden[f"{key}/{out}"], results["edgelite-reference"][out]
            assert got.shape == want.shape, (key, out)
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
        for k in KERNEL_SETS:  # every shape folded at allocation: nothing dynamic
            interp = runtimes[f"edgelite-{k}"]
            operators = interp._model.subgraphs[0].operators
            assert not interp._alloc.dynamic, (key, k)
            assert " ".join(operators[i].name for i in interp._alloc.step_ops) == ops


@pytest.mark.parametrize("name", sorted(CASES))
def test_support_report_finds_nothing(name):
    model = load_model((MODELS / f"{name}.tf.tflite").read_bytes())
    assert report(model) == []
