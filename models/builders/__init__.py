"""The code behind the dev-only model build scripts in models/ (needs TensorFlow).

Entry points (run from the repository root): models/build_models.py -> digits.main,
models/build_real_world.py -> real_world_cli.main, models/build_quantized.py ->
quantized_refs.main.  Modules:

  common.py          TensorFlow setup (deterministic, single-threaded), file writers (atomic,
                     npz with fixed timestamps, GraphDef, JSON), digits data, freezing
                     (tf-keras, batch-norm calibration), TF's converter, LiteRT runs
  digits.py          tf1_cnn and keras_cnn (build_models.py)
  real_world.py      what the real-world builders share: constants, photo crops, Built /
                     Spec, finish() (checks and writes one model)
  tf1_graphs.py      tf1_mobilenet_unfolded_bn, tf1_cond_is_training,
                     tf1_cond_placeholder_default, tf1_dilated_conv1d
  keras_small.py     text_classifier, keras_dynamic_shape, efficientnet_like
  op_zoo.py          op_zoo_math, op_zoo_array, op_zoo_image
  applications.py    the large tf-keras applications (models/cache/)
  real_world_cli.py  the real-world registry (SPECS) and command line
  quantized_refs.py  TF's int8 / uint8 references of the digit CNNs, LiteRT evaluation
                     (build_quantized.py)
  qat.py             the FakeQuant graph qat_cnn, its TF int8 conversion and ranges

Importing ``common`` configures TensorFlow, so it must come first; the real-world modules
import ``real_world`` first, which sets TF_USE_LEGACY_KERAS=1 (tf.compat.v1.layers needs it).
"""
