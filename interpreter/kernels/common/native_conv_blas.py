"""float32 CONV_2D (one group) as one native step on the C pool, each block of output
pixels multiplied by the filter on gemm_f32.c's packed-panel tiles (AVX2 + FMA) or else on
numpy's own BLAS (native/conv_blas.c).

The numpy kernel (conv.py) is one sgemm on the calling thread: OpenBLAS's own threads
spin between calls, so the Interpreter limits them to one (blas.py) and a second core sat
idle. Two sgemm calls from two threads do run in parallel (measured 1.9x on (1568 x 576) @
(576 x 128) halves), so the step cuts the output pixels into fixed blocks of
``conv_blas_block()`` (256) rows that the C pool's threads take in turn: each builds its
block's im2col rows in its own scratch (none for a 1x1 stride-1 unpadded filter), calls
sgemm, and adds the bias and clamps the rows while they are in cache. The blocks do not
depend on the thread count, so neither do the bits; against the numpy kernel's single
product they differ only where BLAS's own blocking of a shorter product rounds otherwise.

The sgemm is the ``cblas_sgemm`` of the OpenBLAS numpy loaded, found through threadpoolctl
(numpy's wheels: ``scipy_cblas_sgemm64_``, 64-bit integers); where there is none (another
BLAS, no threadpoolctl, no extension) the numpy kernel runs.

Where the CPU has AVX2 and FMA (``gemm_f32_fma()``) the filter is packed once, here, into
gemm_f32.c's panels of 16 output channels and the blocks' products run there instead: no
packing per call and no lock shared by the threads (OpenBLAS's small sgemm calls slowed
each other down ~2x on two threads). Its 6 x 16 FMA tile measured 1.1-1.4x OpenBLAS's
speed on one thread over the block shapes MobileNetV2 makes, and each value is one chain
of fused multiply-adds over K in order, so the bits still do not depend on the threads.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

import numpy as np

from ... import native as native_backend
from . import native_ops

# (symbol, 64-bit integers), most specific first
_SYMBOLS = (("scipy_cblas_sgemm64_", True), ("cblas_sgemm64_", True),
            ("scipy_cblas_sgemm", False), ("cblas_sgemm", False))
_lock = threading.Lock()
_ready: bool | None = None  # None: not looked up yet


def _find_sgemm() -> tuple[int, bool] | None:
    """(address, ilp64) of numpy's OpenBLAS cblas_sgemm, or None."""
    try:
        import numpy  # noqa: F401  (loads numpy's BLAS before the scan)
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    for lib in ThreadpoolController().select(user_api="blas").lib_controllers:
        if getattr(lib, "internal_api", None) != "openblas" or not lib.filepath:
            continue
        try:
            dll = ctypes.CDLL(lib.filepath)
        except OSError:
            continue
        for name, ilp64 in _SYMBOLS:
            fn = getattr(dll, name, None)
            if fn is not None:
                return ctypes.cast(fn, ctypes.c_void_p).value, ilp64
    return None


def _self_test(module) -> bool:
    """A 3 x 5 @ 5 x 4 product through the step equals numpy's (a wrong entry point or
    integer width would not)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 1, 5)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    out = np.zeros((1, 3, 1, 4), np.float32)
    module.conv_blas_step(x, w, None, out, None, (1, 3, 1, 5, 4),
                          (1, 1, 1, 1, 1, 1, 0, 0, 3, 1), False, 0.0, 0.0, 1)()
    return bool(np.allclose(out.reshape(3, 4), x.reshape(3, 5) @ w, rtol=1e-5, atol=1e-5))


def packed() -> bool:
    """The blocks' products run on gemm_f32.c's AVX2 + FMA tiles (packed filters)."""
    module = native_backend.module
    return hasattr(module, "gemm_f32_fma") and module.gemm_f32_fma()


def filter_matrix(o_by_k: np.ndarray) -> tuple[np.ndarray, bool]:
    """The (O, K) float32 filter (a row per output channel) as the step takes it: packed
    into panels (``packed()``, straight from these rows), else transposed to sgemm's (K, O)
    matrix; and whether it was packed."""
    if not packed():
        return np.ascontiguousarray(o_by_k.T, np.float32), False
    module = native_backend.module
    o, k = o_by_k.shape
    panels = np.empty(module.gemm_f32_packed_size(k, o), np.float32)
    module.pack_f32_panels(np.ascontiguousarray(o_by_k, np.float32), k, o, panels)
    return panels, True


def available() -> bool:
    """The step can run: the extension has it and its products have a kernel -- the packed
    tiles, or numpy's sgemm (looked up once a process)."""
    global _ready
    if _ready is None:
        with _lock:
            if _ready is None:
                module = native_backend.module
                found = _find_sgemm() if hasattr(module, "conv_blas_step") else None
                if found is not None:
                    module.set_sgemm(*found)
                    if not _self_test(module):
                        module.set_sgemm(0, False)
                        found = None
                _ready = found is not None
    return _ready or (hasattr(native_backend.module, "conv_blas_step") and packed())


@dataclass(frozen=True, eq=False)
class ConvBlas:
    """The step's arguments but the arrays: geometry, activation, threads; ``weights`` the
    filter as filter_matrix made it (``packed``: gemm_f32.c's panels, else the (KH * KW * C,
    O) matrix), ``bias`` (O,) or None; ``scratch`` None for a pointwise filter,
    else threads x block x K float32 (a temporary)."""

    weights: np.ndarray
    bias: np.ndarray | None
    scratch: np.ndarray | None
    dims: tuple  # (N, H, W, C, O)
    window: tuple  # (KH, KW, SH, SW, DH, DW, pad_top, pad_left, OH, OW)
    bounds: tuple  # (clamp, lo, hi)
    threads: int
    packed: bool = False  # weights: filter_matrix's panels (else sgemm's (K, O) matrix)

    def _step(self, x, out):
        return native_backend.module.conv_blas_step(
            x, self.weights, self.bias, out, self.scratch, self.dims, self.window,
            *self.bounds, self.threads, self.packed)

    def native_step(self, inputs, outputs):
        x, out = inputs[0], outputs[0]
        if not all(isinstance(a, np.ndarray) and a.flags.c_contiguous and a.dtype == np.float32
                   for a in (x, out)):
            return None
        return (native_backend.module.run_native_step, self._step(x, out), None, None)


def eval_conv_blas(rec: ConvBlas, inputs, outputs) -> None:
    native_ops.run_contiguous(rec._step, inputs[0], outputs[0])
