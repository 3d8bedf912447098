"""The one exception family of edgelite.

Every error a user can cause -- a malformed file, an unsupported op, a wrong input -- is raised
as a subclass of EdgeliteError with a message that names the node or tensor and says what to
do. Lives at the package root (edgelite.errors) because every part imports it: the
interpreter, the converter, the command line; it imports nothing of the package.

Each class is also the builtin exception LiteRT's Python Interpreter raises for the same
misuse (measured on ai-edge-litert: tests/interpreter/test_litert_api.py), so an app written
for tf.lite keeps working with ``except ValueError:`` / ``except RuntimeError:``: a bad
model, tensor index, dtype, shape or signature is a ValueError; an interpreter used out of
order (invoke before allocate_tensors, a tensor() view held) and a refused
resize_tensor_input() are RuntimeErrors; reading or writing tensors before
allocate_tensors() is both (TensorStateError).
"""


class EdgeliteError(Exception):
    """Base class of every error edgelite raises on purpose."""


class ModelFormatError(EdgeliteError, ValueError):
    """A .tflite / .pb / .pbtxt file is malformed, truncated or exceeds a safety limit."""


class UnsupportedOpError(EdgeliteError, RuntimeError):
    """An op (TF node or TFLite operator) has no lowering rule or kernel."""


class ShapeError(EdgeliteError, ValueError):
    """A tensor has the wrong shape, or shapes of an op's operands are incompatible."""


class MemoryLimitError(ShapeError):
    """An allocation would exceed the memory limit, or the system ran out of memory.

    A ShapeError too: oversized shapes (a file's or a resize's) are the usual cause."""


class DTypeError(EdgeliteError, ValueError):
    """A tensor has the wrong element type."""


class GraphError(EdgeliteError, ValueError):
    """The graph is inconsistent: unknown input/output name, cycle, dangling input."""


class InvokeStoppedError(EdgeliteError, RuntimeError):
    """invoke() stopped before the end: ``Interpreter.cancel()`` was called, or a WHILE loop
    passed ``Interpreter(max_loop_iterations=...)``."""


class InterpreterStateError(EdgeliteError, RuntimeError):
    """The interpreter API was used out of order (e.g. invoke before allocate_tensors)."""


class SignatureError(EdgeliteError, ValueError):
    """A SignatureDef is missing, or a signature runner got the wrong input names."""


class ResizeError(ShapeError, RuntimeError):
    """resize_tensor_input() refused: not an input, a fixed dimension under strict=True, a
    negative dimension (LiteRT raises RuntimeError)."""


class TensorStateError(InterpreterStateError, ValueError):
    """A tensor read or written before it has data: before allocate_tensors(), or a dynamic
    tensor before invoke() (LiteRT raises ValueError)."""


class OptionError(EdgeliteError, ValueError):
    """An Interpreter argument has a wrong type or value, or names something edgelite does
    not do (a delegate)."""
