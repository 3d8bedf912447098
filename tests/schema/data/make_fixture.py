"""Build the small TensorFlow-made fixtures used by tests/schema.

Run with a Python that has TensorFlow (made with TensorFlow 2.21):

    python tests/schema/data/make_fixture.py

Writes, next to this script:

* ``tiny_conv.tflite``        float model converted by TF's own TFLite converter:
  CONV_2D (stride 2, SAME, fused RELU6) -> DEPTHWISE_CONV_2D -> MAX_POOL_2D ->
  MEAN -> FULLY_CONNECTED -> SOFTMAX.
* ``tiny_conv_int8.tflite``   the same model, full-integer quantized (int8 I/O).
* ``tiny_conv_graph.pb`` / ``tiny_conv_graph.pbtxt``  the frozen GraphDef of the
  same function (binary and text).
* ``tiny_conv_graph.json``    TensorFlow's own parse of that GraphDef
  (json_format.MessageToDict, minus ``library``), for comparison without TF.

Everything is seeded, so reruns give the same weights (the converter's output
bytes may still differ between TF versions).
"""

import json
import os

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

HERE = os.path.dirname(os.path.abspath(__file__))


def build_function():
    rng = np.random.RandomState(1234)
    conv_w = tf.constant(rng.uniform(-0.5, 0.5, (3, 3, 3, 4)).astype(np.float32))
    conv_b = tf.constant(rng.uniform(-0.1, 0.1, (4,)).astype(np.float32))
    dw_w = tf.constant(rng.uniform(-0.5, 0.5, (3, 3, 4, 1)).astype(np.float32))
    fc_w = tf.constant(rng.uniform(-0.5, 0.5, (4, 5)).astype(np.float32))
    fc_b = tf.constant(rng.uniform(-0.1, 0.1, (5,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 3], tf.float32, name="image")])
    def tiny_conv(image):
        x = tf.nn.conv2d(image, conv_w, strides=[1, 2, 2, 1], padding="SAME", name="conv")
        x = tf.nn.relu6(tf.nn.bias_add(x, conv_b), name="conv_relu6")
        x = tf.nn.depthwise_conv2d(x, dw_w, strides=[1, 1, 1, 1], padding="VALID", name="dw")
        x = tf.nn.max_pool2d(x, ksize=2, strides=1, padding="VALID", name="pool")
        x = tf.reduce_mean(x, axis=[1, 2], name="gap")
        x = tf.matmul(x, fc_w, name="fc") + fc_b
        return tf.nn.softmax(x, name="probs")

    return tiny_conv


def main():
    fn = build_function()
    concrete = fn.get_concrete_function()

    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
    with open(os.path.join(HERE, "tiny_conv.tflite"), "wb") as f:
        f.write(conv.convert())

    def representative():
        rng = np.random.RandomState(7)
        for _ in range(8):
            yield [rng.uniform(-1, 1, (1, 8, 8, 3)).astype(np.float32)]

    qconv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
    qconv.optimizations = [tf.lite.Optimize.DEFAULT]
    qconv.representative_dataset = representative
    qconv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    qconv.inference_input_type = tf.int8
    qconv.inference_output_type = tf.int8
    with open(os.path.join(HERE, "tiny_conv_int8.tflite"), "wb") as f:
        f.write(qconv.convert())

    frozen = convert_variables_to_constants_v2(concrete)
    gd = frozen.graph.as_graph_def()
    with open(os.path.join(HERE, "tiny_conv_graph.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    tf.io.write_graph(gd, HERE, "tiny_conv_graph.pbtxt", as_text=True)
    parsed = json_format.MessageToDict(gd, preserving_proto_field_name=True)
    parsed.pop("library", None)
    with open(os.path.join(HERE, "tiny_conv_graph.json"), "w") as f:
        json.dump(parsed, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
