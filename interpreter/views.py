"""The live views Interpreter.tensor() hands out, and LiteRT's rule about them.

LiteRT's tensor() returns a function whose result is a numpy array over the interpreter's
own buffer; while any such array (or a slice of it) is alive, allocate_tensors(), invoke()
and resize_tensor_input() refuse with a RuntimeError ("There is at least 1 reference to
internal data ...", tflite/python/interpreter.py, _ensure_safe / _safe_to_run), because a
new allocation would leave the array pointing at memory the interpreter no longer uses
(writes to it would vanish). edgelite does the same: every array tensor() hands out has a
small token as its numpy base (the token exposes the arena view through
``__array_interface__``), the tokens sit in a WeakSet, and an array or any slice of it
keeps its token alive -- the set is empty exactly when no view is held.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np

from edgelite.errors import InterpreterStateError

HELD_MESSAGE = (
    "There is at least 1 reference to internal data in the interpreter in the form of a "
    "numpy array or slice: {what} would leave it pointing at memory the interpreter no "
    "longer uses. Hold only the function tensor() returns, call it for a fresh array when "
    "you need one, and drop the arrays before this call")


class _Token:
    """Owner, for numpy, of one array handed out: keeps the arena view alive."""

    __slots__ = ("_array", "__array_interface__", "__weakref__")

    def __init__(self, array: np.ndarray):
        self._array = array
        self.__array_interface__ = array.__array_interface__


class ViewTracker:
    def __init__(self) -> None:
        self._tokens: weakref.WeakSet = weakref.WeakSet()

    def hand_out(self, array: np.ndarray) -> np.ndarray:
        """A live array over ``array``'s memory, counted until it and its slices are gone.
        Object arrays (string tensors, kept outside the arena) are returned as they are."""
        if array.dtype.kind == "O":
            return array
        token = _Token(array)
        self._tokens.add(token)
        return np.asarray(token)

    def held(self) -> bool:
        """Whether an array handed out (or a slice of it) is still alive."""
        if not self._tokens:
            return False
        gc.collect()  # an array in a reference cycle is not held by anyone
        return len(self._tokens) > 0

    def check(self, what: str) -> None:
        """InterpreterStateError (a RuntimeError, as LiteRT's) while a view is held."""
        if self._tokens and self.held():
            raise InterpreterStateError(HELD_MESSAGE.format(what=what))
