"""Op layers: functions called on symbolic tensors in a Functional model. Keras 3 stores
`keras.ops` calls as layers of module keras.src.ops.* (a mask's `not_equal(tokens, 0)`,
`x * 2`); tf.keras stores `tf.*` calls as TFOpLambda layers naming the function
(`math.multiply`, `__operators__.add`, `nn.relu6`). The elementwise ones and reductions are
written here; an argument may be a tensor, a number or a constant array."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..context import KTensor, LayerCtx
from .merge import _broadcast_shape

BOOL = np.dtype(bool)


def _operand(ctx: LayerCtx, value, like: KTensor, k: int) -> KTensor:
    if isinstance(value, KTensor):
        return value
    if isinstance(value, (bool, int, float)):
        ref = ctx.g.const(f"{ctx.prefix}/y{k}", np.asarray(value, like.dtype))
        return KTensor(ref, (), like.dtype)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        # a constant tensor argument (the walker reads Keras 3's inline `__tensor__`), taken
        # in the other operand's dtype as a number is -- unless that would drop its fraction
        if value.dtype.kind == "f" and like.dtype.kind != "f":
            ctx.fail(f"argument {k} is a {value.dtype} constant on a {like.dtype} tensor: "
                     "cast the tensor to float first")
        ref = ctx.g.const(f"{ctx.prefix}/y{k}", value.astype(like.dtype))
        return KTensor(ref, value.shape, like.dtype)
    ctx.fail(f"argument {k} is a {type(value).__name__}: edgelite reads tensors, numbers and "
             "constant arrays")


def binary(op_type: str, out_bool: bool = False):
    def rule(ctx: LayerCtx) -> KTensor:
        args = list(ctx.args)
        tensors = [a for a in args if isinstance(a, KTensor)]
        if len(args) != 2 or not tensors:
            ctx.fail(f"called with {len(args)} arguments, {len(tensors)} tensors")
        a, b = (_operand(ctx, v, tensors[0], k) for k, v in enumerate(args))
        ref = ctx.op(op_type, op_type, [a.ref, b.ref],
                     dtype=None if a.dtype == BOOL else a.dtype)
        shape = _broadcast_shape(ctx, [a.shape, b.shape])
        return KTensor(ref, shape, BOOL if out_bool else a.dtype)
    return rule


def reduction(op_type: str):
    """keras.ops any / all / mean / sum / max / min over `axis` (None: all), `keepdims`."""
    def rule(ctx: LayerCtx) -> KTensor:
        x = ctx.input()
        axis = ctx.config.get("axis")
        axes = list(range(x.rank)) if axis is None else \
            [axis] if isinstance(axis, int) else list(axis)
        axes = sorted({int(a) % x.rank for a in axes})
        keep = bool(ctx.cfg("keepdims", False))
        ref = ctx.op(op_type, op_type, [x.ref, ctx.int_const("axis", axes)],
                     dtype=None if x.dtype == BOOL else x.dtype, keep_dims=keep,
                     Tidx=np.dtype(np.int32))
        shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape)) if keep else \
            tuple(d for a, d in enumerate(x.shape) if a not in axes)
        return KTensor(ref, shape, x.dtype)
    return rule


# tf.keras TFOpLambda functions: binary ones (x and y), unary ones (x)
TF_BINARY = {"__operators__.add": "AddV2", "math.add": "AddV2", "math.multiply": "Mul",
             "math.subtract": "Sub", "math.truediv": "RealDiv", "math.maximum": "Maximum",
             "math.minimum": "Minimum"}
TF_UNARY = {"nn.relu": "Relu", "nn.relu6": "Relu6", "math.sigmoid": "Sigmoid",
            "math.tanh": "Tanh", "math.exp": "Exp", "math.sqrt": "Sqrt", "math.square": "Square",
            "math.abs": "Abs", "math.negative": "Neg"}


def tf_op_lambda(ctx: LayerCtx) -> KTensor:
    """A tf.keras TFOpLambda: tf.<function>(x, y=...) for the functions above."""
    function = str(ctx.cfg("function", ""))
    x = ctx.input()
    if function in TF_UNARY:
        return KTensor(ctx.op(TF_UNARY[function], TF_UNARY[function], [x.ref]), x.shape,
                       x.dtype, x.mask)
    if function in TF_BINARY:
        y = ctx.kwargs.get("y", ctx.args[1] if len(ctx.args) > 1 else None)
        if y is None:
            ctx.fail(f"tf.{function} called without its second operand")
        return binary(TF_BINARY[function])(replace(ctx, args=[x, y]))
    ctx.fail(f"tf.{function} is not a function edgelite reads in a TFOpLambda layer")


CAST_DTYPES = {"float32": np.dtype(np.float32), "int32": np.dtype(np.int32),
               "int64": np.dtype(np.int64), "bool": BOOL}


def cast(ctx: LayerCtx) -> KTensor:
    """keras.ops.cast(x, dtype): a Cast node (x's mask passes on)."""
    x = ctx.input()
    name = ctx.cfg("dtype", "float32")
    if isinstance(name, dict):
        name = name.get("config", {}).get("name", name)
    if name not in CAST_DTYPES:
        ctx.fail(f"casts to {name}: edgelite reads casts to {' / '.join(CAST_DTYPES)}")
    dst = CAST_DTYPES[name]
    if dst == x.dtype:
        return x
    ref = ctx.op("Cast", "Cast", [x.ref], dtype=None, SrcT=x.dtype, DstT=dst)
    return KTensor(ref, x.shape, dst, x.mask)


def _slice_bound(ctx: LayerCtx, value, what: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    ctx.fail(f"indexes with a {what} of {value!r}: edgelite reads constant integer slices")


def get_item(ctx: LayerCtx) -> KTensor:
    """x[key] with a constant key (Python's indexing: ints, slices, None, one Ellipsis) as
    one StridedSlice, the form tf's own __getitem__ writes: an int shrinks its axis, None
    inserts one, a slice keeps its axis."""
    if len(ctx.args) != 2 or not isinstance(ctx.args[0], KTensor):
        ctx.fail("is not a tensor indexed by one key")
    x, key = ctx.args
    key = list(key) if isinstance(key, (list, tuple)) else [key]
    begin, end, strides, masks = [], [], [], dict.fromkeys(
        ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0)
    spans = []      # per key entry: ("axis", dims it reads) / ("new",) / ("ellipsis",)
    for k, item in enumerate(key):
        bit = 1 << k
        kind = item.get("class_name") if isinstance(item, dict) else None
        if kind == "__slice__":
            cfg = item.get("config", {})
            start, stop, step = (_slice_bound(ctx, cfg.get(n), n) for n in ("start", "stop", "step"))
            if step == 0:
                ctx.fail("slices with step 0")
            begin.append(start or 0)
            end.append(stop or 0)
            strides.append(step or 1)
            masks["begin_mask"] |= bit if start is None else 0
            masks["end_mask"] |= bit if stop is None else 0
            spans.append(("slice", slice(start, stop, step)))
            continue
        begin.append(0)
        end.append(0)
        strides.append(1)
        if item is None:
            masks["new_axis_mask"] |= bit
            spans.append(("new",))
        elif kind == "__ellipsis__" and not masks["ellipsis_mask"]:
            masks["ellipsis_mask"] |= bit
            spans.append(("ellipsis",))
        elif isinstance(item, int) and not isinstance(item, bool):
            begin[-1], end[-1] = item, item + 1
            masks["shrink_axis_mask"] |= bit
            spans.append(("int", item))
        else:
            ctx.fail(f"indexes with {item!r}: edgelite reads ints, slices, None and one "
                     "Ellipsis")
    shape = _indexed_shape(ctx, x.shape, spans)
    ref = ctx.op("strided_slice", "StridedSlice",
                 [x.ref, ctx.int_const("begin", begin), ctx.int_const("end", end),
                  ctx.int_const("strides", strides)], dtype=x.dtype,
                 Index=np.dtype(np.int32), **masks)
    return KTensor(ref, shape, x.dtype)


def _indexed_shape(ctx: LayerCtx, shape: tuple, spans: list) -> tuple:
    """The static shape of x[key] (None where a dimension is unknown)."""
    used = sum(1 for s in spans if s[0] in ("slice", "int"))
    if used > len(shape):
        ctx.fail(f"indexes {used} axes of a rank-{len(shape)} tensor")
    if not any(s[0] == "ellipsis" for s in spans):
        spans = spans + [("ellipsis",)]
    out, axis = [], 0
    for span in spans:
        if span[0] == "new":
            out.append(1)
        elif span[0] == "ellipsis":
            n = len(shape) - used
            out.extend(shape[axis:axis + n])
            axis += n
        elif span[0] == "int":
            size = shape[axis]
            if size is not None and not -size <= span[1] < size:
                ctx.fail(f"index {span[1]} is out of range for axis {axis} of size {size}")
            axis += 1
        else:
            size = shape[axis]
            out.append(None if size is None else len(range(size)[span[1]]))
            axis += 1
    return tuple(out)


def convert_to_tensor(ctx: LayerCtx) -> KTensor:
    """keras.ops.convert_to_tensor on a tensor: itself."""
    return ctx.input()


RULES = {
    "ConvertToTensor": convert_to_tensor, "Cast": cast, "GetItem": get_item,
    "LogicalOr": binary("LogicalOr", True),
    "Any": reduction("Any"), "Mean": reduction("Mean"),
    "Sum": reduction("Sum"), "Max": reduction("Max"), "Min": reduction("Min"),
    "NotEqual": binary("NotEqual", True),
    "Add": binary("AddV2"), "Subtract": binary("Sub"), "Multiply": binary("Mul"),
    "TrueDivide": binary("RealDiv"),
    "Maximum": binary("Maximum"), "Minimum": binary("Minimum"),
}
