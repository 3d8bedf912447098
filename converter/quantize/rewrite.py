"""Rewrite a float Graph to full-integer int8 / uint8 / 16x8, given a real-value range per tensor.

Every op in INTEGER_OPS (INT16_OPS for 16x8) runs on quantized tensors; any other op (and any
op matched by RewriteConfig.keep_float) stays float with DEQUANTIZE / QUANTIZE inserted where
storage changes. In an int8 model, ops matched by RewriteConfig.int16 (and with 16x8 kernels)
run with int16 activations instead -- a per-op fallback cheaper than float: a QUANTIZE
requantizes int8 <-> int16 where the activation type changes. Quantized tensors keep the float tensor's name, so
the float and quantized models can be compared tensor by tensor; a tensor added at a
boundary is named "<name>_<dtype>" (e.g. the int8 copy of a float graph input: "input_int8").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted
from ..ir import Graph, Op, QuantParams, Tensor
from .lstm import fits as lstm_fits
from .lstm import quantize_lstm, store_weights_int8
from .params import (Affine, QType, activation, asymmetric, quant_params, quantize,
                     symmetric_weights, with_min_scale)
from .rules import (AFFINE, FIXED_OUTPUT, INT16_OPS, INTEGER_OPS, RECURRENT, SAME_AS_INPUT,
                    SHARED_INPUTS, UINT8_OPS, WEIGHT_AXIS)
from .selective import keep_float_ops


# A tensor other ops read too joins a SHARED op's parameters only if they are at most this
# many times coarser than its own (tie_shared).
WIDEN = 2.0


class IOType(Enum):
    FLOAT = "float"
    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"


@dataclass(frozen=True)
class RewriteConfig:
    qtype: QType = QType.INT8
    per_channel: bool = True
    io_type: IOType = IOType.FLOAT
    output_type: IOType | None = None   # the outputs' type when not io_type's
    # ops kept float even if they have integer kernels: op types, TF node names or output
    # tensor names (selective.op_matches)
    keep_float: frozenset[str] = frozenset()
    # ops of an int8 model run with int16 activations (16x8) instead, where they have 16x8
    # kernels (same patterns as keep_float)
    int16: frozenset[str] = frozenset()
    # float sequence LSTMs (also in keep_float) whose weights are stored int8 behind
    # DEQUANTIZE: weights-only, where the integer LSTM loses the signal (lstm_check.py)
    int8_weights: frozenset[str] = frozenset()


@dataclass
class Boundary:
    """Parameters fixed from outside one graph, where it meets the subgraphs it calls or its
    caller (subgraphs.py): a loop variable has one set on both sides of the boundary."""

    operands: dict[tuple[int, int], Affine] = field(default_factory=dict)  # (id(op), i)
    tensors: dict[int, Affine] = field(default_factory=dict)  # id: subgraph inputs, results
    outputs: dict[int, Affine] = field(default_factory=dict)  # a subgraph's output k


class _Rewriter:
    def __init__(self, graph: Graph, ranges: dict[str, tuple[float, float]],
                 input_params: dict[str, Affine], cfg: RewriteConfig,
                 boundary: Boundary | None = None) -> None:
        self.g, self.ranges, self.cfg, self.qt = graph, ranges, cfg, cfg.qtype
        self.input_params = input_params
        self.boundary = boundary or Boundary()
        self.params: dict[int, Affine] = {}
        self.converted: dict[tuple[int, str], Tensor] = {}
        kept = keep_float_ops(graph, cfg.keep_float)
        ops = {QType.INT16: INT16_OPS, QType.UINT8: UINT8_OPS}.get(cfg.qtype, INTEGER_OPS)
        self.integer = {id(op) for op in graph.ops if op.type in ops
                        and _integer_outputs(op) and id(op) not in kept
                        and (op.type not in RECURRENT or lstm_fits(op))}
        # WHILE / IF: their float operands and results are stored quantized (subgraphs.py)
        self.integer |= {id(op) for op in graph.ops if op.subgraphs and id(op) not in kept}
        wide = keep_float_ops(graph, cfg.int16) if cfg.int16 else set()
        # the activation type of each integer op, and of each tensor stored quantized
        self.op_qt = {id(op): QType.INT16 if id(op) in wide and op.type in INT16_OPS
                      else self.qt for op in graph.ops if id(op) in self.integer}
        self.tqt: dict[int, QType] = {id(t): self.op_qt[id(op)] for op in graph.ops
                                      if id(op) in self.integer for t in op.outputs}

    # -- activation parameters --------------------------------------------------------------
    def range_of(self, t: Tensor) -> tuple[float, float]:
        r = t.range or self.ranges.get(t.name)
        if r is None:
            raise EdgeliteError(
                f"tensor {quoted(t.name)} has no range: calibrate with --calib DATA, or give one "
                "with --input-range / --mean-std (inputs) or --default-range MIN,MAX")
        return r

    def qt_of(self, t: Tensor) -> QType:
        """The type `t` is (or will be) stored quantized as."""
        return self.tqt.get(id(t), self.qt)

    def values_range(self, t: Tensor) -> tuple[float, float]:
        if t.is_const:
            return float(t.data.min()), float(t.data.max())
        if t.quant is not None and t.range is None and t.name not in self.ranges:
            # quantized here already (a QUANTIZE after a float-only op): what its codes span
            info = np.iinfo(t.dtype)
            scale, zp = float(t.quant.scale.reshape(-1)[0]), int(t.quant.zero_point.reshape(-1)[0])
            return (info.min - zp) * scale, (info.max - zp) * scale
        return self.range_of(t)

    def act(self, t: Tensor) -> Affine:
        """`t`'s parameters in its own storage type."""
        if id(t) not in self.params:
            if id(t) in self.boundary.tensors:
                self.params[id(t)] = self.boundary.tensors[id(t)]
            elif t.name in self.input_params and self.g.is_input(t):
                self.params[id(t)] = self.input_params[t.name]
            else:  # (a constant: one a SAME_AS_INPUT op reads, GATHER's table)
                self.params[id(t)] = activation(*self.values_range(t), self.qt_of(t))
        return self.params[id(t)]

    def act_as(self, t: Tensor, qt: QType) -> Affine:
        """`t`'s parameters when stored as `qt` (a copy of another type than its own)."""
        return self.act(t) if qt is self.qt_of(t) else activation(*self.values_range(t), qt)

    def assign_outputs(self, op: Op) -> None:
        out = op.outputs[0]
        qt = self.op_qt[id(op)]
        if op.type in FIXED_OUTPUT:
            scale, zp = FIXED_OUTPUT[op.type][qt]
            self.params[id(out)] = Affine(np.array([scale], np.float32), np.array([zp]))
        elif op.type in SAME_AS_INPUT:
            # the data is the first float input (SPLIT's comes after its axis); every output
            # (SPLIT's and UNPACK's parts) holds some of its values
            data = next(t for t in op.inputs if t is not None and t.dtype == np.float32)
            for t in op.outputs:
                self.params[id(t)] = self.act_as(data, qt)
        elif op.type in SHARED_INPUTS:
            # The float operands share; integer ones (DYNAMIC_UPDATE_SLICE's start
            # indices) are no quantized data and stay as they are.
            data = [t for t in op.inputs if t is not None and t.dtype == np.float32]
            lows, highs = zip(*[self.range_of(t) if not t.is_const else
                                (float(t.data.min()), float(t.data.max()))
                                for t in [*data, out]])
            shared = self.tied.get(id(out)) or activation(min(lows), max(highs), qt)
            self.params[id(out)] = shared
            for t in data:
                producer = self.g.producer(t)
                free = (producer is not None and id(producer) in self.integer
                        and self.qt_of(t) is qt
                        and producer.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT
                        and self.g.use_count(t) == 1)
                if free:
                    self.params[id(t)] = shared
        else:
            for t in op.outputs:
                if t.dtype == np.float32:
                    self.act(t)
            if op.type in ("ADD", "SUB"):
                self.keep_multiplier_below_one(op, qt)

    def keep_multiplier_below_one(self, op: Op, qt: QType) -> None:
        """ADD / SUB: an output scale of at least 4 * max(input scales) / 2^left_shift. At
        half that the output multiplier of add.cc / sub.cc reaches 1, where LiteRT's ADD
        aborts and its SUB stops rescaling (interpreter/kernels/common/add_paths.py); an output
        range that narrow (a near-zero difference) is below the inputs' own steps anyway."""
        scales = [float((activation(float(t.data.min()), float(t.data.max()), qt) if t.is_const
                         else self.act_as(t, qt)).scale[0])
                  for t in op.inputs[:2] if t is not None and t.dtype == np.float32]
        out = op.outputs[0]
        floor = 4 * max(scales, default=0.0) / 2.0 ** (15 if qt is QType.INT16 else 20)
        if out.dtype == np.float32 and float(self.act(out).scale[0]) < floor:
            self.params[id(out)] = with_min_scale(*self.values_range(out), floor, qt)

    def free(self, t: Tensor | None, qt: QType) -> bool:
        """Whether `t` may take parameters chosen for it by a SHARED op it feeds: its own
        are fixed by nothing else (not a kernel's fixed output, a graph input with given or
        integer-typed parameters, a subgraph boundary) and it is stored as `qt`."""
        if t is None or t.is_const or t.dtype != np.float32 or self.qt_of(t) is not qt:
            return False
        if id(t) in self.boundary.tensors:
            return False
        if self.g.is_input(t):
            return self.cfg.io_type is IOType.FLOAT and t.name not in self.input_params
        p = self.g.producer(t)
        return p is not None and not p.subgraphs and p.type not in FIXED_OUTPUT

    def tie_shared(self) -> dict[int, Affine]:
        """One set of parameters per group of tensors a SHARED op (CONCATENATION, PACK, ...)
        ties together, followed back through its operands' producers: every operand of the
        SHARED op, and across SAME_AS_INPUT ops (RESIZE, MAX_POOL, RESHAPE, UNPACK, ...) their
        data input and outputs. TF's quantizer propagates the same way (a concat's operands
        take the concat's parameters, whatever else reads them), so no QUANTIZE requantizes
        an operand. Where it is not safe -- the group's scale would be over WIDEN times the
        one of a tensor other ops read too (a concat of a [-1, 1] and a [-8, 8] tensor) --
        that tensor keeps its own parameters and is requantized for the SHARED op; where it
        is the SHARED op's own result (a graph output PACK of RNN states, tied through the
        states to the concatenations of the cell inputs), the op takes in only the operands
        it alone reads. So does
        a SHARED op's result that other ops read too (DenseNet's running concatenations,
        each read by its block and by the next concatenation): tied, every block would read
        its input at the last concatenation's coarser scale.
        {id(tensor): parameters}; tensors in no such group absent. Not in a graph that meets
        subgraphs (a loop body, its caller): their parameters are fixed on both sides of the
        boundary (subgraphs.py), which a group would only move away from."""
        b = self.boundary
        if b.operands or b.tensors or b.outputs:
            return {}
        kept: set[int] = set()
        while True:
            tied, wide = self._tie_groups(kept)
            if not wide:
                return tied
            kept |= wide

    def _tie_groups(self, kept: set[int]) -> tuple[dict[int, Affine], set[int]]:
        parent: dict[int, int] = {}

        def find(k: int) -> int:
            while parent.setdefault(k, k) != k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            return k

        def joins(t: Tensor | None, qt: QType) -> bool:
            return t is not None and id(t) not in kept and self.free(t, qt)

        tensors: dict[int, Tensor] = {}
        derived: dict[int, int] = {}   # a SAME_AS_INPUT output: its data input (same range)
        sole: set[int] = set()      # a SHARED op's only reader: nothing else sees its scale
        shared_outs: set[int] = set()
        for op in self.g.ops:
            if id(op) not in self.integer:
                continue
            qt = self.op_qt[id(op)]
            if op.type in SAME_AS_INPUT:
                data = next((t for t in op.inputs if t is not None and t.dtype == np.float32),
                            None)
                if not joins(data, qt):
                    continue
                for o in op.outputs:
                    if o.dtype == np.float32:
                        tensors[id(data)], tensors[id(o)] = data, o
                        parent[find(id(o))] = find(id(data))
                        derived[id(o)] = id(data)
            elif op.type in SHARED_INPUTS:
                out = op.outputs[0]
                tensors[id(out)] = out
                shared_outs.add(id(out))
                find(id(out))
                alone = id(out) in kept   # (takes in only the operands it alone reads)
                for t in op.inputs:
                    shared_elsewhere = self.g.use_count(t) > 1 and (
                        alone or id(t) in shared_outs)
                    if joins(t, qt) and not shared_elsewhere:
                        tensors[id(t)] = t
                        parent[find(id(t))] = find(id(out))
                        if self.g.use_count(t) == 1:
                            sole.add(id(t))
        groups: dict[int, list[Tensor]] = {}
        for k, t in tensors.items():
            groups.setdefault(find(k), []).append(t)
        tied: dict[int, Affine] = {}
        wide: set[int] = set()
        for members in groups.values():
            ids = {id(t) for t in members}
            if not ids & shared_outs:
                continue
            ranges = [self.range_of(t) for t in members if id(t) not in derived]
            for op in self.g.ops:   # every operand of the group's SHARED ops (constants too)
                if op.type in SHARED_INPUTS and id(op.outputs[0]) in ids:
                    ranges += [self.values_range(t) for t in op.inputs
                               if t is not None and t.dtype == np.float32]
            lows, highs = zip(*ranges)
            qt = self.qt_of(members[0])
            p = activation(min(lows), max(highs), qt)
            tied.update((k, p) for k in ids)
            # a root (an operand or a SAME_AS_INPUT chain's data) read outside the group,
            # itself or through the chain (MAX_POOL's output read by a CONV_2D), must not
            # become much coarser for that reader
            seen = {}
            for t in members:
                root = id(t)
                while root in derived:
                    root = derived[root]
                seen[root] = seen.get(root, False) or self._read_outside(t, ids)
            for root, outside in seen.items():
                if not outside or root in sole or root in kept:
                    continue
                own = activation(*self.range_of(tensors[root]), qt).scale[0]
                if p.scale[0] > WIDEN * own:
                    wide.add(root)
        return tied, wide

    def _read_outside(self, t: Tensor, group: set[int]) -> bool:
        """Whether an op that ties no tensor of `group` (a SAME_AS_INPUT or SHARED op
        computing one) reads `t`, or `t` is a result."""
        ties = SAME_AS_INPUT | SHARED_INPUTS
        return self.g.is_output(t) or any(
            c.type not in ties or not any(id(o) in group for o in c.outputs)
            for c in self.g.consumers(t))

    # -- storage conversion -----------------------------------------------------------------
    def stored_quantized(self, t: Tensor) -> bool:
        if self.g.is_input(t):
            return self.cfg.io_type is not IOType.FLOAT
        p = self.g.producer(t)
        return p is not None and id(p) in self.integer

    def as_quantized(self, t: Tensor, before: Op, params: Affine | None = None,
                     qt: QType | None = None) -> Tensor:
        """t (float storage) -> a `qt` copy via QUANTIZE, created once per params."""
        qt = qt or self.qt_of(t)
        params = params or self.act_as(t, qt)
        key = (id(t), f"{qt.value}:{params.scale[0]}:{params.zero_point[0]}")
        if key not in self.converted:
            q = self.g.tensor(f"{t.name}_{qt.value}", qt.dtype, t.shape)
            q.quant = quant_params(params)
            self.params[id(q)] = params
            self.tqt[id(q)] = qt
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
    def compared_const(self, op: Op, c: Tensor, qt: QType) -> Affine:
        """A comparison's constant operand (``x > 0``): parameters over its values and the
        data's range together -- its own range alone may be a single value, whose scale 1.0
        LiteRT's quantized comparisons refuse."""
        data = [t for t in op.inputs if t is not None and not t.is_const
                and (t.dtype == np.float32 or t.quant is not None)]  # (maybe quantized now)
        lows, highs = zip(*[self.values_range(t) for t in [c, *data]])
        return activation(min(lows), max(highs), qt)

    def quantize_const(self, op: Op, i: int, pin: Affine | None = None) -> None:
        c = op.inputs[i]
        qt = self.op_qt[id(op)]
        if pin is not None:
            p, data = pin, quantize(c.data, pin, qt.dtype, qt.qmin, qt.qmax)
        elif op.type in AFFINE and i == AFFINE[op.type].weights:
            if qt is not QType.UINT8:  # int8 weights, also under int16 activations
                per_channel = self.cfg.per_channel and not _on_one_grid(c.data)
                axis = WEIGHT_AXIS[op.type] if per_channel else None
                p = symmetric_weights(c.data, axis)
                data = quantize(c.data, p, np.int8, -127, 127)
            else:
                p = asymmetric(float(c.data.min()), float(c.data.max()), qt)
                data = quantize(c.data, p, np.uint8, 0, 255)
        elif op.type in AFFINE and i == AFFINE[op.type].bias:
            s_in = self.act(op.inputs[AFFINE[op.type].data]).scale.astype(np.float64)
            s_w = op.inputs[AFFINE[op.type].weights].quant.scale.astype(np.float64)
            p = Affine((s_in * s_w).astype(np.float32), np.zeros(s_w.size, np.int64), 0)
            info = np.iinfo(qt.bias_dtype)
            data = quantize(c.data, Affine(s_in * s_w, p.zero_point), qt.bias_dtype,
                            int(info.min), int(info.max))
        else:
            p = activation(float(c.data.min()), float(c.data.max()), qt)
            data = quantize(c.data, p, qt.dtype, qt.qmin, qt.qmax)
        if op.type == "FILL" and c.data.ndim == 0:  # fill.cc: the value must be a scalar
            data = data.reshape(())
        self.store_const(op, i, data, p)

    def store_const(self, op: Op, i: int, data: np.ndarray, p: Affine) -> None:
        """Op input i (a constant) becomes `data` quantized with `p`: in place when nothing
        else reads it (the tensor keeps its name), else a new constant."""
        c = op.inputs[i]
        if self.g.use_count(c) == 1:
            c.data, c.dtype, c.shape = data, data.dtype, tuple(data.shape)
            new = c
        else:
            new = op.inputs[i] = self.g.const(c.name, data)
        new.quant = quant_params(p)

    # -- the rewrite --------------------------------------------------------------------------
    def run(self) -> None:
        # tensors that were float before the rewrite (outputs change dtype as we go)
        real = {id(t) for t in self.g.tensors() if t.dtype == np.float32}
        self.tied = self.tie_shared()
        self.params.update(self.tied)
        for op in list(self.g.ops):
            if id(op) in self.integer:
                self.assign_outputs(op)
        for op in list(self.g.ops):
            if id(op) not in self.integer:
                op.inputs = [self.as_float(t, op) if t is not None and not t.is_const
                             and id(t) in real and self.stored_quantized(t) else t
                             for t in op.inputs]
                continue
            qt = self.op_qt[id(op)]
            if op.type in RECURRENT:  # its own scheme: int16 cell state, intermediates
                quantize_lstm(self, op)
                continue
            for i, t in enumerate(op.inputs):
                if t is None or id(t) not in real:
                    continue
                pin = self.boundary.operands.get((id(op), i))
                if pin is None and op.type in SHARED_INPUTS:
                    pin = self.params[id(op.outputs[0])]
                if pin is None and t.is_const and not any(
                        o.dtype == np.float32 for o in op.outputs):
                    pin = self.compared_const(op, t, qt)
                if t.is_const:
                    self.quantize_const(op, i, pin)
                else:
                    self.take_input(op, i, pin, qt)
            for t in op.outputs:
                if id(t) in real:
                    t.dtype, t.quant = qt.dtype, quant_params(self.act(t))
            if qt is QType.INT16 and op.type in ("ADD", "SUB"):
                op.options["pot_scale_int16"] = False  # the general-scale kernels, as TF
        if self.cfg.int8_weights:   # float LSTMs, weights-only (lstm_check.py)
            chosen = keep_float_ops(self.g, self.cfg.int8_weights)
            for op in [op for op in self.g.ops if id(op) in chosen and op.type in RECURRENT]:
                store_weights_int8(self.g, op)
        self.fix_inputs()
        self.fix_outputs()

    def take_input(self, op: Op, i: int, pin: Affine | None, qt: QType) -> None:
        """Op input i (an activation) as the op reads it: stored as `qt`, with `pin`'s
        parameters if given (a QUANTIZE in front where its storage differs)."""
        t = op.inputs[i]
        if not self.stored_quantized(t):
            op.inputs[i] = self.as_quantized(t, op, pin, qt)
        elif self.qt_of(t) is not qt:  # int8 <-> int16 between 8- and 16x8-bit ops
            op.inputs[i] = self.requantize(t, op, pin or self.act_as(t, qt), qt)
        elif pin is not None and not _same(self.act(t), pin):
            op.inputs[i] = self.requantize(t, op, pin)

    def requantize(self, t: Tensor, before: Op | None, target: Affine,
                   qt: QType | None = None) -> Tensor:
        """A QUANTIZE of quantized `t` to other parameters (int8 -> int8 rescales), or to
        another type (int8 <-> int16)."""
        qt = qt or self.qt_of(t)
        q = self.g.tensor(f"{t.name}_requantized", qt.dtype, t.shape)
        q.quant = quant_params(target)
        self.params[id(q)] = target
        self.tqt[id(q)] = qt
        self._insert(before, "QUANTIZE", t, q)
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
            t.dtype, t.quant = self.qt.dtype, quant_params(p)
            if io is not self.qt:
                shift = 128 if io is QType.UINT8 else -128
                outer = Tensor(t.name, io.dtype, t.shape, shape_signature=t.shape_signature)
                outer.quant = quant_params(Affine(p.scale, p.zero_point + shift))
                t.name = self.g.unique_name(f"{t.name}_{self.qt.value}")
                self._insert(first, "QUANTIZE", outer, t)
                self.g.inputs[k] = outer

    def fix_outputs(self) -> None:
        if self.g.is_subgraph:
            self.fix_subgraph_outputs()
            return
        out_type = self.cfg.io_type if self.cfg.output_type is None else self.cfg.output_type
        io = None if out_type is IOType.FLOAT else QType(out_type.value)
        outs = []
        for t in self.g.outputs:
            if t.dtype == np.float32 and io is not None:
                t = self.as_quantized(t, None, qt=self.qt)
            elif t.quant is not None and self.qt_of(t) is not self.qt and io is not None:
                t = self.requantize(t, None, self.act_as(t, self.qt), self.qt)
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


    def fix_subgraph_outputs(self) -> None:
        """A subgraph returns each quantized result with the parameters its caller gave the
        position (a loop variable's, on both sides of the loop)."""
        outs = []
        for k, t in enumerate(self.g.outputs):
            pin = self.boundary.outputs.get(k)
            if pin is not None and t.dtype == np.float32:
                t = self.as_quantized(t, None, pin)
            elif pin is not None and not _same(self.act(t), pin):
                t = self.requantize(t, None, pin)
            outs.append(t)
        self.g.outputs = outs


def _integer_outputs(op: Op) -> bool:
    """Whether the op's outputs allow it to run on quantized inputs: all float (they become
    quantized), or it reads float data: its float outputs become quantized and the others
    stay as they are (a comparison's bool, ARG_MAX's int32 indices; TOPK_V2's values and
    indices)."""
    floats = [t.dtype == np.float32 for t in op.outputs]
    reads_float = any(t is not None and not t.is_const and t.dtype == np.float32
                      for t in op.inputs)
    return all(floats) or reads_float


def _on_one_grid(w: np.ndarray) -> bool:
    """Whether weights already are int8 values times one scale, max|w| / 127: a
    quantization-aware graph's weights after a per-tensor FakeQuant (narrow range, symmetric),
    which TF keeps per tensor. Stored per tensor they are exact (per channel they would be
    rounded again to each channel's own scale)."""
    top = float(np.abs(w).max()) if w.size else 0.0
    if top == 0.0:
        return False
    q = w.astype(np.float64) * (127.0 / top)
    return bool(np.all(np.abs(q - np.round(q)) < 1e-3))


def _same(a: Affine, b: Affine) -> bool:
    return np.array_equal(a.scale, b.scale) and np.array_equal(a.zero_point, b.zero_point)


def quantize_graph(graph: Graph, ranges: dict[str, tuple[float, float]],
                   cfg: RewriteConfig, input_params: dict[str, Affine] | None = None,
                   boundary: Boundary | None = None) -> None:
    """Rewrite `graph` in place to integer arithmetic (see module docstring)."""
    _Rewriter(graph, ranges, input_params or {}, cfg, boundary).run()
    graph.check()
