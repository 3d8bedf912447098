"""GraphDef -> IR -> passes -> .tflite bytes.

    import edgelite
    model = edgelite.convert("models/tf1_cnn.pb")                 # .tflite bytes
    result = edgelite.converter.convert_detailed("m.pbtxt", ConvertOptions(outputs=["probs"]))
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from enum import Enum

from .. import __version__
from ..interpreter.memory import gc_paused
from .shape_inference import infer_shapes
from .export import export_tflite
from .files import check_not_input, write_atomic
from edgelite.errors import EdgeliteError, GraphError
from edgelite.names import quoted
from .graphdef import TFGraph, parse_ref
from .savedmodel import load_source, signature_refs
from .signatures import convert_signatures
from .ir import Graph
from .lower import SupportReport, lower_graph, lower_with_report
from .lower.fake_quant import quantize_dequantize
from .micro_ops import Target, check_micro_model, check_micro_options
from .passes import PASS_NAMES, PassRecord, after_quantization, reset_state, run_passes
from .quantize import FULL_INTEGER, QuantMode, QuantizeOptions, QuantizeReport, quantize
from .quantize.options import KEYWORDS as QUANTIZE_KEYWORDS
from .tf_tensor import const_budget


class RnnState(Enum):
    """What a fused recurrent op (UNIDIRECTIONAL_SEQUENCE_LSTM) does with its h and c
    between invoke() calls (passes/reset_state.py)."""

    RESET = "reset"   # zero state at every invoke: the TF graph's function (default)
    KEEP = "keep"     # carried over until reset_all_variables(): a streaming model


@dataclass
class ConvertOptions:
    """What to convert. Names are GraphDef node names ("node" or "node:1")."""

    inputs: list[str] | None = None          # default: every Placeholder
    outputs: list[str] | None = None         # default: nodes nothing consumes
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    batch_size: int = 1                      # replaces an unknown leading (batch) dim
    disabled_passes: frozenset[str] = frozenset()
    allow_custom_ops: bool = False           # write unsupported TF ops as CUSTOM ops
    quantize: QuantizeOptions | None = None  # None: a float model
    target: Target = Target.DEFAULT          # MICRO: checked for TFLite Micro (micro_ops.py)
    # SavedModels (a directory) and TF1 .meta graphs: which signature / meta graph, and the
    # checkpoint prefix of a .meta graph (savedmodel/)
    # default "serving_default" (or the only one); a list of keys: a multi-signature model
    signature: str | list[str] | tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None      # default ("serve",) (or the only meta graph)
    checkpoint: str | None = None
    force: bool = False                      # MICRO: write what TFLM cannot run (warnings)
    rnn_state: RnnState = RnnState.RESET     # fused recurrent ops: reset or keep their state
    # Placeholders bound to constants (bind.py): name -> value (bool, number, nested list,
    # numpy array, or the text --set takes); conds they decide fold to one branch
    set_values: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.quantize, str):  # quantize="int8": the mode, default settings
            self.quantize = QuantizeOptions(mode=self.quantize)
        for name, kind in (("target", Target), ("rnn_state", RnnState)):
            value = getattr(self, name)
            try:
                setattr(self, name, kind(value))
            except ValueError:
                allowed = ", ".join(m.value for m in kind)
                raise EdgeliteError(f"{name} is one of {allowed}, not {value!r}") from None


QUANTIZE_FIELDS = set(QUANTIZE_KEYWORDS)
CONVERT_FIELDS = {f.name for f in fields(ConvertOptions)}


@dataclass
class ConversionResult:
    model: bytes
    graph: Graph
    passes: list[PassRecord]
    lowered_op_counts: dict[str, int]
    quantization: QuantizeReport | None = None
    warnings: tuple[str, ...] = ()  # target MICRO with force: the ops TFLM cannot run
    # ops keeping state in variable tensors (fused LSTMs), by type, and whether it is reset
    # on every invoke (RnnState.RESET) or carried over (KEEP)
    stateful_ops: dict[str, int] = field(default_factory=dict)
    rnn_state: RnnState = RnnState.RESET
    # a multi-signature model: each signature's own result (its model is not the file's)
    signatures: tuple["ConversionResult", ...] = ()

    def state_note(self) -> str | None:
        """One line saying what the model's stateful ops do between invokes, or None."""
        if not self.stateful_ops:
            return None
        ops = ", ".join(f"{v} {k}" for k, v in self.stateful_ops.items())
        if self.rnn_state is RnnState.RESET:
            return (f"state: {ops}: zero h / c at every invoke, as the graph computes "
                    "(--rnn-state keep carries them from one invoke to the next)")
        return (f"state: {ops}: h / c carried from one invoke to the next (--rnn-state keep); "
                "call reset_all_variables() between independent sequences")


def convert_detailed(source, options: ConvertOptions | None = None) -> ConversionResult:
    options = options or ConvertOptions()
    if isinstance(options.signature, (list, tuple)):
        if len(options.signature) != 1:
            return convert_signatures(source, options, options.signature, convert_detailed,
                                      f"edgelite {__version__}")
        options = replace(options, signature=options.signature[0])
    micro = Target(options.target) is Target.MICRO
    if micro:
        check_micro_options(options.quantize, options.force)
    tf, inputs, outputs, sig = _graph(source, options.inputs, options.outputs, options)
    # The collector is paused while the graph is built and rewritten: these steps make
    # many long-lived objects and little garbage, and its full collections re-scanning them
    # cost a quarter of the time on a 100k-node graph (bench/scale_convert.py).
    with gc_paused():
        with const_budget():  # every constant decoded is charged before it is allocated
            graph = lower_graph(tf, inputs, outputs, options.input_shapes,
                                options.batch_size, options.allow_custom_ops)
        graph.signature = sig
        if options.quantize is None:
            quantize_dequantize(graph)  # a float model computes TF's FakeQuant (fake_quant.py)
        lowered = graph.op_counts()
        disabled = options.disabled_passes
        if options.quantize is not None and options.quantize.mode in FULL_INTEGER and \
                options.quantize.mode is not QuantMode.INT8:
            # the integer sequence LSTM is int8 only (quantize/lstm.py): in uint8 and 16x8
            # models the all-integer loop beats a float LSTM
            disabled = disabled | {"fuse_lstm_loop"}
        records = run_passes(graph, disabled)
        infer_shapes(graph)
    qreport = quantize(graph, options.quantize) if options.quantize else None
    if qreport is not None:
        after_quantization(graph, disabled)  # integer biases, the ops quantization added
    stateful = _op_types(reset_state.stateful_ops(graph))
    rnn_state = RnnState(options.rnn_state)
    if rnn_state is RnnState.RESET:
        reset_state.run(graph)  # after quantization: the states' final types are known
    with gc_paused():
        model = export_tflite(graph, f"edgelite {__version__}")
    warnings = check_micro_model(model, options.force) if micro else ()
    return ConversionResult(model, graph, records, lowered, qreport, warnings, stateful,
                            rnn_state)


def _op_types(ops) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.type] = counts.get(op.type, 0) + 1
    return counts


def convert(source, output_path: str | os.PathLike | None = None, **kwargs) -> bytes:
    """Convert a frozen GraphDef (path to .pb/.pbtxt, or bytes), a SavedModel directory or
    a .meta graph to .tflite bytes.

    Keyword arguments are ConvertOptions fields, and QuantizeOptions fields for the
    quantization: ``convert(src, quantize="int8", calib=samples, io_type="int8")``
    (`calib`: a file, arrays, or an iterable / generator function of samples). With
    `output_path` the file is also written (atomically).
    """
    unknown = sorted(set(kwargs) - CONVERT_FIELDS - QUANTIZE_FIELDS)
    if unknown:
        known = ", ".join(sorted(CONVERT_FIELDS | QUANTIZE_FIELDS - {"mode"}))
        raise EdgeliteError(f"convert() got an unknown setting {unknown[0]!r}; known: {known}")
    given = {k: kwargs.pop(k) for k in set(kwargs) & QUANTIZE_FIELDS}
    if given:
        q = kwargs.get("quantize")
        if q is None:
            raise EdgeliteError(f"{sorted(given)[0]}= is a quantization setting: give "
                                "quantize= too (e.g. quantize=\"int8\")")
        kwargs["quantize"] = QuantizeOptions(mode=q, **given) if isinstance(q, str) \
            else replace(q, **given)
    if "disabled_passes" in kwargs:
        kwargs["disabled_passes"] = frozenset(kwargs["disabled_passes"])
    if output_path is not None and not isinstance(source, (bytes, bytearray)):
        check_not_input(output_path, [source])
    model = convert_detailed(source, ConvertOptions(**kwargs)).model
    if output_path is not None:
        write_atomic(output_path, model)
    return model


def _graph(source, inputs, outputs, options: ConvertOptions):
    """The TF graph, its chosen inputs and outputs, and the signature they stand for."""
    bound = options.set_values or {}
    # The collector is paused while the file is read and indexed (as convert_detailed does
    # for the steps after): a 100k-node graph makes 100k long-lived node objects and names,
    # and full collections re-scanning them cost a quarter of this step.
    with gc_paused():
        loaded = load_source(source, options.signature, options.tags, options.checkpoint,
                             outputs, bound, options.input_shapes)
        tf = TFGraph(loaded.graph_def)
    bound_nodes = {parse_ref(name).node for name in bound}
    if loaded.signature is not None:  # (a signature input's name stands for its node)
        bound_nodes |= {parse_ref(t).node for name, t in loaded.signature.inputs
                        if name in bound}
    sig = loaded.signature if inputs is None and outputs is None else None
    if sig is not None:  # a signature input given a value is no longer one
        sig = replace(sig, inputs=tuple((name, t) for name, t in sig.inputs
                                        if parse_ref(t).node not in bound_nodes))
        inputs, outputs = signature_refs(sig)
    for name in inputs or ():
        if parse_ref(name).node in bound_nodes:
            raise GraphError(f"{quoted(name)} is given a value with --set, so it cannot "
                             "also be an input")
    ins = tf.resolve(inputs, tf.default_inputs, "input")
    outs = tf.resolve(outputs, tf.default_outputs, "output")
    return tf, ins, outs, sig


def check(source, inputs=None, outputs=None, input_shapes=None, signature=None, tags=None,
          checkpoint=None, set_values=None) -> SupportReport:
    """Which op types the graph's live nodes use and which edgelite supports.

    Runs the real lowering (so untaken tf.cond branches are left out, as in convert;
    `set_values` binds placeholders as convert's does).
    """
    options = ConvertOptions(signature=signature, tags=tags, checkpoint=checkpoint,
                             set_values=dict(set_values or {}))
    tf, ins, outs, _ = _graph(source, inputs, outputs, options)
    with const_budget():
        return lower_with_report(tf, ins, outs, input_shapes)[1]


__all__ = ["QuantizeOptions", "ConvertOptions", "RnnState", "Target", "ConversionResult",
           "convert", "convert_detailed", "check", "PASS_NAMES"]
