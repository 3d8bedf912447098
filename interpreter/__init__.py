"""edgelite.interpreter: a lightweight numpy interpreter for .tflite files.

Depends on numpy, flatbuffers, edgelite.schema and the package root's errors, names and
fileio only.

    from edgelite.interpreter import Interpreter
    interp = Interpreter(model_path="model.tflite")
"""

from edgelite.errors import (DTypeError, EdgeliteError, GraphError, InterpreterStateError,
                             InvokeStoppedError, MemoryLimitError, ModelFormatError, OptionError,
                             ResizeError, ShapeError, SignatureError, TensorStateError,
                             UnsupportedOpError)
from .interpreter import Interpreter
from .kernels.base import Kernel, OpContext, OutputSpec, TensorInfo
from .kernels.custom import register_custom_kernel, unregister_custom_kernel
from .loader.model import Model, load_model
from .profiler import Profile
from .kernel_set import KernelSet
from .litert_compat import OpResolverType, load_delegate
from .quant_math import Rounding
from .signature import SignatureRunner
from .micro.arena import micro_arena, micro_arena_report

__all__ = [
    "Interpreter",
    "Kernel",
    "OpContext",
    "OutputSpec",
    "TensorInfo",
    "register_custom_kernel",
    "unregister_custom_kernel",
    "SignatureRunner",
    "Profile",
    "Model",
    "load_model",
    "KernelSet",
    "OpResolverType",
    "load_delegate",
    "Rounding",
    "micro_arena",
    "micro_arena_report",
    "EdgeliteError",
    "ModelFormatError",
    "UnsupportedOpError",
    "ShapeError",
    "DTypeError",
    "GraphError",
    "InterpreterStateError",
    "InvokeStoppedError",
    "MemoryLimitError",
    "SignatureError",
    "OptionError",
    "ResizeError",
    "TensorStateError",
]
