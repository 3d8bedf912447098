"""The tf.lite-shaped detail dicts (get_input_details, _get_ops_details, ...).

Keys, value types and conventions follow tf.lite.Interpreter / ai_edge_litert 2.x:

* shape / shape_signature: int32 arrays (shape_signature keeps -1 for unknown dims);
* dtype: the numpy scalar type (numpy.float32, not a dtype instance);
* quantization: (scale, zero_point) -- the per-tensor pair, or (0.0, 0) when the
  tensor has no quantization or more than one scale (per-channel);
* quantization_parameters: scales (float32 array), zero_points (int32 array),
  quantized_dimension, block_size (0: no blockwise quantization);
* sparsity_parameters: {} for a dense tensor; for a sparse constant traversal_order,
  block_map (int32 arrays) and dim_metadata, one dict per traversed dim: {"format": 0,
  "dense_size": n} or {"format": 1, "array_segments", "array_indices"} (int32 arrays);
* a STRING tensor's dtype is numpy.bytes_, a RESOURCE / VARIANT handle's numpy.object_,
  INT4 / INT2 numpy.int8 and UINT4 numpy.uint8, as LiteRT gives them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgelite.errors import DTypeError, GraphError
from .loader.model import Operator, Tensor
from edgelite.names import quoted
from .loader.model_objects import Sparsity


# The detail dtype LiteRT gives types numpy cannot hold (measured on ai-edge-litert); its
# get_tensor_details() skips the others (BFLOAT16, FLOAT8, ...): detail_dtype() None.
_PACKED_DTYPES = {"INT4": np.int8, "INT2": np.int8, "UINT4": np.uint8,
                  "RESOURCE": np.object_, "VARIANT": np.object_}


def detail_dtype(tensor: Tensor):
    """The ``dtype`` of a tensor's details, as LiteRT's; None for a type LiteRT skips."""
    if tensor.dtype is None:
        return _PACKED_DTYPES.get(tensor.type_name)
    return np.bytes_ if tensor.dtype.kind == "O" else tensor.dtype.type


def sparsity_details(sparsity: Sparsity | None) -> dict[str, Any]:
    if sparsity is None:
        return {}
    levels = []
    for dim in sparsity.dim_metadata:
        if dim.is_csr:
            levels.append({"format": 1,
                           "array_segments": np.asarray(dim.segments, np.int32),
                           "array_indices": np.asarray(dim.indices, np.int32)})
        else:
            levels.append({"format": 0, "dense_size": int(dim.dense_size)})
    return {"traversal_order": np.array(sparsity.traversal_order, np.int32),
            "block_map": np.array(sparsity.block_map, np.int32),
            "dim_metadata": levels}


def tensor_details(tensor: Tensor, shape: tuple[int, ...]) -> dict[str, Any]:
    q = tensor.quantization
    scales = np.zeros(0, np.float32) if q is None else np.array(q.scale, np.float32)
    zero_points = np.zeros(0, np.int32) if q is None else np.array(q.zero_point, np.int32)
    if len(scales) == 1:
        per_tensor = (float(scales[0]), int(zero_points[0]) if len(zero_points) else 0)
    else:
        per_tensor = (0.0, 0)
    return {
        "name": tensor.name,
        "index": tensor.index,
        "shape": np.array(shape, dtype=np.int32),
        "shape_signature": np.array(tensor.shape_signature, dtype=np.int32),
        "dtype": detail_dtype(tensor),
        "quantization": per_tensor,
        "quantization_parameters": {
            "scales": scales,
            "zero_points": zero_points,
            "quantized_dimension": 0 if q is None else int(q.quantized_dimension),
            "block_size": 0,
        },
        "sparsity_parameters": sparsity_details(tensor.sparsity),
    }


def op_details(op: Operator, tensors: tuple[Tensor, ...]) -> dict[str, Any]:
    def types(indices):
        return [detail_dtype(tensors[t]) for t in indices
                if t >= 0 and detail_dtype(tensors[t]) is not None]

    return {
        "index": op.index,
        "op_name": op.custom_code if op.name == "CUSTOM" and op.custom_code else op.name,
        "inputs": np.array(op.inputs, dtype=np.int32),
        "outputs": np.array(op.outputs, dtype=np.int32),
        "operand_types": types(op.inputs),
        "result_types": types(op.outputs),
    }


def dequantized(tensor: Tensor, index: int, value: np.ndarray) -> np.ndarray:
    """real = scale * (q - zero_point) of an integer tensor's ``value``, per channel along
    quantized_dimension when it has several scales; computed in double, rounded to float32
    (LiteRT's DEQUANTIZE). Errors name the tensor."""
    q = tensor.quantization
    if value.dtype.kind not in "iu" or q is None or q.scale.size == 0:
        raise DTypeError(
            f"tensor {index} {quoted(tensor.name)} is {value.dtype.name} without quantization "
            "parameters, so it has no real value to dequantize; read it with get_tensor()"
        )
    scale = np.asarray(q.scale, np.float64)
    zero = np.asarray(q.zero_point, np.float64) if q.zero_point.size else np.zeros(1)
    if scale.size > 1:
        axis = int(q.quantized_dimension)
        if not 0 <= axis < value.ndim or value.shape[axis] != scale.size or \
                zero.size not in (1, scale.size):
            raise GraphError(
                f"tensor {index} {quoted(tensor.name)} has {scale.size} scales on quantized "
                f"dimension {axis}, but its shape is {list(value.shape)}"
            )
        shape = [1] * value.ndim
        shape[axis] = -1
        scale = scale.reshape(shape)
        zero = zero.reshape(shape) if zero.size > 1 else zero
    return (scale * (value.astype(np.float64) - zero)).astype(np.float32)
