"""Lower one-node GraphDefs, run the .tflite and compare with numpy (helper, no TensorFlow).

    g = graph(x=(1, 4, 4, 3))                       # Placeholder "x", float32
    g.node("y", "Relu", ["x"], T=F32)
    check(g, {"x": x}, np.maximum(x, 0), ops=["RELU"])

`check` converts the GraphDef with `convert_detailed` (float; the default passes, or with
`passes=NONE` only the passes export needs), runs the model in edgelite's Interpreter -- and,
when LiteRT is installed, in LiteRT's optimized kernels without XNNPACK, so a wrong lowering
cannot hide behind a matching interpreter bug -- and asserts each output's dtype, shape and values
against the numpy reference, and the exact TFLite op types of the exported model.

Each test module declares `COVERED`: the TF op types it tests; test_coverage.py checks that
together they are exactly the lowering registry's keys.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.converter.ir import Graph
from edgelite.converter.passes import PASS_NAMES, REQUIRED
from tests.conftest import ORACLE, _import_oracle
from tests.support import (KERNEL_SETS, edgelite_interpreter, invoke, litert_interpreter,
                           run_edgelite, run_litert)

from ..tfgraph import GraphBuilder

# LiteRT is a test dependency; without it (outside CI) only edgelite runs the model.
HAVE_LITERT = _import_oracle(ORACLE) is not None

F32 = np.dtype(np.float32)
I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

# Every pass that may be switched off: the model is then what the rules emitted, minus the
# converter-only IDENTITY / MATMUL ops the required passes rewrite.
NONE = frozenset(PASS_NAMES) - REQUIRED
DEFAULT = frozenset()

RNG_SEED = 20240611


def rng() -> np.random.Generator:
    """A fresh generator per test: results do not depend on which tests ran before."""
    return np.random.default_rng(RNG_SEED)


def floats(r: np.random.Generator, *shape, lo=-2.0, hi=2.0) -> np.ndarray:
    return r.uniform(lo, hi, shape).astype(np.float32)


def graph(**placeholders) -> GraphBuilder:
    """A builder with one Placeholder per keyword: name=shape or name=(shape, dtype)."""
    g = GraphBuilder()
    for name, spec in placeholders.items():
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], np.dtype):
            g.placeholder(name, list(spec[0]), spec[1])
        else:
            g.placeholder(name, list(spec))
    return g


@dataclass
class Run:
    outputs: list[np.ndarray]
    ops: list[str]                # TFLite op types of the exported model, in execution order
    lowered: dict[str, int]       # IR op counts straight after lowering (what the rules made)
    graph: Graph                  # the IR after the passes
    model: bytes


def run(g: GraphBuilder, feeds: dict[str, np.ndarray], outputs: list[str],
        passes: frozenset[str] = DEFAULT, rtol: float = 1e-6, atol: float = 1e-6) -> Run:
    """Convert g (inputs: the feeds' names, in order), run it in edgelite; also in LiteRT,
    whose outputs must agree with edgelite's to rtol/atol (float kernels sum in different
    orders; integer and bool outputs exactly)."""
    result = convert_detailed(g.bytes(), ConvertOptions(
        inputs=list(feeds) or None, outputs=list(outputs), disabled_passes=frozenset(passes)))
    interp = edgelite_interpreter(result.model)
    ours = _invoke(interp, feeds)
    if HAVE_LITERT:
        ref = litert_interpreter(result.model, "optimized")
        for a, b in zip(ours, _invoke(ref, feeds), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="edgelite vs LiteRT")
    return Run(ours, [d["op_name"] for d in interp._get_ops_details()],
               result.lowered_op_counts, result.graph, result.model)


def _invoke(interp, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's inputs are exactly the feeds, in order; its outputs."""
    assert [d["name"] for d in interp.get_input_details()] == list(feeds)
    return invoke(interp, list(feeds.values()))


def runs_in_edgelite_and_litert(model: bytes, feeds) -> list[list[np.ndarray]]:
    """The outputs of ``model`` in edgelite and -- when installed -- in LiteRT (default
    kernels), for tests that compare each with a tolerance of their own."""
    runs = [run_edgelite(model, feeds)]
    return runs + [run_litert(model, feeds, "default")] if HAVE_LITERT else runs


def check(g: GraphBuilder, feeds: dict[str, np.ndarray], expected, ops: list[str],
          outputs: list[str] | None = None, passes: frozenset[str] = DEFAULT,
          rtol: float = 1e-5, atol: float = 1e-6, lowered: dict[str, int] | None = None) -> Run:
    """Run g and assert: outputs equal `expected` (one array or a list; same dtype and shape,
    values to rtol/atol -- exact for integer and bool outputs), the exported model's op
    types are exactly `ops`, and (if given) the IR straight after lowering has exactly the
    op counts `lowered`. Outputs default to ["y"]."""
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    r = run(g, feeds, outputs or ["y"], passes, rtol, atol)
    assert len(r.outputs) == len(expected)
    for k, (got, want) in enumerate(zip(r.outputs, expected)):
        want = np.asarray(want)
        assert got.dtype == want.dtype, f"output {k}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"output {k}: shape {got.shape}, expected {want.shape}"
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=f"output {k}")
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {k}")
    assert r.ops == ops
    if lowered is not None:
        assert r.lowered == lowered
    return r


def run_int8(g: GraphBuilder, feeds: dict[str, np.ndarray], calib: dict[str, np.ndarray],
             outputs: list[str] | None = None) -> tuple[Run, list[np.ndarray]]:
    """Convert g to int8, calibrated on `calib` (each input's samples along a new first
    axis), and run it on `feeds` in edgelite's two kernel sets and -- when installed -- in
    LiteRT's (BUILTIN_REF, and the default set with XNNPACK), asserting each LiteRT set is
    bit-exact with edgelite's. Returns the Run (edgelite's reference outputs) and edgelite's
    default-set outputs."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "calib.npz"
        np.savez(path, **calib)
        result = convert_detailed(g.bytes(), ConvertOptions(
            inputs=list(feeds), outputs=list(outputs or ["y"]),
            quantize=QuantizeOptions(calib=str(path))))
    runs = {kernels: _invoke(edgelite_interpreter(result.model, kernels), feeds)
            for kernels in KERNEL_SETS}
    if HAVE_LITERT:
        for kernels in KERNEL_SETS:
            theirs = _invoke(litert_interpreter(result.model, kernels), feeds)
            for a, b in zip(runs[kernels], theirs, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=f"edgelite vs LiteRT ({kernels})")
    ops = [d["op_name"] for d in edgelite_interpreter(result.model)._get_ops_details()]
    return Run(runs["reference"], ops, result.lowered_op_counts, result.graph,
               result.model), runs["default"]
