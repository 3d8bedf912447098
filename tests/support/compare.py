"""Assertions that edgelite's outputs match an oracle's (test helper).

    assert_matches_litert(model, [x])        # float: close to LiteRT's BUILTIN_REF
    assert_bit_exact(model, [x])             # integer: equal in both kernel sets
    assert_sequence_matches_litert(model, [[x0], [x1]])   # state across invokes
    assert_micro_exact(model, [x])           # kernels="micro" equal to TFLite Micro
"""

from __future__ import annotations

import numpy as np
import pytest

from .runtimes import (KERNEL_SETS, edgelite_interpreter, invoke, litert_interpreter,
                       run_edgelite, run_edgelite_samples, run_litert, run_micro_samples,
                       run_sequence)


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol=1e-5, atol_factor=1e-6):
    """allclose with an absolute tolerance relative to the reference's magnitude; integer
    and bool arrays exactly; dtype and shape equal."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol_factor * max(scale, 1e-30))


def assert_all_close(ours: list[np.ndarray], ref: list[np.ndarray], **tolerances) -> None:
    """assert_close per output; inf / NaN must sit at the same places (the tolerance is
    taken over the finite values only)."""
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        if a.dtype.kind == "f":
            finite = np.isfinite(b)
            np.testing.assert_array_equal(a[~finite], b[~finite])
            a, b = a[finite], b[finite]
        assert_close(a, b, **tolerances)


def assert_matches_litert(model: bytes, feeds, **tolerances) -> list[np.ndarray]:
    """edgelite (default kernels) and LiteRT's reference kernels on the same feeds: every
    output close (assert_close)."""
    ours = run_edgelite(model, feeds)
    ref = run_litert(model, feeds)
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert_close(a, b, **tolerances)
    return ours


def assert_equal_outputs(ours: list[np.ndarray], expected: list[np.ndarray], what: str,
                         oracle: str = "LiteRT", equal_nan: bool = True) -> None:
    """Same count, dtype, shape and every element (with ``equal_nan``, NaN equals NaN);
    the failure names ``what`` and the first differing elements."""
    assert len(ours) == len(expected), (what, len(ours), len(expected))
    for i, (a, b) in enumerate(zip(ours, expected)):
        assert a.dtype == b.dtype and a.shape == b.shape, (what, i, a.dtype, b.dtype,
                                                            a.shape, b.shape)
        floating = equal_nan and a.dtype.kind == "f"
        if np.array_equal(a, b, equal_nan=floating):
            continue
        differ = (a != b) & ~(np.isnan(a) & np.isnan(b)) if floating \
            else a.astype(np.int64) != b.astype(np.int64)
        diff = np.flatnonzero(differ)
        pytest.fail(f"{what} output {i}: {diff.size} of {a.size} elements differ; first at "
                    f"{diff[:5].tolist()}: ours {a.reshape(-1)[diff[:5]].tolist()} vs "
                    f"{oracle} {b.reshape(-1)[diff[:5]].tolist()}")


def assert_bit_exact(model: bytes, feeds, kernels=KERNEL_SETS) -> dict[str, list[np.ndarray]]:
    """edgelite(kernels=k) equals LiteRT with k's resolver, output for output (a NaN
    anywhere fails), for each k; edgelite's outputs by kernel set."""
    results = {}
    for k in kernels:
        expected = run_litert(model, feeds, k)
        ours = run_edgelite(model, feeds, k)
        assert_equal_outputs(ours, expected, f"kernels={k}", equal_nan=False)
        results[k] = ours
    return results


def assert_sequence_matches_litert(model: bytes, feeds, reset_after=None,
                                   **kwargs) -> list[list[np.ndarray]]:
    """Every output of every invoke (one per entry of ``feeds``) equal, float ones too, in
    edgelite and LiteRT, per kernel set; edgelite's reference-set outputs."""
    for kernels in ("default", "reference"):
        ours = run_sequence(edgelite_interpreter(model, kernels, **kwargs), feeds, reset_after)
        ref = run_sequence(litert_interpreter(model, kernels), feeds, reset_after)
        for n, (a_run, b_run) in enumerate(zip(ours, ref, strict=True)):
            assert_equal_outputs(a_run, b_run, f"invoke {n}, {kernels}")
    return ours


def assert_micro_exact(model: bytes, feeds) -> list[np.ndarray]:
    """Every output of edgelite(kernels="micro") equals TFLM's, dtype and shape too."""
    return assert_micro_exact_samples(model, [feeds])[0]


def assert_micro_exact_samples(model: bytes, samples) -> list[list[np.ndarray]]:
    """assert_micro_exact on each of ``samples``, with one interpreter of each kind."""
    expected = run_micro_samples(model, samples)
    ours = run_edgelite_samples(model, samples)
    for n, (mine, theirs) in enumerate(zip(ours, expected)):
        assert_equal_outputs(mine, theirs, f"kernels=micro sample {n}", "TFLM")
    return ours


def _require_native():
    """The native module; skips where the extension is not built (fails under CI)."""
    import os

    from edgelite.interpreter import native

    if not native.built():
        if os.environ.get("CI"):
            pytest.fail("the native extension is not built (python setup.py build_ext --inplace)")
        pytest.skip("native kernels not built")
    return native


def _native_step_count(interp, native) -> int:
    return sum(1 for s in interp._steps if s[0] is native.module.run_native_step
               and isinstance(s[1], native.module.NativeStep))


def assert_native_steps(model: bytes, feeds, steps: int, kernels=KERNEL_SETS) -> None:
    """With the native backend, at 1 and 2 threads, ``steps`` of ``model``'s ops run as
    native steps of the C run loop (docs/native-run-loop.md) and every output equals the
    numpy backend's and LiteRT's, for each kernel set. Skips where the extension is not
    built (fails under CI)."""
    native = _require_native()
    for k in kernels:
        expected = run_litert(model, feeds, k)
        for threads in (1, 2):
            ours = edgelite_interpreter(model, k, native=True, num_threads=threads)
            ran = _native_step_count(ours, native)
            assert ran == steps, f"kernels={k}, {threads} threads: {ran} native steps"
            for name, got in (("native", invoke(ours, feeds)),
                              ("numpy", run_edgelite(model, feeds, k, native=False,
                                                     num_threads=threads))):
                assert_equal_outputs(got, expected, f"kernels={k}, {name}, {threads} threads",
                                     equal_nan=False)


def assert_float_native_steps(model: bytes, feeds, steps: int = 1, threads=(1, 2, 3),
                              litert: bool = True) -> list[np.ndarray]:
    """Float ops on the native backend: at each thread count ``steps`` ops run as native
    steps, and every output has the numpy backend's bits -- with ``litert``, its values
    (the numpy clamp makes +0 of a -0 that LiteRT's std::max keeps) and LiteRT reference's
    bits wherever LiteRT does not clamp an infinity to +-FLT_MAX (BUILTIN_REF does without
    a fused activation; the numpy kernels and XNNPACK do not). Returns the numpy backend's
    outputs. Skips where the extension is not built (fails under CI)."""
    native = _require_native()
    plain = run_edgelite(model, feeds, native=False)
    want = run_litert(model, feeds, "reference") if litert else None
    for n in threads:
        interp = edgelite_interpreter(model, native=True, num_threads=n)
        ran = _native_step_count(interp, native)
        assert ran == steps, f"{n} threads: {ran} native steps, expected {steps}"
        for i, (got, numpy_bits) in enumerate(zip(invoke(interp, feeds), plain)):
            what = f"output {i}, {n} threads"
            if want is None:
                np.testing.assert_array_equal(got.view(np.int32), numpy_bits.view(np.int32),
                                              what)
            else:
                np.testing.assert_array_equal(got, numpy_bits, what)
                finite = np.abs(want[i]) < np.finfo(np.float32).max
                np.testing.assert_array_equal(got.view(np.int32)[finite],
                                              want[i].view(np.int32)[finite], what)
    return plain


def assert_native_fits_where_numpy_does_not(model: bytes, memory_limit: int) -> None:
    """allocate_tensors() under ``memory_limit`` holds on the native backend and is refused
    on the numpy one: the native record leaves out the numpy eval's scratch."""
    from edgelite.interpreter import Interpreter, MemoryLimitError

    _require_native()
    Interpreter(model_content=model, native=True, memory_limit=memory_limit).allocate_tensors()
    with pytest.raises(MemoryLimitError):
        Interpreter(model_content=model, native=False,
                    memory_limit=memory_limit).allocate_tensors()


def assert_folded_alike(model: bytes) -> None:
    """A model of constants only is folded at allocate on both backends (no invoke steps
    left) to the same outputs: the native eval where the native step cannot bind."""
    _require_native()
    outs = []
    for backend in (True, False):
        interp = edgelite_interpreter(model, native=backend)
        assert interp._steps == ()
        outs.append(invoke(interp, []))
    assert_equal_outputs(outs[0], outs[1], "folded on the native backend", oracle="numpy")
