"""api/errors.py: one exception family, each class also the builtin exception
LiteRT's Python Interpreter raises for the same misuse, so `except ValueError` /
`except RuntimeError` code written for tf.lite keeps working."""

import pytest

from edgelite import errors

# class -> the builtins it must also be (LiteRT's choice for the same misuse)
BUILTINS = {
    "ModelFormatError": (ValueError,),
    "UnsupportedOpError": (RuntimeError,),
    "ShapeError": (ValueError,),
    "MemoryLimitError": (ValueError,),
    "DTypeError": (ValueError,),
    "GraphError": (ValueError,),
    "InvokeStoppedError": (RuntimeError,),
    "InterpreterStateError": (RuntimeError,),
    "SignatureError": (ValueError,),
    "ResizeError": (ValueError, RuntimeError),
    "TensorStateError": (RuntimeError, ValueError),
    "OptionError": (ValueError,),
}


def test_every_error_class_is_listed_here():
    classes = {name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, Exception)}
    assert classes == set(BUILTINS) | {"EdgeliteError"}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_each_class_is_an_edgelite_error_and_litert_builtin(name):
    cls = getattr(errors, name)
    assert issubclass(cls, errors.EdgeliteError)
    for builtin in BUILTINS[name]:
        with pytest.raises(builtin, match="^tensor 3 'x': why$"):
            raise cls("tensor 3 'x': why")
    others = {ValueError, RuntimeError} - set(BUILTINS[name])
    assert not any(issubclass(cls, other) for other in others)


def test_the_refinements():
    assert issubclass(errors.MemoryLimitError, errors.ShapeError)
    assert issubclass(errors.ResizeError, errors.ShapeError)
    assert issubclass(errors.TensorStateError, errors.InterpreterStateError)
    assert errors.EdgeliteError.__bases__ == (Exception,)
