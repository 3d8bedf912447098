"""Issue 25's image resamplers (family "misc"): what tf.image.resize writes for "area",
"bicubic" and antialiased or kernel methods, and tf.image.crop_and_resize of computed boxes.
TensorFlow's converter has no builtin lowering for ResizeArea, ResizeBicubic,
ScaleAndTranslate or CropAndResize.

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    /work/venv/bin/python -m models.builders.zoo_image

Each model goes through builders/beyond.py's finish_beyond (frozen .pb, TF's golden outputs on
N_GOLDEN held-out inputs, calibration inputs, TF's Flex and int8 attempts) and is tested by
tests/models/test_real_world.py (float, against TF and LiteRT) and tests/models/
test_beyond_cnn.py (int8 in LiteRT's two kernel sets):

* img_resample: x [B, 10, 12, 3] -> conv 3x3 + relu -> one output per resampler:
  tf.image.resize "area" (a 2.5 x 2.4 shrink, and by whole factors), tf.compat.v1's
  resize_area with align_corners (growing), "bicubic" (ResizeBicubic, half-pixel) and
  tf.compat.v1's resize_bicubic with align_corners, antialias=True with "bilinear",
  "bicubic", "lanczos3", "gaussian" (ScaleAndTranslate: triangle, keyscubic, ...),
  "lanczos5" growing, "mitchellcubic" without antialias, and a raw ScaleAndTranslate with a
  translation (keyscubic).
* img_crop_and_resize: image [B, 12, 16, 3] and boxes [B, 6, 4] (inputs: computed boxes, as
  a detector's; box_index = row // 6, each image's own): conv features ->
  tf.image.crop_and_resize bilinear (extrapolation 0.5) and a one-row crop, nearest on the
  image, and a head (1x1 conv + mean) on the crops, each output [B, 6, ...]. The golden
  boxes reach outside the image and some are flipped (y1 > y2).
"""

from __future__ import annotations

from .real_world import Built, Spec  # first: sets TF_USE_LEGACY_KERAS
from .beyond import finish_beyond
from .common import SEED, SESSION_CONFIG, np, tf
from .op_zoo import _const, _freeze_session_graph, _Outputs

N_GOLDEN = 8
N_CALIB = 24
NOTES = {"built_with": "tf.compat.v1 graph mode, constant weights "
                       "(models/builders/zoo_image.py)"}


def _features(x, rng, channels):
    w = _const(rng, [3, 3, 3, channels], 0.4)
    return tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + _const(rng, [channels], 0.2))


def _resample_body(x, out, rng):
    f = _features(x, rng, 3)  # [B, 10, 12, 3]
    resize = tf.image.resize
    out(resize(f, [4, 5], "area"), "area")
    out(resize(f, [5, 6], "area"), "area_whole_factors")
    out(tf.compat.v1.image.resize_area(f, [11, 13], align_corners=True), "area_align_up")
    out(resize(f, [7, 9], "bicubic"), "bicubic")
    out(tf.compat.v1.image.resize_bicubic(f, [11, 14], align_corners=True), "bicubic_align")
    out(resize(f, [4, 5], "bilinear", antialias=True), "bilinear_antialias")
    out(resize(f, [4, 5], "bicubic", antialias=True), "bicubic_antialias")
    out(resize(f, [6, 7], "lanczos3", antialias=True), "lanczos3")
    out(resize(f, [12, 15], "lanczos5"), "lanczos5_up")
    out(resize(f, [5, 5], "gaussian", antialias=True), "gaussian")
    out(resize(f, [6, 8], "mitchellcubic", antialias=False), "mitchellcubic")
    out(tf.raw_ops.ScaleAndTranslate(images=f, size=[6, 8], scale=[0.6, 0.7],
                                     translation=[0.83, -1.27], kernel_type="keyscubic",
                                     antialias=True), "translated")


BOXES = 6


def _crop_body(image, boxes, out, rng):
    """(each output per image: [B, BOXES, ...], so the samples split as the tests run them)"""
    f = _features(image, rng, 4)  # [B, 12, 16, 4]
    flat = tf.reshape(boxes, [-1, 4])
    index = tf.range(tf.shape(flat)[0]) // BOXES  # each image's own boxes

    def per_image(t, name):
        out(tf.reshape(t, tf.concat([[-1, BOXES], tf.shape(t)[1:]], 0)), name)

    crops = tf.image.crop_and_resize(f, flat, index, [5, 6], extrapolation_value=0.5)
    per_image(crops, "crops")
    per_image(tf.image.crop_and_resize(f, flat, index, [1, 3]), "crops_one_row")
    per_image(tf.image.crop_and_resize(image, flat, index, [4, 4], method="nearest"),
              "crops_nearest")
    head = tf.nn.conv2d(crops, _const(rng, [1, 1, 4, 5], 0.5), 1, "VALID")
    per_image(tf.reduce_mean(tf.nn.relu(head), axis=[1, 2]), "roi_head")


def _boxes(rng, n):
    """Corners in [-0.2, 1.2]: some boxes reach outside the image, some are flipped."""
    return rng.uniform(-0.2, 1.2, (n, BOXES, 4)).astype(np.float32)


def _uniform(lo, hi, shape):
    return lambda rng, n: rng.uniform(lo, hi, (n, *shape)).astype(np.float32)


def _model(name: str, seed: int, inputs: dict, body, expect_ops):
    """A tf.compat.v1 graph of float32 inputs (name -> (shape without the batch, draw(rng, n)
    -> n samples)) and body(*inputs, out, rng), frozen; its golden and calibration inputs.
    Returns (Spec, Built, calibration inputs)."""
    rng = np.random.RandomState(seed)
    graph = tf.Graph()
    out = _Outputs(graph)
    with graph.as_default():
        xs = [tf.compat.v1.placeholder(tf.float32, [None, *shape], name=k)
              for k, (shape, _) in inputs.items()]
        with tf.compat.v1.name_scope("ops"):
            body(*xs, out, rng)
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            gd = _freeze_session_graph(graph, sess, out.names)
    data = np.random.RandomState(seed + 1)
    golden, calib = ({k: draw(data, n) for k, (_, draw) in inputs.items()}
                     for n in (N_GOLDEN, N_CALIB))
    built = Built(gd, {k: ([None, *shape], "float32") for k, (shape, _) in inputs.items()},
                  out.names, golden, expect_ops=expect_ops, notes=NOTES)
    return Spec(name, lambda: built), built, calib


MODELS = (
    ("img_resample", SEED + 2500, {"x": ((10, 12, 3), _uniform(-1, 1, (10, 12, 3)))},
     _resample_body, ("ResizeArea", "ResizeBicubic", "ScaleAndTranslate")),
    ("img_crop_and_resize", SEED + 2510,
     {"image": ((12, 16, 3), _uniform(0, 1, (12, 16, 3))), "boxes": ((BOXES, 4), _boxes)},
     _crop_body, ("CropAndResize",)),
)


def main() -> None:
    tf.compat.v1.set_random_seed(SEED)
    for args in MODELS:
        spec, built, calib = _model(*args)
        print(spec.name)
        finish_beyond(spec, built, "misc", calib)


if __name__ == "__main__":
    main()
