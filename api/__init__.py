"""edgelite: TensorFlow GraphDef -> TensorFlow Lite converter and numpy interpreter.

    import edgelite
    tflite_bytes = edgelite.convert("models/tf1_cnn.pb", output_path="tf1_cnn.tflite")
    interp = edgelite.Interpreter(model_content=tflite_bytes)
"""

__version__ = "0.1.0"

from edgelite.interpreter import Interpreter  # noqa: E402
from edgelite.errors import (DTypeError, EdgeliteError, GraphError,  # noqa: E402
                             InvokeStoppedError, MemoryLimitError, ModelFormatError, ShapeError,
                             UnsupportedOpError)
from edgelite.tflite_converter import (  # noqa: E402
    ConverterError, Optimize, OpsSet, RepresentativeDataset, TargetSpec, TFLiteConverter)


def convert(*args, **kwargs):
    """Convert a frozen GraphDef to .tflite bytes; see edgelite.converter.convert."""
    from edgelite.converter import convert as _convert  # the interpreter alone stays light
    return _convert(*args, **kwargs)


__all__ = ["__version__", "convert", "Interpreter", "EdgeliteError", "ModelFormatError",
           "UnsupportedOpError", "ShapeError", "DTypeError", "GraphError", "MemoryLimitError",
           "TFLiteConverter", "Optimize", "OpsSet", "TargetSpec", "RepresentativeDataset",
           "ConverterError", "InvokeStoppedError"]
