"""The one exception family of edgelite.

Every error a user can cause -- a malformed file, an unsupported op, a wrong input -- is raised
as a subclass of EdgeliteError with a message that names the node or tensor and says what to
do. Lives in the interpreter package because every other part may import it (data flows
cli -> converter -> interpreter -> schema).
"""


class EdgeliteError(Exception):
    """Base class of every error edgelite raises on purpose."""


class ModelFormatError(EdgeliteError):
    """A .tflite / .pb / .pbtxt file is malformed, truncated or exceeds a safety limit."""


class UnsupportedOpError(EdgeliteError):
    """An op (TF node or TFLite operator) has no lowering rule or kernel."""


class ShapeError(EdgeliteError):
    """A tensor has the wrong shape, or shapes of an op's operands are incompatible."""


class MemoryLimitError(ShapeError):
    """An allocation would exceed the memory limit, or the system ran out of memory.

    A ShapeError too: oversized shapes (a file's or a resize's) are the usual cause."""


class DTypeError(EdgeliteError):
    """A tensor has the wrong element type."""


class GraphError(EdgeliteError):
    """The graph is inconsistent: unknown input/output name, cycle, dangling input."""


class InvokeStoppedError(EdgeliteError):
    """invoke() stopped before the end: ``Interpreter.cancel()`` was called, or a WHILE loop
    passed ``Interpreter(max_loop_iterations=...)``."""


class InterpreterStateError(EdgeliteError):
    """The interpreter API was used out of order (e.g. invoke before allocate_tensors)."""


class SignatureError(EdgeliteError):
    """A SignatureDef is missing, or a signature runner got the wrong input names."""
