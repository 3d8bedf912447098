"""AdaRound's Adam loop on the native kernels (interpreter/native/adaround.c), where they
are built and not disabled (interpreter/native.py: EDGELITE_NATIVE=0 turns them off).

Per step numpy computes exp(-V), the BLAS product d G and the regulariser's power -- the
three operations whose float32 results are numpy's own implementation's -- and two C passes
do the rest of adaround.Relaxed's element-wise work and the Adam step, each value with the
same float32 operations in the same order (one rounding each, no fused multiply-add): V is
bit for bit the numpy loop's, so the learned integers and the file do not depend on the
backend (tests/converter/quantize/test_adaround.py). About 40 passes over the weights per
step become 5. The regulariser's power is computed for the live weights only (0 < h < 1;
the others' term is multiplied by dh = 0): the first C pass lists them, the second puts
their powers back.
"""

from __future__ import annotations

import numpy as np

from ...interpreter import native
from .adaround import Adam, Quadratic, Relaxed


def relaxed_for(quad: Quadratic, base, w, scale, free, reg) -> Relaxed:
    """The loop's element-wise work: native where available, else numpy."""
    module = native.module if native.choose(None) else None
    if module is None or not hasattr(module, "relax_update"):   # (an older build)
        return Relaxed(quad, base, w, scale, free, reg)
    return NativeRelaxed(module, quad, base, w, scale, free, reg)


class NativeRelaxed(Relaxed):
    def __init__(self, module, quad: Quadratic, base, w, scale, free, reg) -> None:
        super().__init__(quad, base, w, scale, free, reg)
        self.module = module
        self.free32 = np.ascontiguousarray(free, np.float32)      # masks as 0.0 / 1.0
        self.inside = np.empty_like(w)
        self.a, self.r = np.empty_like(w), np.empty_like(w)
        self.live_at, self.live = np.empty(w.shape, np.int32), np.empty_like(w)
        self.offset = np.ascontiguousarray(quad.offset, np.float32)
        self.per_channel = None   # a depthwise layer's G: d G in C (relax_depthwise)
        if quad.per_channel is not None and hasattr(module, "relax_depthwise"):
            self.per_channel = np.ascontiguousarray(quad.per_channel, np.float32)
            self.g = np.empty_like(w)
        self.scale = np.ascontiguousarray(scale, np.float32)

    def step(self, v: np.ndarray, adam: Adam, beta: float | None) -> None:
        e, d, dh, inside, a, r = self.sig, self.t, self.dh, self.inside, self.a, self.r
        np.negative(v, out=e)
        np.exp(e, out=e)
        count = self.module.relax_rounding(e, self.base, self.w, self.free32, d, dh, inside,
                                           a, r, self.live_at, self.live,
                                           float(self.STRETCH), float(self.SHIFT))
        if self.per_channel is not None:
            g = self.g
            self.module.relax_depthwise(d, self.per_channel, g, d.shape[1])
        else:
            g = np.ascontiguousarray(self.quad.apply(d), np.float32)
        factor = 0.0
        if beta is not None:      # the power only where the term is not multiplied by 0
            power, factor = np.float32(beta - 2.0), self.reg * np.float32(2.0 * beta)
            live = self.live.reshape(-1)[:count]
            np.power(live, power, out=live)
        lr, eps = adam.scalars()
        self.module.relax_update(g, self.offset, self.scale, beta is not None, a, r, inside,
                                 float(factor), dh, adam.x, adam.m, adam.v, adam.B1,
                                 1 - adam.B1, adam.B2, 1 - adam.B2, lr, eps, self.live_at,
                                 self.live, count)
