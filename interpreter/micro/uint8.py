"""Which ops TensorFlow Lite Micro runs on uint8 tensors: very few, TFLM dropped its uint8
kernels. One rule for ``Interpreter(kernels="micro")`` (allocate_tensors() refuses what TFLM
refuses) and for ``edgelite convert --target micro`` / ``edgelite export``
(converter/micro_ops.py).

What TFLM's kernels accept (tflite-micro, tensorflow/lite/micro/kernels/), measured with the
tflite-micro runtime on one-op files (tests/interpreter/micro/test_uint8.py):

* QUANTIZE (quantize_common.cc): Prepare lets uint8 through on either side, but
  EvalQuantizeReference converts only int8 -> uint8 and uint8 -> int8; float32 -> uint8,
  uint8 -> uint8, int16 <-> uint8 fail on the first invoke ("Input FLOAT32, output UINT8
  not supported."). So an int8 model with uint8 inputs and outputs (``--quantize int8
  --io-type uint8``, TF's ``inference_input_type=tf.uint8``) runs.
* DEQUANTIZE (dequantize_common.cc): uint8 -> float32.
* REVERSE_V2 (reverse.cc): lists uint8 among its types.
* ops that only move bytes, whatever their type: RESHAPE and SQUEEZE (a memcpy), SHAPE (reads
  the input's dims only), IF / WHILE / CALL_ONCE (kernel_util.cc copies operands to and
  from the called subgraphs by size), READ_VARIABLE / ASSIGN_VARIABLE
  (micro_resource_variable.cc copies the bytes).
* every other kernel switches on float32 / int8 / int16 (/ int32 / int64 / bool) and
  refuses uint8, in Prepare or on the first invoke: "Type UINT8 (3) not supported.",
  "Only float32/int8/int16 is supported currently, got UINT8", and for a uint8
  convolution conv_common.cc's "Hybrid models are not supported on TFLite Micro.". Custom
  ops TFLM registers (detection post-processing, the signal library) take no uint8 either.
"""

from __future__ import annotations

from ..loader.model_objects import Operator, Subgraph
from edgelite.names import quoted

UINT8 = "UINT8"
# ops whose TFLM kernel copies bytes whatever the element type, or lists uint8
BYTE_OPS = frozenset({"RESHAPE", "SQUEEZE", "SHAPE", "REVERSE_V2", "IF", "WHILE",
                      "CALL_ONCE", "READ_VARIABLE", "ASSIGN_VARIABLE"})
# (input type, output type) pairs of TFLM's QUANTIZE with a uint8 side
QUANTIZE_UINT8 = frozenset({("INT8", UINT8), (UINT8, "INT8")})
ADVICE = "convert with --quantize int8 --io-type uint8 (uint8 only at the inputs and outputs)"


def _types(subgraph: Subgraph, indices) -> list[str]:
    return [subgraph.tensors[i].type_name for i in indices if 0 <= i < len(subgraph.tensors)]


def uint8_refusal(op: Operator, subgraph: Subgraph) -> str | None:
    """Why TFLM refuses ``op`` for its uint8 operands, or None (no uint8 operand, or a
    kernel that takes them)."""
    ins, outs = _types(subgraph, op.inputs), _types(subgraph, op.outputs)
    if UINT8 not in ins + outs or op.name in BYTE_OPS:
        return None
    pair = (ins[0] if ins else "none", outs[0] if outs else "none")
    if op.name == "QUANTIZE":
        if pair in QUANTIZE_UINT8:
            return None
        return (f"TFLite Micro's QUANTIZE converts int8 <-> uint8 only, not "
                f"{pair[0].lower()} -> {pair[1].lower()} (quantize_common.cc)")
    if op.name == "DEQUANTIZE" and pair == (UINT8, "FLOAT32"):
        return None
    label = f"CUSTOM {quoted(op.custom_code)}" if op.name == "CUSTOM" else op.name
    return f"TFLite Micro has no uint8 kernel for {label} (it dropped its uint8 kernels)"


__all__ = ["uint8_refusal", "ADVICE", "BYTE_OPS", "QUANTIZE_UINT8"]
