"""Models with CUSTOM ops written by TensorFlow's own converter (issue 14, custom ops).

Run from the repository root (TensorFlow is needed; edgelite's tests never import it):

    /work/wt/threads/.venv/bin/python models/builders/zoo_custom.py

Writes, deterministically (fixed seeds):

* models/custom_asinh.tf.tflite -- a small float network with ``tf.math.asinh`` and
  ``tf.math.sinh``, which TFLite has no builtins for: converted with
  ``allow_custom_ops=True`` they become CUSTOM ops "Asinh" and "Sinh" (no kernels in
  LiteRT or edgelite: the test registers numpy ones through
  ``Interpreter(custom_kernels=...)``); models/custom_asinh.golden.npz holds inputs ``x``
  and TensorFlow's outputs ``y`` for them.
* models/custom_ssd_postprocess{,_regular}.tf.tflite -- an SSD-style head (box encodings and class
  scores from dense layers, constant anchors) ending in TFLite_Detection_PostProcess, made
  the way the Object Detection API exports it: a tf.function with
  ``experimental_implements`` naming the op and its attributes, which the converter
  fuses into the CUSTOM op with flexbuffer options (through a SavedModel, as the Object
  Detection API's export does: from_concrete_functions inlines the function instead).
  Fast and regular NMS. LiteRT runs them (the oracle).
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SEED = 14
N_SAMPLES = 8


def convert(fn, *, custom: bool) -> bytes:
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
    conv.allow_custom_ops = custom
    return conv.convert()


def asinh_model() -> tuple[bytes, dict]:
    rng = np.random.default_rng(SEED)
    w = tf.constant(rng.normal(0, 1.0, (6, 5)).astype(np.float32))
    b = tf.constant(rng.normal(0, 0.1, (5,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 6], tf.float32, name="x")])
    def net(x):
        h = tf.matmul(x, w) + b
        return tf.math.asinh(h) * 0.5 + tf.math.sinh(h * 0.3)

    xs = rng.normal(0, 1, (N_SAMPLES, 1, 6)).astype(np.float32)
    ys = np.stack([net(tf.constant(x)).numpy() for x in xs])
    return convert(net, custom=True), {"x": xs, "y": ys}


NUM_ANCHORS, NUM_CLASSES = 24, 3


def postprocess_signature(regular: bool) -> str:
    """The implements string of the Object Detection API's export (export_tflite_graph_lib
    _tf2.py: name and attributes of TFLite_Detection_PostProcess)."""
    attrs = [("max_detections", "i", 5), ("max_classes_per_detection", "i", 1),
             ("detections_per_class", "i", 4), ("use_regular_nms", "b", regular),
             ("nms_score_threshold", "f", 0.3), ("nms_iou_threshold", "f", 0.5),
             ("num_classes", "i", NUM_CLASSES), ("y_scale", "f", 10.0),
             ("x_scale", "f", 10.0), ("h_scale", "f", 5.0), ("w_scale", "f", 5.0)]
    parts = ['name: "TFLite_Detection_PostProcess"']
    for key, kind, value in attrs:
        text = str(value).lower() if kind == "b" else value
        parts.append(f'attr {{ key: "{key}" value {{ {kind}: {text} }} }}')
    return " ".join(parts)


def ssd_model(regular: bool) -> bytes:
    rng = np.random.default_rng(SEED + 1)
    w_box = tf.constant(rng.normal(0, 0.5, (8, NUM_ANCHORS * 4)).astype(np.float32))
    w_cls = tf.constant(rng.normal(0, 1.0, (8, NUM_ANCHORS * (NUM_CLASSES + 1)))
                        .astype(np.float32))
    centres = rng.uniform(0.1, 0.9, (NUM_ANCHORS, 2))
    sizes = rng.uniform(0.1, 0.4, (NUM_ANCHORS, 2))
    anchors = tf.constant(np.concatenate([centres, sizes], 1).astype(np.float32))

    @tf.function(experimental_implements=postprocess_signature(regular))
    def postprocess(box_encodings, class_predictions, anchors):
        boxes = tf.constant(0.0, tf.float32, name="boxes")
        scores = tf.constant(0.0, tf.float32, name="scores")
        classes = tf.constant(0.0, tf.float32, name="classes")
        num_detections = tf.constant(0.0, tf.float32, name="num_detections")
        return boxes, classes, scores, num_detections

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32, name="features")])
    def net(features):
        boxes = tf.reshape(tf.matmul(features, w_box), [1, NUM_ANCHORS, 4])
        logits = tf.reshape(tf.matmul(features, w_cls), [1, NUM_ANCHORS, NUM_CLASSES + 1])
        return postprocess(boxes, tf.sigmoid(logits), anchors)

    class Detector(tf.Module):
        pass

    module = Detector()
    module.net = net
    with tempfile.TemporaryDirectory() as folder:
        tf.saved_model.save(module, folder, signatures=net.get_concrete_function())
        conv = tf.lite.TFLiteConverter.from_saved_model(folder)
        conv.allow_custom_ops = True
        return conv.convert()


def main() -> int:
    tf.random.set_seed(SEED)
    data, golden = asinh_model()
    with open(os.path.join(OUT, "custom_asinh.tf.tflite"), "wb") as f:
        f.write(data)
    np.savez(os.path.join(OUT, "custom_asinh.golden.npz"), **golden)
    for regular in (False, True):
        name = f"custom_ssd_postprocess{'_regular' if regular else ''}.tf.tflite"
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(ssd_model(regular))
    return 0


if __name__ == "__main__":
    sys.exit(main())
