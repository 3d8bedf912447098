"""SignatureRunner: call a model by its SignatureDef names, like tf.lite's.

    runner = interpreter.get_signature_runner("serving_default")
    outputs = runner(input=x)          # {"output_0": array, ...}

A call resizes any input whose shape differs from the given value, allocates when
needed, sets the inputs, invokes, and returns copies of the outputs keyed by signature
output name (tensorflow/lite/python/interpreter.py, SignatureRunner.__call__).

A signature may run a subgraph other than 0 (a model with several entry points, e.g. a
streaming model's "step" and "reset"): that subgraph then runs as an entry, prepared
for the given input shapes, sharing the interpreter's resource variables with every
other signature (program.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from edgelite.errors import SignatureError
from .guard import guarded
from .loader.model import SignatureDef
from edgelite.names import quoted

if TYPE_CHECKING:  # pragma: no cover
    from .interpreter import Interpreter


class SignatureRunner:
    def __init__(self, interpreter: "Interpreter", signature: SignatureDef):
        self._interpreter = interpreter
        self._signature = signature
        self._subgraph = signature.subgraph_index

    @property
    def _guard(self):
        """The interpreter's guard: a call holds it over its resize / allocate / set /
        invoke / get, so that sequence is one call for other threads (guard.py)."""
        return self._interpreter._guard

    @property
    def signature_key(self) -> str:
        return self._signature.key

    def get_input_details(self) -> dict[str, dict[str, Any]]:
        return {name: self._interpreter._details(index, self._subgraph)
                for name, index in sorted(self._signature.inputs.items())}

    def get_output_details(self) -> dict[str, dict[str, Any]]:
        return {name: self._interpreter._details(index, self._subgraph)
                for name, index in sorted(self._signature.outputs.items())}

    @guarded("a SignatureRunner call")
    def __call__(self, **inputs: Any) -> dict[str, np.ndarray]:
        expected = self._signature.inputs
        unknown = sorted(set(inputs) - set(expected))
        missing = sorted(set(expected) - set(inputs))
        if unknown or missing:
            raise SignatureError(
                f"signature {quoted(self._signature.key)} takes inputs {sorted(expected)}; "
                f"missing {missing}, unknown {unknown}"
            )
        interp = self._interpreter
        values = {name: np.asarray(value) for name, value in inputs.items()}
        if self._subgraph != 0:
            alloc = interp._run_entry(self._subgraph, {expected[name]: value
                                                        for name, value in values.items()})
            return {name: np.array(alloc.arrays[index], copy=True)
                    for name, index in sorted(self._signature.outputs.items())}
        for name, value in values.items():
            index = expected[name]
            if tuple(value.shape) != interp._current_shape(index):
                interp.resize_tensor_input(index, value.shape)
        if not interp._allocated:
            interp.allocate_tensors()
        for name, value in values.items():
            interp.set_tensor(expected[name], value)
        interp.invoke()
        return {name: interp.get_tensor(index)
                for name, index in sorted(self._signature.outputs.items())}
