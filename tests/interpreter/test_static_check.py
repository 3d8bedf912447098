"""static_check.py: what keeps an op from running whatever the shapes, every item listed
at once."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, UnsupportedOpError
from edgelite.interpreter.loader.model import load_model
from edgelite.interpreter.static_check import (check_supported, describe_op, is_string,
                                               static_problem, unsupported_items)

from .tflite_builder import ModelBuilder


def test_string_tensor_into_an_op_without_string_kernel_is_unsupported():
    """STRING inputs are fine (GATHER / RESHAPE take them, static_check.STRING_OPS); an op
    that has no string kernel reading one is refused, naming the tensor."""
    b = ModelBuilder()
    s = b.tensor("names", (2,), np.bytes_)
    y = b.tensor("y", (2,), np.bytes_)
    b.op("RELU", [s], [y])
    interp = Interpreter(model_content=b.build([s], [y]))
    with pytest.raises(UnsupportedOpError, match="tensor 'names' has type STRING"):
        interp.allocate_tensors()


def test_every_problem_of_a_subgraph_is_listed_with_its_kind():
    b = ModelBuilder()
    x = b.tensor("x", (2,))
    h = b.tensor("h", (2,))
    s = b.tensor("s", (2,), np.bytes_)
    y = b.tensor("y", (2,))
    b.op("CUSTOM", [x], [h], custom_code="NoSuchOp")
    b.op("RESHAPE", [s, b.const("shape", np.array([2], np.int32))],
         [b.tensor("s2", (2,), np.bytes_)])                   # a string op: fine
    b.op("RELU", [h], [y])
    sg = load_model(b.build([x, s], [y])).subgraphs[0]
    custom, reshape, relu = sg.operators
    assert static_problem(custom, sg) == ("custom", "custom op, no kernel")
    assert static_problem(reshape, sg) is None and static_problem(relu, sg) is None
    assert is_string(sg.tensors[s]) and not is_string(sg.tensors[x])
    assert describe_op(custom, sg) == "operator 0 CUSTOM 'NoSuchOp' (output 'h')"
    assert unsupported_items(sg) == ["  operator 0 CUSTOM 'NoSuchOp' (output 'h'): custom op, "
                                     "no kernel"]
    with pytest.raises(UnsupportedOpError, match=r"\(1 unsupported item\(s\)\):\n  operator 0"):
        check_supported([sg, sg][:1])
