"""edgelite.schema: the file formats edgelite reads and writes.

* ``tflite.fbs`` / ``generated_tflite``: the TensorFlow Lite flatbuffer schema
  (TFLite-compatible field ids and enum values) and its flatc Python bindings
  (object API included), e.g. ``from edgelite.schema import generated_tflite as tfl``.
* ``graph.proto`` / ``graph_pb2``: a subset of TensorFlow's GraphDef protobuf
  (same field numbers as TensorFlow), e.g. ``from edgelite.schema import graph_pb2``.
* ``ops``: the shared operator table (builtin codes, option tables, dict
  conversion, dtype maps) used by both the converter and the interpreter.
* ``regenerate``: rebuilds the generated modules (``python -m edgelite.schema.regenerate``).

Submodules are imported on demand; importing this package is cheap.
"""

__all__ = ["generated_tflite", "graph_pb2", "ops", "regenerate"]
