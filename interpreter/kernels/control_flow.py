"""WHILE, IF and CALL_ONCE: ops that call other subgraphs.

Matches LiteRT's while.cc, if.cc and call_once.cc. Tensors pass by value: each subgraph
has its own tensors, and the op copies its inputs into the callee's inputs and the
callee's outputs into its own outputs (memcpy there, np.copyto here). The callee is
prepared by ``ctx.program`` (program.py) for the shapes of the op's inputs, once, at
allocate time; its record keeps it (``Callee``) and eval() runs its steps.

WHILE (while.cc): ``cond`` and ``body`` take the op's n inputs; cond gives one bool
(shape [] or [1]), body gives n outputs of the input types. If the body, prepared for
the input shapes, gives back those shapes, the loop is *static* (Eval_static, as the
LiteRT release edgelite is tested against runs it: the body's inputs share memory with
the op's outputs): inputs -> cond inputs and -> body inputs; then while cond is true:
run body, body outputs -> cond inputs, body outputs -> body inputs; finally body inputs
-> outputs. The copies go tensor by tensor in order, as LiteRT's CopyTensorsData does,
so a body that returns its inputs permuted sees exactly LiteRT's values, and after an
invoke the body's input tensors hold the loop's final values, as in LiteRT. Otherwise
the outputs are dynamic (Eval_dynamic): the newest values are kept in new arrays, and
cond and body are prepared for each new set of shapes (program.Program caches them) --
a carried tensor that grows.

IF (if.cc): input 0 is a bool with one element; the other inputs go to the ``then`` or
``else`` subgraph; the outputs are dynamic when the two branches' output shapes differ.

CALL_ONCE (call_once.cc): runs its init subgraph (no inputs, no outputs) on the first
invoke, never again in the interpreter's life -- not after reset_all_variables() nor
after allocate_tensors() (LiteRT's initialization status map lives in the Interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from edgelite.names import quoted
from ..runloop import run
from .base import Kernel, OpContext, OutputSpec, storage_dtype
from .opdef import OpDef

@dataclass(frozen=True)
class Callee:
    """One subgraph prepared for one set of input shapes, as a caller sees it."""

    index: int
    alloc: Any  # allocation.Allocation
    inputs: tuple[np.ndarray, ...]  # the arrays of its input tensors
    outputs: tuple[np.ndarray, ...] | None  # of its output tensors; None if any is dynamic
    output_ids: tuple[int, ...]

    def results(self) -> tuple[np.ndarray, ...]:
        """The arrays of its outputs after a run."""
        if self.outputs is not None:
            return self.outputs
        arrays = self.alloc.arrays
        return tuple(arrays[t] for t in self.output_ids)


def _callee(program, index: int, shapes: tuple) -> Callee:
    alloc = program.prepare(index, shapes)
    sg = program.model.subgraphs[index]
    outputs = tuple(alloc.arrays[t] for t in sg.outputs)
    dynamic = any(t in alloc.dynamic for t in sg.outputs)
    return Callee(index, alloc, tuple(alloc.arrays[t] for t in sg.inputs),
                  None if dynamic else outputs, tuple(sg.outputs))


def _run(program, callee: Callee) -> None:
    run(callee.alloc.steps)  # (inside the caller's run: runloop.quiet is on)
    program.current[callee.index] = callee.alloc  # what get_tensor(subgraph_index=) reads
    if program.after_run is not None:
        program.after_run(callee.index)


def _copy(targets, sources) -> None:
    for target, source in zip(targets, sources):
        np.copyto(target, source)


def _owned(arrays) -> list[np.ndarray]:
    return [np.array(a, copy=True) for a in arrays]


def _shapes(arrays) -> tuple[tuple[int, ...], ...]:
    return tuple(a.shape for a in arrays)


# --------------------------------------------------------------------------- checks


def _subgraph(ctx: OpContext, role: str) -> int:
    """The index of the subgraph ``ctx``'s op calls as ``role``, range-checked."""
    if ctx.program is None:
        raise ctx.unsupported("calls another subgraph; it runs only inside an Interpreter")
    key = dict(SUBGRAPH_OPTIONS[ctx.op_name])[role]
    index = int(ctx.option(key, 0))
    n = len(ctx.program.model.subgraphs)
    if not 0 <= index < n:
        raise ctx.shape_error(f"its {role} subgraph index {index} is out of range: the model "
                              f"has {n} subgraph(s)")
    return index


def _check_callee(ctx: OpContext, role: str, index: int, inputs, num_outputs: int,
                  output_dtypes=None) -> None:
    """Arity and element types of subgraph ``index`` against what the op passes
    (``inputs``: TensorInfos) and expects (``num_outputs``, ``output_dtypes``)."""
    sg = ctx.program.model.subgraphs[index]
    what = f"its {role} subgraph {index}"
    if len(sg.inputs) != len(inputs):
        raise ctx.shape_error(f"passes {len(inputs)} tensor(s) to {what}, which takes "
                              f"{len(sg.inputs)}")
    if len(sg.outputs) != num_outputs:
        raise ctx.shape_error(f"expects {num_outputs} output(s) from {what}, which gives "
                              f"{len(sg.outputs)}")
    for i, (info, t) in enumerate(zip(inputs, sg.inputs)):
        tensor = sg.tensors[t]
        if storage_dtype(tensor) != info.dtype:
            raise ctx.dtype_error(
                f"passes {quoted(info.name)} ({info.dtype.name}) as input {i} of {what}, "
                f"whose tensor {quoted(tensor.name)} is {tensor.type_name.lower()}")
    for i, (dtype, t) in enumerate(zip(output_dtypes or (), sg.outputs)):
        tensor = sg.tensors[t]
        if storage_dtype(tensor) != dtype:
            raise ctx.dtype_error(
                f"output {i} is {dtype.name} but {what} gives {quoted(tensor.name)} as "
                f"{tensor.type_name.lower()}")


def _no_omitted_inputs(ctx: OpContext) -> None:
    if any(i is None for i in ctx.inputs):
        raise ctx.shape_error("an input is omitted (-1); every input goes to a subgraph")


def _check_cond(ctx: OpContext, index: int, value: np.ndarray) -> None:
    """The cond subgraph's output: one bool, shape [] or [1] (while.cc CheckCondOutput)."""
    if value.dtype != np.bool_ or value.shape not in ((), (1,)):
        raise ctx.shape_error(
            f"its cond subgraph {index} gives a {value.dtype.name} of shape "
            f"{list(value.shape)}; it must give one bool (shape [] or [1])")


# --------------------------------------------------------------------------- WHILE


@dataclass(frozen=True)
class StaticLoop:
    program: Any
    ctx: OpContext  # for messages (a dynamic cond output is checked at invoke)
    cond: Callee
    body: Callee


@dataclass(frozen=True)
class DynamicLoop:
    program: Any
    ctx: OpContext  # for messages (a cond output checked at invoke)
    cond: int
    body: int


def prepare_while(ctx: OpContext):
    _no_omitted_inputs(ctx)
    n = len(ctx.inputs)
    if len(ctx.outputs) != n:
        raise ctx.shape_error(f"has {n} inputs but {len(ctx.outputs)} outputs; a WHILE "
                              "gives back as many tensors as it takes")
    cond, body = _subgraph(ctx, "cond"), _subgraph(ctx, "body")
    if cond == body:
        raise ctx.shape_error(f"uses subgraph {cond} as both its cond and its body")
    dtypes = tuple(i.dtype for i in ctx.inputs)
    for i, (out, dtype) in enumerate(zip(ctx.outputs, dtypes)):
        if out.dtype != dtype:
            raise ctx.dtype_error(f"output {i} {quoted(out.name)} is {out.dtype.name} but "
                                  f"input {i} is {dtype.name}")
    _check_callee(ctx, "cond", cond, ctx.inputs, 1, (np.dtype(np.bool_),))
    _check_callee(ctx, "body", body, ctx.inputs, n, dtypes)
    program = ctx.program
    shapes = tuple(i.shape for i in ctx.inputs)
    cond_callee = _callee(program, cond, shapes)
    body_callee = _callee(program, body, shapes)
    if cond_callee.outputs is not None:
        _check_cond(ctx, cond, cond_callee.outputs[0])
    if body_callee.outputs is not None and _shapes(body_callee.outputs) == shapes:
        return (tuple(OutputSpec(s, d) for s, d in zip(shapes, dtypes)),
                StaticLoop(program, ctx, cond_callee, body_callee))
    return (tuple(OutputSpec(o.shape, d, dynamic=True) for o, d in zip(ctx.outputs, dtypes)),
            DynamicLoop(program, ctx, cond, body))


def _truth(ctx: OpContext, cond: Callee) -> bool:
    value = cond.results()[0]
    if cond.outputs is None:  # a dynamic cond output: checked on every run, as LiteRT does
        _check_cond(ctx, cond.index, value)
    return bool(value.reshape(-1)[0])


def eval_while(rec, inputs, outputs) -> None:
    if isinstance(rec, DynamicLoop):
        _eval_dynamic_while(rec, inputs, outputs)
        return
    program, cond, body = rec.program, rec.cond, rec.body
    cond_out = cond.outputs[0].reshape(-1) if cond.outputs is not None else None
    _copy(cond.inputs, inputs)
    _copy(body.inputs, inputs)
    state, where, count = program.state, rec.ctx.describe(), 0
    while True:
        _run(program, cond)
        if not (cond_out[0] if cond_out is not None else _truth(rec.ctx, cond)):
            break
        count += 1
        state.loop_iteration(where, count)
        _run(program, body)
        _copy(cond.inputs, body.outputs)
        _copy(body.inputs, body.outputs)
    _copy(outputs, body.inputs)


def _eval_dynamic_while(rec: DynamicLoop, inputs, outputs: list) -> None:
    """while.cc Eval_dynamic: the newest values live in ``current`` (LiteRT keeps them in
    the op's outputs); cond and body are prepared for their shapes on every iteration."""
    program = rec.program
    current = _owned(inputs)
    state, where, count = program.state, rec.ctx.describe(), 0
    while True:
        cond = _callee(program, rec.cond, _shapes(current))
        _copy(cond.inputs, current)
        _run(program, cond)
        if not _truth(rec.ctx, cond):
            break
        count += 1
        state.loop_iteration(where, count)
        body = _callee(program, rec.body, _shapes(current))
        _copy(body.inputs, current)
        _run(program, body)
        current = _owned(body.results())
    outputs[:] = current


# --------------------------------------------------------------------------- IF


@dataclass(frozen=True)
class Branches:
    program: Any
    then: Callee
    orelse: Callee
    dynamic: bool


def prepare_if(ctx: OpContext):
    if not ctx.inputs:
        raise ctx.shape_error("needs its condition as input 0")
    _no_omitted_inputs(ctx)
    cond = ctx.inputs[0]
    if cond.dtype != np.bool_ or int(np.prod(cond.shape)) != 1:
        raise ctx.shape_error(f"its condition {quoted(cond.name)} is a {cond.dtype.name} of "
                              f"shape {list(cond.shape)}; it must be one bool")
    args = ctx.inputs[1:]
    dtypes = tuple(o.dtype for o in ctx.outputs)
    callees = []
    for role in ("then", "else"):
        index = _subgraph(ctx, role)
        _check_callee(ctx, role, index, args, len(ctx.outputs), dtypes)
        callees.append(_callee(ctx.program, index, tuple(a.shape for a in args)))
    then, orelse = callees
    if then.outputs is not None and orelse.outputs is not None and \
            _shapes(then.outputs) == _shapes(orelse.outputs):
        specs = tuple(OutputSpec(o.shape, d) for o, d in zip(then.outputs, dtypes))
        return specs, Branches(ctx.program, then, orelse, False)
    specs = tuple(OutputSpec(o.shape, d, dynamic=True) for o, d in zip(ctx.outputs, dtypes))
    return specs, Branches(ctx.program, then, orelse, True)


def eval_if(rec: Branches, inputs, outputs) -> None:
    branch = rec.then if inputs[0].reshape(-1)[0] else rec.orelse
    _copy(branch.inputs, inputs[1:])
    _run(rec.program, branch)
    if rec.dynamic:
        outputs[:] = _owned(branch.results())
    else:
        _copy(outputs, branch.outputs)


# --------------------------------------------------------------------------- CALL_ONCE


@dataclass(frozen=True)
class Once:
    program: Any
    init: Callee


def prepare_call_once(ctx: OpContext):
    ctx.check_arity(0, 0, 0)
    index = _subgraph(ctx, "init")
    _check_callee(ctx, "init", index, (), 0)
    return (), Once(ctx.program, _callee(ctx.program, index, ()))


def eval_call_once(rec: Once, inputs, outputs) -> None:
    done = rec.program.state.initialized
    if rec.init.index in done:
        return
    _run(rec.program, rec.init)
    done.add(rec.init.index)  # only once it ran to the end, as call_once.cc marks it


OPS = (
    OpDef("WHILE", float=Kernel(prepare_while, eval_while),
          subgraphs=(("cond", "cond_subgraph_index"), ("body", "body_subgraph_index"))),
    OpDef("IF", float=Kernel(prepare_if, eval_if),
          subgraphs=(("then", "then_subgraph_index"), ("else", "else_subgraph_index"))),
    OpDef("CALL_ONCE", float=Kernel(prepare_call_once, eval_call_once), state=True,
          subgraphs=(("init", "init_subgraph_index"),)),
)

# The options naming the subgraphs each op calls: (role, option key) (OpDef.subgraphs).
SUBGRAPH_OPTIONS = {op.name: op.subgraphs for op in OPS}
