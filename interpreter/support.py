"""What keeps a model from running: every problem of every op, each with its kind and what
to do -- the one message allocate_tensors() raises for a model it cannot run, and the
report ``edgelite inspect`` appends.

``report(model)`` checks each op of each subgraph without stopping at the first problem:

1. static checks (static_check.static_problem): a CUSTOM op without a kernel, an unknown
   builtin code (a newer schema), a builtin with no kernel, a tensor type numpy cannot
   hold, a sparse tensor;
2. every other op is prepared, in order, for the shapes the file declares (outputs of
   the ops before it as their prepare() computed them), and the error it raises, if any,
   is classified. Ops fold as allocate_tensors() folds them (allocation.fold_source:
   SHAPE / RANK of a known shape and the chains over them, a float16 filter behind a
   DEQUANTIZE), and an op whose shape operand is still computed is, as there, left to
   invoke: its "must be constant" or shape error is no problem.

The kind of a prepare() error comes from the error's class and the op's operand types,
not from a list of what edgelite lacks today, so it stays right as kernels are added.
A refusal that names a type (int8, int16, float...) is, by the activations (the op's
first input and first output):

* ``hybrid``: a float first input with int8 / uint8 constant weights (dynamic-range
  quantization);
* ``int16``: int16 activations (16x8 quantization);
* ``quantized``: int8 / uint8 activations without an integer kernel;

and otherwise ``sparse`` (a sparse operand), ``dynamic`` (an operand that must be
constant is computed), or what the error class says: ``shape``, ``format``, ``dtype``,
``unsupported``. With kernels="micro", an op TFLite Micro refuses for its uint8 operands
(micro/uint8.py) is ``micro uint8``. Each problem is one line: the kernel's own message
naming the op, then ``[kind: what to do]``.

A shape error of an op that reads the output of an op with a problem is left out (it is a
consequence, not a cause), as is the error of a WHILE / IF / CALL_ONCE whose called
subgraphs have problems of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from .allocation import _as_step, _prepare_op, _Setting, fold_source, folds
from .static_check import _describe, is_string, static_problem
from .dynamic import computed_operands
from edgelite.errors import (DTypeError, EdgeliteError, GraphError, ModelFormatError, ShapeError,
                             UnsupportedOpError)
from .kernel_set import DEFAULT_CONFIG, QuantConfig
from .kernels.base import Kernel, storage_dtype
from .kernels.control_flow import SUBGRAPH_OPTIONS
from .kernels.custom import NO_CUSTOM
from .micro.uint8 import ADVICE as MICRO_UINT8_ADVICE, uint8_refusal
from .loader.model import Model
from .program import Program, State, check_calls, resource_ids
from edgelite.names import quoted
from .runloop import quiet
from .settings import Settings

FLOAT_KINDS = (np.float32, np.float16, np.float64)
INT8_KINDS = (np.int8, np.uint8)

ADVICE = {
    "custom": "register a kernel for it: Interpreter(..., custom_kernels={{{name}: "
              "Kernel(prepare, eval)}}) or edgelite.interpreter.register_custom_kernel",
    "unknown builtin": "the file uses a newer TFLite schema than edgelite knows; convert "
                       "the model with an older TensorFlow, or without this op",
    "no kernel": "edgelite has no kernel for this op; convert the model without it",
    "hybrid": "dynamic-range (hybrid) quantization: float activations with int8 weights; "
              "convert with full-integer quantization (a representative dataset) or as "
              "float",
    "int16": "16x8 quantization (int16 activations); convert with int8 activations",
    "quantized": "no integer kernel for this op; convert it as float, or quantize "
                 "without it",
    "sparse": "sparse tensors are not supported; convert without sparsity (dense "
              "weights)",
    "dynamic": "an operand that must be constant is computed at run time; give the "
               "model fixed shapes (convert with a concrete input signature)",
    "dtype": "convert the model with supported tensor types",
    "shape": "check the model's shapes (resize_tensor_input() for unknown dimensions)",
    "format": "the file is damaged or was written for another kernel",
    "unsupported": "edgelite's kernel does not cover this case",
    "micro uint8": f"{MICRO_UINT8_ADVICE}, or run this file with kernels='reference' "
                   "(LiteRT's uint8 kernels)",
}


@dataclass(frozen=True)
class Problem:
    """One op (or tensor) edgelite cannot run."""

    subgraph: int
    op: int  # operator index; -1 for a subgraph input / output tensor
    where: str  # "operator 3 CUSTOM 'Foo' (output 'y')"
    kind: str  # a key of ADVICE
    detail: str
    custom_code: str | None = None
    text: str = ""  # the error's own line naming the op (default: "where: detail")

    @property
    def advice(self) -> str:
        return ADVICE[self.kind].format(name=quoted(self.custom_code or "", limit=40))

    def line(self) -> str:
        """The problem as one line: what the kernel said, then [kind: what to do]."""
        return f"{self.text or f'{self.where}: {self.detail}'} [{self.kind}: {self.advice}]"


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _detail(exc: EdgeliteError, op, index: int) -> str:
    """An error's first line without the op description kernels put first
    (OpContext.describe: "subgraph 1 operator 3 (CONV_2D, output 'y'): ...")."""
    text = _first_line(exc)
    head, sep, rest = text.partition("): ")
    prefix = (f"subgraph {index} " if index else "") + f"operator {op.index} ("
    return rest if sep and head.startswith(prefix) else text


def classify(op, subgraph, exc: EdgeliteError, quant: QuantConfig = DEFAULT_CONFIG) -> str:
    """The kind of ``exc``, raised by ``op``'s prepare(), from its operands' types."""
    if isinstance(exc, ModelFormatError):
        return "format"
    if quant.micro and uint8_refusal(op, subgraph):
        return "micro uint8"
    tensors = [subgraph.tensors[t] for t in list(op.inputs) + list(op.outputs) if t >= 0]
    if any(t.is_sparse for t in tensors):
        return "sparse"
    if isinstance(exc, ShapeError):
        return "shape"
    text = str(exc)
    if "must be a constant" in text:
        return "dynamic"
    if not any(name in text for name in ("int8", "int16", "float")):
        # the kernel refuses something other than a type (a scale, a missing tensor)
        return "dtype" if isinstance(exc, DTypeError) else "unsupported"
    # the activations: the op's first computed input (TRANSPOSE_CONV's comes after its
    # constant output shape) and first output (an integer LSTM's int16 cell state, a
    # gather's indices do not make it a 16x8 or an integer op)
    first = next((subgraph.tensors[t] for t in op.inputs
                  if t >= 0 and subgraph.tensors[t].data is None), None)
    main = [t for t in [first] + [subgraph.tensors[t] for t in op.outputs[:1] if t >= 0]
            if t is not None]
    main = [t.dtype.type for t in main if t.data is None and t.dtype is not None]
    weights = [subgraph.tensors[t] for t in op.inputs if t >= 0
               and subgraph.tensors[t].data is not None]
    if first is not None and first.dtype is not None and \
            first.dtype.type in FLOAT_KINDS and \
            any(t.dtype is not None and t.dtype.type in INT8_KINDS for t in weights):
        return "hybrid"
    if np.int16 in main:
        return "int16"
    if any(d in INT8_KINDS for d in main):
        return "quantized"
    return "dtype" if isinstance(exc, DTypeError) else "unsupported"


def _callees(op) -> list[int]:
    return [int(op.options.get(key) or 0) for _, key in SUBGRAPH_OPTIONS.get(op.name, ())]


def _scan(model: Model, index: int, settings: Settings, program) -> list:
    """(Problem, op, consequence?) for each op of subgraph ``index`` that fails, prepared
    and folded as allocate_tensors() does it for the declared shapes."""
    sg = model.subgraphs[index]
    dtypes = tuple(storage_dtype(t) for t in sg.tensors)
    setting = _Setting(sg, dtypes, settings, program)
    custom, quant = settings.custom_kernels, settings.quant
    shapes = [tuple(1 if d < 0 else int(d) for d in t.shape) for t in sg.tensors]
    values = {t.index: t.data for t in sg.tensors if t.data is not None}
    folded: dict[int, int] = {}  # folded tensor -> bytes of file constants it comes from
    # tensors whose shape or value only an invoke tells: computed by ops with problems,
    # dynamic outputs, and what ops prepared at invoke compute
    unknown: set[int] = set()
    found = []
    for op in sg.operators:
        where = _describe(op, sg)
        code = op.custom_code if op.name == "CUSTOM" else None
        static = static_problem(op, sg, custom)
        if static:
            found.append((Problem(index, op.index, where, static[0], static[1], code), op,
                          False))
            unknown.update(op.outputs)
            continue
        # a shape operand still computed: allocate_tensors() prepares the op at invoke,
        # with the operand's values; only a problem the values cannot change is one
        waits = bool(computed_operands(op.name, op.inputs, values))
        try:
            infos = tuple(setting.info(t, shapes[t], values.get(t)) if t >= 0 else None
                          for t in op.inputs)
            outs = tuple(setting.info(t, shapes[t], None) for t in op.outputs)
            kernel, specs, record = _prepare_op(op, setting, infos, outs)
        except EdgeliteError as exc:
            kind = classify(op, sg, exc, quant)
            unknown.update(op.outputs)
            if waits and kind in ("dynamic", "shape"):
                continue
            consequence = kind == "shape" and any(t in unknown for t in op.inputs)
            found.append((Problem(index, op.index, where, kind, _detail(exc, op, index),
                                  code, _first_line(exc)), op, consequence))
            continue
        except Exception as exc:  # noqa: BLE001 -- a report must not stop at one op
            found.append((Problem(index, op.index, where, "unsupported",
                                  f"{type(exc).__name__}: {exc}", code), op, False))
            unknown.update(op.outputs)
            continue
        if waits or any(spec.dynamic for spec in specs) or \
                any(t in unknown for t in op.inputs):
            unknown.update(op.outputs)  # shapes known only at invoke: later errors may follow
            continue
        for t, spec in zip(op.outputs, specs):
            shapes[t] = tuple(spec.shape)
        _fold(op, sg, kernel, record, specs, values, folded)
    return found


def _fold(op, sg, kernel, record, specs, values: dict, folded: dict) -> None:
    """Evaluate ``op`` when allocate_tensors() folds it (allocation.fold_source / folds:
    a SHAPE chain, a filter behind a DEQUANTIZE), so later ops see its outputs as constants
    as they do there."""
    source = fold_source(op, sg, values, folded)
    if source is None or not folds(specs, source):
        return
    try:
        outs = tuple(np.zeros(s.shape, s.dtype) for s in specs)
        eval_fn, rec = _as_step(kernel, record)
        with quiet():
            eval_fn(rec, tuple(values.get(t) for t in op.inputs), outs)
    except Exception:  # noqa: BLE001 -- not folded: later ops see a computed operand
        return
    for t, arr in zip(op.outputs, outs):
        values[t] = arr
        folded[t] = source


def report(model: Model, subgraphs: Iterable[int] | None = None,
           custom: Mapping[str, Kernel] = NO_CUSTOM, quant: QuantConfig = DEFAULT_CONFIG
           ) -> list[Problem]:
    """Every problem of the ``subgraphs`` (indices; None: all) of ``model``."""
    indices = list(range(len(model.subgraphs))) if subgraphs is None else list(subgraphs)
    try:  # subgraph calls out of range or recursive: nothing can be prepared
        check_calls(model, indices)
    except GraphError as exc:
        return [Problem(0, -1, "model", "format", _first_line(exc), text=_first_line(exc))]
    settings = Settings(quant=quant, custom_kernels=custom)  # one thread, no memory limit
    program = Program(model, State(resource_ids(model)), settings)
    scanned = {k: _scan(model, k, settings, program) for k in indices}
    bad = {k for k, found in scanned.items() if found}
    problems = []
    for k in indices:
        for problem, op, consequence in scanned[k]:
            if consequence or any(c in bad for c in _callees(op)):
                continue
            problems.append(problem)
        sg = model.subgraphs[k]
        for t in sg.inputs + sg.outputs:
            dtype = storage_dtype(sg.tensors[t])
            if dtype is None or dtype.kind == "O" and not is_string(sg.tensors[t]):
                where = f"subgraph {k} " if k else "model "
                problems.append(Problem(k, -1, f"{where}input/output", "dtype",
                                        f"tensor {t} {quoted(sg.tensors[t].name)} has type "
                                        f"{sg.tensors[t].type_name}"))
    return problems


def message(problems: list[Problem]) -> str:
    """The text of the UnsupportedOpError for ``problems``: one line each (one problem:
    that line alone)."""
    if len(problems) == 1:
        return problems[0].line()
    kinds = sorted({p.kind for p in problems})
    return (f"edgelite's interpreter cannot run this model ({len(problems)} unsupported "
            f"item(s); {', '.join(kinds)}):\n" + "\n".join(f"  {p.line()}" for p in problems))


def raise_report(model: Model, subgraphs: Iterable[int], settings: Settings,
                 cause: EdgeliteError | None = None) -> None:
    """Raise one UnsupportedOpError listing every problem of ``subgraphs`` for an
    Interpreter's ``settings``; ``cause`` itself when the report finds none (an error no
    op explains, e.g. a resize)."""
    problems = report(model, subgraphs, settings.custom_kernels, settings.quant)
    if len(problems) == 1 and cause is not None and \
            not isinstance(cause, UnsupportedOpError):
        raise cause  # the one problem is the cause: keep its class (a DTypeError)
    if problems:
        raise UnsupportedOpError(message(problems)) from None
    if cause is not None:
        raise cause
