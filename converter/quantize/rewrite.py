"""Rewrite a float Graph to full-integer int8 / uint8, given a real-value range per tensor.

Every op in INTEGER_OPS runs on quantized tensors; any other op (and any op matched by
RewriteConfig.keep_float) stays float with DEQUANTIZE / QUANTIZE inserted where storage
changes. Quantized tensors keep the float tensor's name, so
the float and quantized models can be compared tensor by tensor; a tensor added at a
boundary is named "<name>_<dtype>" (e.g. the int8 copy of a float graph input: "input_int8").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ...interpreter.errors import EdgeliteError
from ...interpreter.names import quoted
from ..ir import Graph, Op, QuantParams, Tensor
from .params import Affine, QType, asymmetric, quantize, symmetric_weights
from .rules import (FIXED_OUTPUT, INTEGER_OPS, SAME_AS_INPUT, SHARED_INPUTS, WEIGHT_AXIS)
from .selective import keep_float_ops


class IOType(Enum):
    FLOAT = "float"
    INT8 = "int8"
    UINT8 = "uint8"


@dataclass(frozen=True)
class RewriteConfig:
    qtype: QType = QType.INT8
    per_channel: bool = True
    io_type: IOType = IOType.FLOAT
    # ops kept float even if they have integer kernels: op types, TF node names or output
    # tensor names (selective.op_matches)
    keep_float: frozenset[str] = frozenset()


class _Rewriter:
    def __init__(self, graph: Graph, ranges: dict[str, tuple[float, float]],
                 input_params: dict[str, Affine], cfg: RewriteConfig) -> None:
        self.g, self.ranges, self.cfg, self.qt = graph, ranges, cfg, cfg.qtype
        self.input_params = input_params
        self.params: dict[int, Affine] = {}
        self.converted: dict[tuple[int, str], Tensor] = {}
        kept = keep_float_ops(graph, cfg.keep_float)
        self.integer = {id(op) for op in graph.ops if op.type in INTEGER_OPS
                        and all(t.dtype == np.float32 for t in op.outputs)
                        and id(op) not in kept}

    # -- activation parameters --------------------------------------------------------------
    def range_of(self, t: Tensor) -> tuple[float, float]:
        r = t.range or self.ranges.get(t.name)
        if r is None:
            raise EdgeliteError(
                f"tensor {quoted(t.name)} has no range: calibrate with --calib DATA, or give one "
                "with --input-range / --mean-std (inputs) or --default-range MIN,MAX")
        return r

    def act(self, t: Tensor) -> Affine:
        if id(t) not in self.params:
            if t.name in self.input_params and self.g.is_input(t):
                self.params[id(t)] = self.input_params[t.name]
            else:
                self.params[id(t)] = asymmetric(*self.range_of(t), self.qt)
        return self.params[id(t)]

    def assign_outputs(self, op: Op) -> None:
        out = op.outputs[0]
        if op.type in FIXED_OUTPUT:
            scale, zp = FIXED_OUTPUT[op.type][self.qt]
            self.params[id(out)] = Affine(np.array([scale], np.float32), np.array([zp]))
        elif op.type in SAME_AS_INPUT:
            self.params[id(out)] = self.act(op.inputs[0])
        elif op.type in SHARED_INPUTS:
            # The float operands share; integer ones (DYNAMIC_UPDATE_SLICE's start
            # indices) are no quantized data and stay as they are.
            data = [t for t in op.inputs if t is not None and t.dtype == np.float32]
            lows, highs = zip(*[self.range_of(t) if not t.is_const else
                                (float(t.data.min()), float(t.data.max()))
                                for t in [*data, out]])
            shared = asymmetric(min(lows), max(highs), self.qt)
            self.params[id(out)] = shared
            for t in data:
                producer = self.g.producer(t)
                free = (producer is not None and id(producer) in self.integer
                        and producer.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT
                        and self.g.use_count(t) == 1)
                if free:
                    self.params[id(t)] = shared
        else:
            for t in op.outputs:
                self.act(t)

    # -- storage conversion -----------------------------------------------------------------
    def stored_quantized(self, t: Tensor) -> bool:
        if self.g.is_input(t):
            return self.cfg.io_type is not IOType.FLOAT
        p = self.g.producer(t)
        return p is not None and id(p) in self.integer

    def as_quantized(self, t: Tensor, before: Op, params: Affine | None = None) -> Tensor:
        """t (float storage) -> a quantized copy via QUANTIZE, created once per params."""
        params = params or self.act(t)
        key = (id(t), f"q{params.scale[0]}:{params.zero_point[0]}")
        if key not in self.converted:
            q = self.g.tensor(f"{t.name}_{self.qt.value}", self.qt.dtype, t.shape)
            q.quant = _quant(params)
            self.params[id(q)] = params
            self._insert(before, "QUANTIZE", t, q)
            self.converted[key] = q
        return self.converted[key]

    def as_float(self, t: Tensor, before: Op) -> Tensor:
        key = (id(t), "f")
        if key not in self.converted:
            f = self.g.tensor(f"{t.name}_float", np.float32, t.shape)
            self._insert(before, "DEQUANTIZE", t, f)
            self.converted[key] = f
        return self.converted[key]

    def _insert(self, before: Op | None, type_: str, src: Tensor, dst: Tensor) -> None:
        self.g.insert_op(Op(type_, [src], [dst], {}, name=dst.name), before)

    # -- constants ----------------------------------------------------------------------------
    def quantize_const(self, op: Op, i: int) -> None:
        c = op.inputs[i]
        qt = self.qt
        if op.type in WEIGHT_AXIS and i == 1:
            if qt is QType.INT8:
                axis = WEIGHT_AXIS[op.type] if self.cfg.per_channel else None
                p = symmetric_weights(c.data, axis)
                data = quantize(c.data, p, np.int8, -127, 127)
            else:
                p = asymmetric(float(c.data.min()), float(c.data.max()), qt)
                data = quantize(c.data, p, np.uint8, 0, 255)
        elif op.type in WEIGHT_AXIS and i == 2:
            s_in = self.act(op.inputs[0]).scale.astype(np.float64)
            s_w = op.inputs[1].quant.scale.astype(np.float64)
            p = Affine((s_in * s_w).astype(np.float32), np.zeros(s_w.size, np.int64), 0)
            data = quantize(c.data, Affine(s_in * s_w, p.zero_point), np.int32,
                            -2 ** 31, 2 ** 31 - 1)
        else:
            p = self.params.get(id(op.outputs[0])) if op.type in SHARED_INPUTS else None
            p = p or asymmetric(float(c.data.min()), float(c.data.max()), qt)
            data = quantize(c.data, p, qt.dtype, qt.qmin, qt.qmax)
        if self.g.use_count(c) == 1:  # quantize in place: the tensor keeps its name
            c.data, c.dtype, c.shape = data, data.dtype, tuple(data.shape)
            new = c
        else:
            new = op.inputs[i] = self.g.const(c.name, data)
        new.quant = _quant(p)

    # -- the rewrite --------------------------------------------------------------------------
    def run(self) -> None:
        # tensors that were float before the rewrite (outputs change dtype as we go)
        real = {id(t) for t in self.g.tensors() if t.dtype == np.float32}
        for op in list(self.g.ops):
            if id(op) in self.integer:
                self.assign_outputs(op)
        for op in list(self.g.ops):
            if id(op) not in self.integer:
                op.inputs = [self.as_float(t, op) if t is not None and not t.is_const
                             and id(t) in real and self.stored_quantized(t) else t
                             for t in op.inputs]
                continue
            for i, t in enumerate(op.inputs):
                if t is None or id(t) not in real:
                    continue
                if t.is_const:
                    self.quantize_const(op, i)
                elif not self.stored_quantized(t):
                    # a shared operand is quantized straight to the output's parameters
                    shared = (self.params[id(op.outputs[0])] if op.type in SHARED_INPUTS
                              else None)
                    op.inputs[i] = self.as_quantized(t, op, shared)
                elif op.type in SHARED_INPUTS and not _same(self.act(t),
                                                            self.params[id(op.outputs[0])]):
                    op.inputs[i] = self.requantize(t, op)
            for t in op.outputs:
                t.dtype, t.quant = self.qt.dtype, _quant(self.act(t))
        self.fix_inputs()
        self.fix_outputs()

    def requantize(self, t: Tensor, op: Op) -> Tensor:
        target = self.params[id(op.outputs[0])]
        q = self.g.tensor(f"{t.name}_requantized", self.qt.dtype, t.shape)
        q.quant = _quant(target)
        self.params[id(q)] = target
        self._insert(op, "QUANTIZE", t, q)
        return q

    def fix_inputs(self) -> None:
        """Integer io: the graph inputs become io-typed; a uint8 input of an int8 model (or
        the reverse) gets a QUANTIZE that shifts the zero point by 128."""
        if self.cfg.io_type is IOType.FLOAT:
            return
        io = QType(self.cfg.io_type.value)
        first = self.g.ops[0] if self.g.ops else None
        for k, t in enumerate(list(self.g.inputs)):
            if t.dtype != np.float32:
                continue
            p = self.act(t)
            t.dtype, t.quant = self.qt.dtype, _quant(p)
            if io is not self.qt:
                shift = 128 if io is QType.UINT8 else -128
                outer = Tensor(t.name, io.dtype, t.shape, shape_signature=t.shape_signature)
                outer.quant = _quant(Affine(p.scale, p.zero_point + shift))
                t.name = self.g.unique_name(f"{t.name}_{self.qt.value}")
                self._insert(first, "QUANTIZE", outer, t)
                self.g.inputs[k] = outer

    def fix_outputs(self) -> None:
        io = None if self.cfg.io_type is IOType.FLOAT else QType(self.cfg.io_type.value)
        outs = []
        for t in self.g.outputs:
            if t.dtype == np.float32 and io is not None:
                t = self.as_quantized(t, None)
            # (an output that is not a quantized tensor -- ARG_MAX's int32 indices -- stays)
            if t.quant is not None and t.dtype != np.float32 and (io is None or io is not self.qt):
                inner_name = t.name
                t.name = self.g.unique_name(f"{t.name}_{self.qt.value}")
                if io is None:
                    out = Tensor(inner_name, np.dtype(np.float32), t.shape)
                    self._insert(None, "DEQUANTIZE", t, out)
                else:
                    shift = 128 if io is QType.UINT8 else -128
                    out = Tensor(inner_name, io.dtype, t.shape)
                    out.quant = QuantParams(t.quant.scale, t.quant.zero_point + shift)
                    self._insert(None, "QUANTIZE", t, out)
                t = out
            outs.append(t)
        self.g.outputs = outs


def _same(a: Affine, b: Affine) -> bool:
    return np.array_equal(a.scale, b.scale) and np.array_equal(a.zero_point, b.zero_point)


def _quant(p: Affine) -> QuantParams:
    return QuantParams(np.asarray(p.scale, np.float32), np.asarray(p.zero_point, np.int64),
                       p.axis)


def quantize_graph(graph: Graph, ranges: dict[str, tuple[float, float]],
                   cfg: RewriteConfig, input_params: dict[str, Affine] | None = None) -> None:
    """Rewrite `graph` in place to integer arithmetic (see module docstring)."""
    _Rewriter(graph, ranges, input_params or {}, cfg).run()
    graph.check()
