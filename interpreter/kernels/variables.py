"""Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE.

Matches LiteRT's var_handle.cc, read_variable.cc, assign_variable.cc and
experimental/resource/resource_variable.cc. The variables live in the interpreter's
``program.State`` (resource id -> array), outside every arena, and keep their values
across invoke() calls -- and across reset_all_variables(), which in LiteRT resets only
variable *tensors* (program.py).

* VAR_HANDLE (options ``container``, ``shared_name``): writes the resource id of its
  (container, shared_name) pair, an int32 -- the same pair is the same variable, in
  every subgraph; ids are numbered as LiteRT numbers them (program.resource_ids).
* ASSIGN_VARIABLE (handle, value): the variable becomes a copy of the value -- its
  type and shape too, on every assign (ResourceVariable::AssignFrom reallocates when
  the size changes); the first assign creates it.
* READ_VARIABLE (handle) -> value: a copy of the variable. An output declared with
  rank 0 is dynamic (LiteRT cannot tell a scalar from an unknown shape there) and takes
  the variable's shape; any other output keeps its shape, and the variable must have
  its type and size (LiteRT copies the output's byte count, reading past a smaller
  variable: refused here). Reading a variable no ASSIGN_VARIABLE wrote is an error, as
  in LiteRT (GetResourceVariable returns null).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from edgelite.errors import DTypeError, InterpreterStateError, ShapeError
from edgelite.names import quoted
from .base import Kernel, OpContext, OutputSpec, RESOURCE_DTYPE, num_elements
from .opdef import OpDef


def resource_key(options) -> tuple[str, str]:
    """The (container, shared_name) a VAR_HANDLE's options name ("" when absent)."""
    def text(value) -> str:
        if value is None:
            return ""
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text(options.get("container")), text(options.get("shared_name"))


def _state(ctx: OpContext):
    if ctx.program is None:
        raise ctx.unsupported("uses a resource variable; it runs only inside an Interpreter")
    return ctx.program.state


def _check_handle(ctx: OpContext) -> None:
    handle = ctx.input(0)
    if handle.dtype != RESOURCE_DTYPE or num_elements(handle.shape) != 1:
        raise ctx.dtype_error(f"its resource handle {quoted(handle.name)} must be one "
                              f"resource (or int32) value, got {handle.dtype.name} of shape "
                              f"{list(handle.shape)}")


@dataclass(frozen=True)
class Variable:
    """What a READ_VARIABLE / ASSIGN_VARIABLE needs at invoke."""

    state: Any  # program.State
    describe: str  # the op, for messages


def _resource_id(handle: np.ndarray) -> int:
    return int(handle.reshape(-1)[0])


def _stored(rec: Variable, handle: np.ndarray) -> np.ndarray:
    rid = _resource_id(handle)
    value = rec.state.variables.get(rid)
    if value is None:
        raise InterpreterStateError(
            f"{rec.describe}: reads resource variable {rec.state.variable_name(rid)} before "
            "any ASSIGN_VARIABLE wrote it")
    return value


# --------------------------------------------------------------------------- VAR_HANDLE


def prepare_var_handle(ctx: OpContext):
    ctx.check_arity(0, 0, 1)
    state = _state(ctx)
    out = ctx.outputs[0]
    if num_elements(out.shape) != 1:
        raise ctx.shape_error(f"its output {quoted(out.name)} has shape {list(out.shape)}; "
                              "a resource handle is one value")
    key = resource_key(ctx.options)
    return (OutputSpec(out.shape, RESOURCE_DTYPE),), state.resource_ids[key]


def eval_var_handle(resource_id: int, inputs, outputs) -> None:
    outputs[0].fill(resource_id)


# --------------------------------------------------------------------------- READ_VARIABLE


@dataclass(frozen=True)
class Read(Variable):
    dtype: np.dtype  # the output's
    dynamic: bool  # the output takes the variable's shape


def prepare_read(ctx: OpContext):
    ctx.check_arity(1, 1, 1)
    state = _state(ctx)
    _check_handle(ctx)
    out = ctx.outputs[0]
    dynamic = out.rank == 0  # read_variable.cc: rank 0 may be a scalar or unknown
    return (OutputSpec(out.shape, out.dtype, dynamic=dynamic),), \
        Read(state, ctx.describe(), out.dtype, dynamic)


def eval_read(rec: Read, inputs, outputs) -> None:
    value = _stored(rec, inputs[0])
    if value.dtype != rec.dtype:  # read_variable.cc: TF_LITE_ENSURE_TYPES_EQ
        raise DTypeError(f"{rec.describe}: the variable holds {value.dtype.name}, the output "
                         f"is {rec.dtype.name}")
    if rec.dynamic:
        outputs[0] = value.copy()
        return
    target = outputs[0]
    if value.size != target.size:
        raise ShapeError(f"{rec.describe}: the variable has shape {list(value.shape)}, the "
                         f"output {list(target.shape)}")
    np.copyto(target, value.reshape(target.shape))


# --------------------------------------------------------------------------- ASSIGN_VARIABLE


def prepare_assign(ctx: OpContext):
    ctx.check_arity(2, 2, 0)
    state = _state(ctx)
    _check_handle(ctx)
    ctx.input(1)
    return (), Variable(state, ctx.describe())


def eval_assign(rec: Variable, inputs, outputs) -> None:
    variables = rec.state.variables
    rid = _resource_id(inputs[0])
    value = inputs[1]
    stored = variables.get(rid)
    if stored is not None and stored.shape == value.shape and stored.dtype == value.dtype:
        np.copyto(stored, value)  # AssignFrom reuses the buffer when the size is unchanged
    else:
        variables[rid] = np.array(value, copy=True)


OPS = (
    OpDef("VAR_HANDLE", float=Kernel(prepare_var_handle, eval_var_handle), state=True),
    OpDef("READ_VARIABLE", float=Kernel(prepare_read, eval_read), state=True),
    OpDef("ASSIGN_VARIABLE", float=Kernel(prepare_assign, eval_assign), state=True),
)
