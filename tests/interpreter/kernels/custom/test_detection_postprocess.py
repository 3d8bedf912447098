"""TFLite_Detection_PostProcess (interpreter/kernels/custom/detection_postprocess.py)
bit-exact with LiteRT's own kernel (its builtin resolver registers the custom op), with
both kernel sets: random SSD-like boxes and scores, fast and regular NMS, 1 or 3 classes per
detection, with and without a background column, float and uint8 inputs, and scores from
a few levels (ties in the NMS order and in the regular NMS merge)."""

import numpy as np
import pytest
from flatbuffers import flexbuffers

from edgelite.interpreter import Interpreter, ModelFormatError, ShapeError, UnsupportedOpError

from ...tflite_builder import ModelBuilder
from tests.conftest import litert_module
from tests.support import litert_interpreter

NAME = "TFLite_Detection_PostProcess"


def options(**changes):
    opts = dict(max_detections=6, max_classes_per_detection=1, detections_per_class=4,
                use_regular_nms=False, nms_score_threshold=0.25, nms_iou_threshold=0.45,
                num_classes=4, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)
    opts.update(changes)
    return opts


def model(n, opts, anchors, background=1, dtype=np.float32, qparams=None,
          custom_options=None) -> bytes:
    """boxes [1, n, 4] and scores [1, n, classes + background] in, anchors constant;
    ``qparams``: (boxes, scores, anchors) (scale, zero point) for uint8 inputs."""
    b = ModelBuilder()
    q = [{}] * 3 if qparams is None else [dict(scale=s, zero_point=z) for s, z in qparams]
    x = b.tensor("boxes", (1, n, 4), dtype, **q[0])
    s = b.tensor("scores", (1, n, opts["num_classes"] + background), dtype, **q[1])
    a = b.tensor("anchors", (n, 4), dtype, data=anchors, **q[2])
    m = opts["max_detections"] * opts["max_classes_per_detection"]
    outs = [b.tensor("detection_boxes", (1, m, 4)), b.tensor("detection_classes", (1, m)),
            b.tensor("detection_scores", (1, m)), b.tensor("num_detections", (1,))]
    i = b.op("CUSTOM", [x, s, a], outs, custom_code=NAME)
    data = flexbuffers.Dumps(opts) if custom_options is None else custom_options
    b.operators[i].customOptions = list(data)
    return b.build([x, s], outs)


def anchors_for(rng, n) -> np.ndarray:
    """(y, x, h, w) centres and sizes on the unit square."""
    return np.stack([rng.uniform(0.1, 0.9, n), rng.uniform(0.1, 0.9, n),
                     rng.uniform(0.05, 0.5, n), rng.uniform(0.05, 0.5, n)], 1).astype(np.float32)


def run(interp, boxes, scores):
    interp.set_tensor(interp.get_input_details()[0]["index"], boxes)
    interp.set_tensor(interp.get_input_details()[1]["index"], scores)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def assert_matches(data: bytes, boxes, scores, opts) -> list[np.ndarray]:
    """edgelite == LiteRT (BUILTIN_REF and AUTO), bit for bit, over the slots LiteRT writes:
    in fast mode those of the num_detections anchors, in regular mode the first
    max_detections (it leaves the others untouched; edgelite zeroes them)."""
    ours = Interpreter(model_content=data)
    ours.allocate_tensors()
    got = run(ours, boxes, scores)
    litert = litert_module()
    auto = litert.Interpreter(model_content=data,
                              experimental_op_resolver_type=litert.OpResolverType.AUTO)
    auto.allocate_tensors()
    for ref in (run(litert_interpreter(data), boxes, scores), run(auto, boxes, scores)):
        np.testing.assert_array_equal(got[3], ref[3])
        m = got[1].shape[1]
        used = opts["max_detections"] if opts["use_regular_nms"] else \
            int(ref[3][0]) * opts["max_classes_per_detection"]
        for a, b in zip(got[:3], ref[:3]):
            assert a.shape == b.shape and a.dtype == b.dtype == np.float32
            np.testing.assert_array_equal(a[:, :used], b[:, :used])
        assert used <= m
    return got


@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("per_detection,background", [(1, 1), (3, 1), (1, 0)])
@pytest.mark.parametrize("seed", range(4))
def test_float_random(seed, regular, per_detection, background):
    rng = np.random.default_rng(seed)
    n = 40
    opts = options(use_regular_nms=regular, max_classes_per_detection=per_detection,
                   nms_iou_threshold=float(rng.choice([0.3, 0.6, 1.0])))
    boxes = rng.normal(0, 2, (1, n, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (1, n, opts["num_classes"] + background)).astype(np.float32)
    got = assert_matches(model(n, opts, anchors_for(rng, n), background), boxes, scores, opts)
    assert got[3][0] > 0


@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_tied_scores(seed, regular):
    """Scores from five levels: equal scores across anchors (NMS order: lower anchor first)
    and across classes (regular NMS merge: the later class first)."""
    rng = np.random.default_rng(100 + seed)
    n = 30
    opts = options(use_regular_nms=regular, max_detections=8, detections_per_class=5)
    boxes = rng.normal(0, 1, (1, n, 4)).astype(np.float32)
    levels = np.array([0.1, 0.3, 0.5, 0.7, 0.9], np.float32)
    scores = levels[rng.integers(0, 5, (1, n, opts["num_classes"] + 1))]
    # every box the same: overlaps depend on the anchors only, many exact ties in IoU too
    if seed % 2:
        boxes[:] = boxes[:, :1]
    assert_matches(model(n, opts, anchors_for(rng, n)), boxes, scores, opts)


@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_uint8_inputs(seed, regular):
    rng = np.random.default_rng(200 + seed)
    n = 32
    opts = options(use_regular_nms=regular)
    qparams = [(0.05, 128), (1 / 255, 0), (0.004, 0)]
    anchors = rng.integers(25, 226, (n, 4)).astype(np.uint8)
    boxes = rng.integers(0, 256, (1, n, 4)).astype(np.uint8)
    scores = rng.integers(0, 256, (1, n, opts["num_classes"] + 1)).astype(np.uint8)
    data = model(n, opts, anchors, dtype=np.uint8, qparams=qparams)
    assert_matches(data, boxes, scores, opts)


def test_nothing_above_the_threshold():
    rng = np.random.default_rng(7)
    n = 10
    opts = options(use_regular_nms=True, nms_score_threshold=0.99)
    scores = rng.uniform(0, 0.5, (1, n, 5)).astype(np.float32)
    got = assert_matches(model(n, opts, anchors_for(rng, n)), rng.normal(0, 1, (1, n, 4))
                         .astype(np.float32), scores, opts)
    assert got[3][0] == 0 and not got[0].any()


def test_hostile_custom_options_name_the_op():
    rng = np.random.default_rng(1)
    data = model(4, options(), anchors_for(rng, 4), custom_options=b"\x07\xff\xff\x01")
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CUSTOM "
                       r"'TFLite_Detection_PostProcess'.*not a valid flexbuffer"):
        Interpreter(model_content=data).allocate_tensors()


def test_bad_iou_threshold_is_refused_at_allocate():
    rng = np.random.default_rng(1)
    data = model(4, options(nms_iou_threshold=0.0), anchors_for(rng, 4))
    with pytest.raises(Exception, match=r"nms_iou_threshold 0.0 must be in \(0, 1\]"):
        Interpreter(model_content=data).allocate_tensors()


def test_inverted_decoded_box_fails_invoke():
    """A negative anchor height decodes to ymin > ymax: LiteRT's invoke fails, so does ours."""
    rng = np.random.default_rng(2)
    anchors = anchors_for(rng, 4)
    anchors[2, 2] = -0.3
    interp = Interpreter(model_content=model(4, options(), anchors))
    interp.allocate_tensors()
    with pytest.raises(ShapeError, match="1 decoded box"):
        run(interp, np.zeros((1, 4, 4), np.float32), np.ones((1, 4, 5), np.float32))


def test_int8_inputs_are_refused_as_litert_fails_on_them():
    qparams = [(0.05, 0), (1 / 255, -128), (0.004, 0)]
    anchors = np.full((4, 4), 50, np.int8)
    data = model(4, options(), anchors, dtype=np.int8, qparams=qparams)
    with pytest.raises(UnsupportedOpError, match=r"box encodings tensor 'boxes' has type "
                       r"int8; this kernel supports float32, uint8 \[quantized: "):
        Interpreter(model_content=data).allocate_tensors()


@pytest.mark.parametrize("regular", [False, True])
def test_ssd_mobilenet_sizes(regular):
    """The COCO SSD MobileNet head: 1917 anchors, 90 classes and a background, a score
    threshold of 1e-8 (every box competes), IoU 0.6, 10 detections."""
    rng = np.random.default_rng(1917)
    n = 1917
    opts = options(use_regular_nms=regular, num_classes=90, max_detections=10,
                   detections_per_class=100, nms_score_threshold=1e-8,
                   nms_iou_threshold=0.6)
    boxes = rng.normal(0, 1, (1, n, 4)).astype(np.float32)
    scores = (1 / (1 + np.exp(-rng.normal(-4, 2, (1, n, 91))))).astype(np.float32)
    got = assert_matches(model(n, opts, anchors_for(rng, n)), boxes, scores, opts)
    assert got[3][0] == 10
