"""converter/lower/sampling.py: the per-axis interpolation matrices of TensorFlow's
resamplers, on cases whose weights are known in closed form (the resampling ops against TF
goldens: test_resample.py, test_image.py)."""

import numpy as np
import pytest

from edgelite.converter.lower.sampling import (KERNELS, area, bicubic, resize_scale,
                                               scale_and_translate)


def test_resize_scale():
    assert resize_scale(4, 2, False) == np.float32(2.0)
    assert resize_scale(5, 3, True) == np.float32(2.0)    # (5 - 1) / (3 - 1)
    assert resize_scale(5, 1, True) == np.float32(5.0)    # one output: no corners to align
    assert resize_scale(3, 4, False).dtype == np.float32


def test_area_averages_whole_and_partial_cells():
    np.testing.assert_array_equal(area(4, 2, False), [[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5]])
    # scale 1.5: cell 0 covers [0, 1.5): pixel 0 whole, half of pixel 1
    np.testing.assert_allclose(area(3, 2, False), [[2 / 3, 1 / 3, 0], [0, 1 / 3, 2 / 3]])
    np.testing.assert_array_equal(area(3, 3, False), np.eye(3))


@pytest.mark.parametrize("half_pixel", [False, True])
def test_bicubic_identity_and_rows_summing_to_one(half_pixel):
    np.testing.assert_allclose(bicubic(5, 5, False, half_pixel), np.eye(5), atol=1e-7)
    m = bicubic(4, 7, False, half_pixel)
    assert m.shape == (7, 4)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-6)


def test_bicubic_taps_between_two_pixels():
    # legacy scaler, 2 -> 4: output 1 sits at 0.5; the a = -0.75 kernel weighs the taps at
    # distances 1.5, 0.5, 0.5, 1.5 as -0.09375, 0.59375, 0.59375, -0.09375; the taps outside
    # the image clamp onto its edge pixels
    row = bicubic(2, 4, False, False)[1]
    np.testing.assert_allclose(row, [-0.09375 + 0.59375, 0.59375 - 0.09375], atol=1e-7)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_scale_and_translate_rows_are_normalized(kernel):
    m = scale_and_translate(6, 3, 0.5, 0.0, kernel, antialias=True)
    assert m.shape == (3, 6)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-6)


def test_scale_and_translate_identity_and_positions_outside_the_image():
    np.testing.assert_allclose(scale_and_translate(4, 4, 1.0, 0.0, "triangle", False),
                               np.eye(4), atol=1e-7)
    # translated by 3 pixels: outputs 0..2 sample before the image (empty rows)
    m = scale_and_translate(4, 4, 1.0, 3.5, "triangle", False)
    assert not m[:3].any() and m[3].tolist() == [1.0, 0.0, 0.0, 0.0]
