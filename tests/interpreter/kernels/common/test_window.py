"""interpreter/kernels/common/window.py: output sizes and padding of windowed ops (padding.h's
ComputeOutSize / ComputePaddingHeightWidth), window clipping, and the strided views the
conv and pool kernels read (the kernels against LiteRT: test_conv.py, test_pooling.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from edgelite.interpreter.kernels.common.window import (SAME, VALID, Window1D, patches_view,
                                                        tap_view, valid_counts, window_1d)


class _Refused(Exception):
    pass


CTX = SimpleNamespace(shape_error=lambda m: _Refused(f"shape: {m}"),
                      unsupported=lambda m: _Refused(f"unsupported: {m}"))


@pytest.mark.parametrize("size, k, stride, dilation, padding, want", [
    # (out, before, after): SAME out = ceil(in / s), the odd pixel of padding after
    (7, 3, 2, 1, SAME, (4, 1, 1)),
    (8, 3, 2, 1, SAME, (4, 0, 1)),
    (5, 3, 1, 2, SAME, (5, 2, 2)),      # effective kernel 5
    (7, 3, 2, 1, VALID, (3, 0, 0)),
    (9, 3, 1, 3, VALID, (3, 0, 0)),     # effective kernel 7
    (4, 1, 3, 1, VALID, (2, 0, 0)),
])
def test_output_size_and_padding(size, k, stride, dilation, padding, want):
    w = window_1d(CTX, "height", size, k, stride, dilation, padding)
    assert (w.size_out, w.pad_before, w.pad_after) == want
    assert w.padded_size == size + want[1] + want[2]


def test_refusals():
    with pytest.raises(_Refused, match=r"^shape: width: the window \(5 after dilation\) does "
                                       r"not fit the input size 4 with VALID padding$"):
        window_1d(CTX, "width", 4, 3, 1, 2, VALID)
    with pytest.raises(_Refused, match=r"stride \(0\), dilation \(1\) and kernel size \(3\)"):
        window_1d(CTX, "width", 4, 3, 0, 1, SAME)
    with pytest.raises(_Refused, match=r"^unsupported: padding type 7"):
        window_1d(CTX, "width", 4, 3, 1, 1, 7)


def test_valid_counts_clip_windows_to_the_input():
    w = window_1d(CTX, "w", 5, 3, 2, 1, SAME)            # out 3, pad 1 / 1
    assert valid_counts(w).tolist() == [2, 3, 2]
    assert valid_counts(window_1d(CTX, "w", 5, 3, 1, 1, VALID)).tolist() == [3, 3, 3]


def test_tap_and_patch_views_pick_the_window_pixels():
    wh = Window1D(size_in=4, size_out=2, kernel=2, stride=2, dilation=1, pad_before=0,
                  pad_after=0)
    ww = Window1D(size_in=5, size_out=2, kernel=2, stride=1, dilation=3, pad_before=0,
                  pad_after=0)
    x = np.arange(1 * 4 * 5 * 1, dtype=np.float32).reshape(1, 4, 5, 1)
    tap = tap_view(x, wh, ww, 1, 1)                     # rows 1, 3; columns 3, 4
    np.testing.assert_array_equal(tap[0, :, :, 0], [[8, 9], [18, 19]])
    patches = patches_view(x, wh, ww)
    assert patches.shape == (1, 2, 2, 2, 2, 1)
    np.testing.assert_array_equal(patches[0, 1, 0, :, :, 0], [[10, 13], [15, 18]])
    assert np.shares_memory(patches, x) and not patches.flags.writeable
