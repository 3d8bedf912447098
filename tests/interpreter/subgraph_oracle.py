"""Run a model with several subgraphs or state through a sequence of invokes in edgelite
and in LiteRT (both op resolvers), for the control-flow and variable tests."""

from __future__ import annotations

import numpy as np

from edgelite.interpreter import Interpreter
from tests.conftest import litert_module

KERNEL_SETS = (("default", "AUTO"), ("reference", "BUILTIN_REF"))


def _litert(model: bytes, resolver: str):
    litert = litert_module()
    interp = litert.Interpreter(
        model_content=model,
        experimental_op_resolver_type=getattr(litert.OpResolverType, resolver))
    interp.allocate_tensors()
    return interp


def run_sequence(interp, feeds, reset_after=None) -> list[list[np.ndarray]]:
    """Invoke once per entry of ``feeds`` (a list of input lists); every output of every
    invoke, as arrays. ``reset_after``: call reset_all_variables() after that many."""
    results = []
    inputs = interp.get_input_details()
    outputs = interp.get_output_details()
    for n, feed in enumerate(feeds):
        if n == reset_after:
            interp.reset_all_variables()
        for detail, value in zip(inputs, feed):
            interp.set_tensor(detail["index"], value)
        interp.invoke()
        results.append([np.asarray(interp.get_tensor(d["index"])) for d in outputs])
    return results


def assert_sequence_matches_litert(model: bytes, feeds, reset_after=None,
                                   **kwargs) -> list[list[np.ndarray]]:
    """Every output of every invoke equal (bit for bit: float ones too, as the ops here
    compute the same float32 operations) in edgelite and LiteRT, per kernel set."""
    for ours_name, resolver in KERNEL_SETS:
        ours = run_sequence(_edgelite(model, ours_name, **kwargs), feeds, reset_after)
        ref = run_sequence(_litert(model, resolver), feeds, reset_after)
        for n, (a_run, b_run) in enumerate(zip(ours, ref, strict=True)):
            for a, b in zip(a_run, b_run, strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape, (n, a, b)
                np.testing.assert_array_equal(a, b, err_msg=f"invoke {n}, {ours_name}")
    return ours


def _edgelite(model: bytes, kernels: str, **kwargs) -> Interpreter:
    interp = Interpreter(model_content=model, kernels=kernels, **kwargs)
    interp.allocate_tensors()
    return interp
