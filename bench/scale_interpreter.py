"""Load and allocate_tensors() time of long op chains: edgelite against LiteRT.

    python bench/scale_interpreter.py                 # 1k, 10k, 100k ops
    python bench/scale_interpreter.py --sizes 1000,10000 --repeat 3 --no-litert

Each model is a chain over one small float32 tensor (``--width`` elements) that
alternates ``ADD(t, c)`` (``c`` one shared constant, so nothing folds) and ``RELU``:
100,000 ops make a ~7 MB .tflite, the size of the file in the issue this measures.
The files are built directly with flatbuffers (the object API is slow at this size)
and written to ``--out`` so LiteRT reads the same bytes. For every size the script
prints the median load time (``Interpreter(model_content=...)``), the median
``allocate_tensors()`` time, the arena size, and the growth of each time against the
previous size; near-linear work grows ~10x for 10x the ops (n log n: ~11-12x).
Times are CPU seconds of this process (time.process_time), medians of ``--repeat``
runs; each allocate_tensors() follows a resize of the input (batch 1 <-> 2), so every
call plans the arena again in both runtimes. The arena column is edgelite's, at batch 1
or 2 (the last run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import flatbuffers
import numpy as np

from edgelite.interpreter import Interpreter
from edgelite.schema import generated_tflite as tfl
from edgelite.schema import ops as schema_ops


def _int_vector(builder: flatbuffers.Builder, values) -> int:
    return builder.CreateNumpyVector(np.asarray(values, np.int32))


def chain_model(n_ops: int, width: int = 16) -> bytes:
    """``n_ops`` ops alternating ADD(t, c) and RELU over a [1, width] float32 tensor."""
    b = flatbuffers.Builder(1024 + 80 * n_ops)
    const = np.arange(width, dtype=np.float32) / width
    data = b.CreateNumpyVector(const.view(np.uint8))
    buffers = []
    for payload in (None, data):
        tfl.BufferStart(b)
        if payload is not None:
            tfl.BufferAddData(b, payload)
        buffers.append(tfl.BufferEnd(b))

    # tensor 0: the input, 1..n_ops: the op outputs, n_ops + 1: the constant
    tensors = []
    for i in range(n_ops + 2):
        name = b.CreateString("c" if i == n_ops + 1 else f"t{i}")
        shape = _int_vector(b, [width] if i == n_ops + 1 else [1, width])
        tfl.TensorStart(b)
        tfl.TensorAddShape(b, shape)
        tfl.TensorAddType(b, tfl.TensorType.FLOAT32)
        tfl.TensorAddBuffer(b, 1 if i == n_ops + 1 else 0)
        tfl.TensorAddName(b, name)
        tensors.append(tfl.TensorEnd(b))

    tfl.AddOptionsStart(b)
    add_options = tfl.AddOptionsEnd(b)  # shared by every ADD (fused activation NONE)
    operators = []
    for i in range(n_ops):
        is_add = i % 2 == 0
        inputs = _int_vector(b, [i, n_ops + 1] if is_add else [i])
        outputs = _int_vector(b, [i + 1])
        tfl.OperatorStart(b)
        tfl.OperatorAddOpcodeIndex(b, 0 if is_add else 1)
        tfl.OperatorAddInputs(b, inputs)
        tfl.OperatorAddOutputs(b, outputs)
        if is_add:
            tfl.OperatorAddBuiltinOptionsType(b, tfl.BuiltinOptions.AddOptions)
            tfl.OperatorAddBuiltinOptions(b, add_options)
        operators.append(tfl.OperatorEnd(b))

    def table_vector(items) -> int:
        b.StartVector(4, len(items), 4)
        for item in reversed(items):
            b.PrependUOffsetTRelative(item)
        return b.EndVector()

    sg_tensors, sg_operators = table_vector(tensors), table_vector(operators)
    sg_inputs, sg_outputs = _int_vector(b, [0]), _int_vector(b, [n_ops])
    sg_name = b.CreateString("main")
    tfl.SubGraphStart(b)
    tfl.SubGraphAddTensors(b, sg_tensors)
    tfl.SubGraphAddInputs(b, sg_inputs)
    tfl.SubGraphAddOutputs(b, sg_outputs)
    tfl.SubGraphAddOperators(b, sg_operators)
    tfl.SubGraphAddName(b, sg_name)
    subgraph = tfl.SubGraphEnd(b)

    codes = []
    for op_name in ("ADD", "RELU"):
        code = schema_ops.BUILTIN_CODE[op_name]
        tfl.OperatorCodeStart(b)
        tfl.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        tfl.OperatorCodeAddBuiltinCode(b, code)
        tfl.OperatorCodeAddVersion(b, 1)
        codes.append(tfl.OperatorCodeEnd(b))

    model_codes, model_subgraphs = table_vector(codes), table_vector([subgraph])
    model_buffers = table_vector(buffers)
    description = b.CreateString(f"edgelite scale bench: {n_ops}-op chain")
    tfl.ModelStart(b)
    tfl.ModelAddVersion(b, 3)
    tfl.ModelAddOperatorCodes(b, model_codes)
    tfl.ModelAddSubgraphs(b, model_subgraphs)
    tfl.ModelAddDescription(b, description)
    tfl.ModelAddBuffers(b, model_buffers)
    b.Finish(tfl.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _median_time(fn, repeat: int) -> tuple[float, object]:
    """Median CPU seconds of this process (the machine may be shared: other processes'
    load then barely moves it; every step measured here is single-threaded)."""
    times, result = [], None
    for i in range(repeat):
        start = time.process_time()
        result = fn(i)
        times.append(time.process_time() - start)
    return statistics.median(times), result


def _reallocate(interp, width: int):
    """allocate_tensors() after a resize, so each call plans again (LiteRT's constructor
    already allocated once; edgelite's allocate_tensors() always plans)."""
    index = interp.get_input_details()[0]["index"]

    def run(i: int):
        interp.resize_tensor_input(index, [1 + i % 2, width])
        interp.allocate_tensors()
    return run


def _edgelite(data: bytes, width: int, repeat: int) -> tuple[float, float, int]:
    load, interp = _median_time(lambda i: Interpreter(model_content=data), repeat)
    allocate, _ = _median_time(_reallocate(interp, width), repeat)
    return load, allocate, interp.arena_size


def _litert(path: str, width: int, repeat: int) -> tuple[float, float] | None:
    try:
        from ai_edge_litert.interpreter import Interpreter as LiteRT
    except ImportError:
        return None
    try:
        load, interp = _median_time(lambda i: LiteRT(model_path=path), repeat)
        allocate, _ = _median_time(_reallocate(interp, width), repeat)
    except Exception as exc:  # LiteRT refuses the file: report, keep going
        print(f"  LiteRT could not run {path}: {type(exc).__name__}: {exc}")
        return None
    return load, allocate


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated op counts (default 1000,10000,100000)")
    parser.add_argument("--width", type=int, default=16, help="elements per tensor")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--out", default="/tmp/edgelite-scale", help="where the files go")
    parser.add_argument("--no-litert", action="store_true", help="skip LiteRT")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.out, exist_ok=True)
    print(f"{'ops':>8} {'file MB':>8} {'load s':>8} {'x':>6} {'allocate s':>10} {'x':>6} "
          f"{'arena B':>8} {'LiteRT load s':>13} {'LiteRT alloc s':>14}")
    previous = None
    for n in sizes:
        data = chain_model(n, args.width)
        path = os.path.join(args.out, f"chain_{n}.tflite")
        with open(path, "wb") as f:
            f.write(data)
        load, allocate, arena = _edgelite(data, args.width, args.repeat)
        lite = None if args.no_litert else _litert(path, args.width, args.repeat)
        growth = ("", "") if previous is None else (
            f"{load / previous[0]:.1f}", f"{allocate / previous[1]:.1f}")
        lite_text = ("-", "-") if lite is None else (f"{lite[0]:.3f}", f"{lite[1]:.3f}")
        print(f"{n:>8} {len(data) / 1e6:>8.2f} {load:>8.3f} {growth[0]:>6} {allocate:>10.3f} "
              f"{growth[1]:>6} {arena:>8} {lite_text[0]:>13} {lite_text[1]:>14}")
        previous = (load, allocate)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
