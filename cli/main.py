"""The `edgelite` command: convert, check, inspect, run, compare, eval, export."""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..interpreter.native import available_backend
from edgelite.names import quoted
from .bench_cmd import bench_command
from .deadline import timeout_option
from .errors import EdgeliteGroup
from .eval_cmd import fraction
from .quant_options import quantize_config, quantize_options
from .scale_options import scale_options
from .text import terminal_lines, terminal_text
from .tflite_flags import apply_aliases, tflite_convert_flags


# Output paths are checked by converter.files.check_writable (a folder, a missing or read-only
# folder: one `error:` line, status 1, before any long work), not by click.
OUTPUT_PATH = click.Path()


def _names(value: str | None) -> list[str] | None:
    return [n.strip() for n in value.split(",") if n.strip()] if value else None


def _input_shapes(values: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for v in values:
        name, sep, dims = v.rpartition(":")
        try:
            if not sep or not name:
                raise ValueError
            shapes[name] = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise click.BadParameter(f"{quoted(v)}: expected NAME:D0,D1,... e.g. "
                                     "input:1,32,32,3", param_hint="--input-shape") from None
    return shapes


@click.group(cls=EdgeliteGroup, name="edgelite",
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="edgelite",
                      message="%(prog)s, version %(version)s (kernels: " + available_backend() + ")")
def main():
    """edgelite: TensorFlow GraphDef -> .tflite converter and numpy interpreter."""


def _saved_model_options(fn):
    """--signature / --tag / --checkpoint: which part of a SavedModel (or .meta graph)."""
    for opt in reversed([
        click.option("--signature", metavar="KEY", multiple=True, help="For a SavedModel: "
                     "the signature to convert (default: serving_default, or the only one)."),
        click.option("--tag", "tags", multiple=True, metavar="TAG", help="For a SavedModel: "
                     "the meta graph's tags (repeatable; default: serve, or the only one)."),
        click.option("--checkpoint", metavar="PREFIX", help="For a TF1 .meta graph: the "
                     "checkpoint prefix its Saver wrote (e.g. model.ckpt)."),
    ]):
        fn = opt(fn)
    return fn


def _signatures(keys: tuple[str, ...]):
    """--signature given 0, 1 or several times -> ConvertOptions.signature."""
    return None if not keys else keys[0] if len(keys) == 1 else list(keys)


def _set_values(ctx, param, values: tuple[str, ...]) -> dict:
    """--set NAME=VALUE (repeatable) -> {name: value} (converter/bind.py)."""
    from ..converter.bind import parse_set
    from edgelite.errors import EdgeliteError
    bound = {}
    for text in values:
        try:
            name, value = parse_set(text)
        except EdgeliteError as e:
            raise click.BadParameter(str(e).removeprefix("--set "), param_hint="--set") from None
        bound[name] = value
    return bound


SET_OPTION = click.option(
    "--set", "set_values", multiple=True, metavar="NAME=VALUE", callback=_set_values,
    help="Bind a placeholder to a constant (repeatable): true/false, a number or a list like "
    "[1,2,3]; tf.conds it decides keep one branch, e.g. --set is_training=false "
    "--set keep_prob=1.0.")


@main.command()
@click.argument("graphdef", metavar="MODEL", type=click.Path(exists=True), required=False)
@click.option("-o", "--output", "output", type=OUTPUT_PATH,
              help="Where to write the .tflite file.")
@click.option("--inputs", help="Comma-separated input node names (default: Placeholders).")
@click.option("--outputs", help="Comma-separated output node names (default: nodes nothing "
              "consumes).")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:D0,D1,...",
              help="Fix an input's shape, e.g. input:1,32,32,3 (repeatable).")
@click.option("--batch-size", default=1, show_default=True,
              help="Replaces an unknown leading dimension of the inputs.")
@click.option("--disable-pass", "disabled", multiple=True, metavar="PASS",
              help="Skip a graph optimisation pass (repeatable); see `edgelite passes`.")
@click.option("--allow-custom-ops", "--allow_custom_ops", is_flag=True,
              help="Write unsupported TF ops as CUSTOM ops named after the TF op.")
@quantize_options
@click.option("--target", type=click.Choice(["default", "micro"]), default="default",
              show_default=True, help="micro: check the result runs in TensorFlow Lite Micro "
              "(every op and its types; no uint8, hybrid or sparse weights), else refuse, "
              "listing what TFLM lacks.")
@click.option("--force", is_flag=True, help="With --target micro: write the model even "
              "where TensorFlow Lite Micro cannot run it (each problem becomes a warning).")
@_saved_model_options
@click.option("--rnn-state", type=click.Choice(["reset", "keep"]), default="reset",
              show_default=True, help="A fused LSTM's h / c between invokes: reset (zero "
              "state every invoke, as the TF graph computes) or keep (carried over until "
              "reset_all_variables(): streaming a sequence in chunks).")
@SET_OPTION
@click.option("-v", "--verbose", is_flag=True, help="List each pass that changed the graph.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary (ops per "
              "signature, the quantization, each op left float and why) instead of text.")
@tflite_convert_flags
@scale_options
def convert(**kw):
    """Convert a TensorFlow model to a .tflite model: a frozen GraphDef (.pb or .pbtxt), a
    SavedModel directory (--signature repeated: one multi-signature model), or a TF1 .meta
    graph with --checkpoint. tflite_convert's flags (--output_file, --saved_model_dir,
    --graph_def_file, --input_arrays, --output_arrays, --input_shapes, --inference_type,
    --inference_input_type, --inference_output_type, --mean_values, --std_dev_values,
    --allow_custom_ops) are accepted too."""
    apply_aliases(kw)
    _convert(**kw)


def _convert(graphdef, output, inputs, outputs, input_shape, batch_size, disabled,
             allow_custom_ops, target, force, signature, tags, checkpoint, rnn_state,
             set_values, verbose, as_json, **quant):
    from ..converter import ConvertOptions, RnnState, Target, convert_detailed
    from ..converter.files import check_not_input, check_writable, shown_path, write_atomic

    if force and target != "micro":
        raise click.BadParameter("it applies to --target micro only", param_hint="--force")
    check_writable(output)  # before a conversion (and calibration) that may take minutes
    check_not_input(output, [graphdef, quant.get("calib"), *_checkpoint_files(checkpoint)])
    with quantize_config(quant, log_to_stderr=as_json) as qopts:
        options = ConvertOptions(_names(inputs), _names(outputs), _input_shapes(input_shape),
                                 batch_size, frozenset(disabled), allow_custom_ops, qopts,
                                 Target(target), _signatures(signature), tuple(tags) or None,
                                 checkpoint,
                                 force=force, rnn_state=RnnState(rnn_state),
                                 set_values=set_values)
        result = convert_detailed(graphdef, options)
    if as_json:
        from .json_out import conversion, dumps
        write_atomic(output, result.model)
        reasons = result.quantization.float_reasons() if result.quantization else {}
        click.echo(dumps(conversion(result, shown_path(output), reasons)))
        return
    calib = result.quantization and result.quantization.calibration
    if calib:
        click.echo(f"calibrated on {calib.used} sample(s)" + (
            f"; skipped {len(calib.skipped)} with NaN/inf (indices "
            f"{calib.skipped[:10]})" if calib.skipped else ""))
    if verbose:
        click.echo(f"lowered: {_counts(result.lowered_op_counts)}")
        for r in result.passes:
            click.echo(f"pass {r.name}: {r.rewrites} rewrite(s); {sum(r.before.values())} -> "
                       f"{sum(r.after.values())} ops")
    write_atomic(output, result.model)
    _micro_warnings(result.warnings)
    if result.state_note():
        click.echo(result.state_note())
    for part in result.signatures:
        g = part.graph
        click.echo(terminal_text(f"signature {g.signature.key}: {len(g.ops)} ops "
                                 f"({_counts(g.op_counts())})"))
    g = result.graph
    ops = f"{len(result.signatures)} signatures" if result.signatures else \
        f"{len(g.ops)} ops ({_counts(g.op_counts())})"
    click.echo(f"wrote {shown_path(output)}: {ops}, {len(result.model)} bytes")


def _checkpoint_files(prefix: str | None) -> list[str]:
    """The files of a checkpoint prefix (model.ckpt -> model.ckpt.index, .data-*)."""
    if not prefix:
        return []
    import glob
    return [f"{prefix}.index", *glob.glob(glob.escape(prefix) + ".data-*")]


def _micro_warnings(lines) -> None:
    for line in lines:
        click.echo(f"warning: TensorFlow Lite Micro cannot run {terminal_text(line)}",
                   err=True)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items())


@main.command()
def passes():
    """List the converter's optimisation passes in pipeline order."""
    from ..converter.passes import PIPELINE, REQUIRED
    width = max(len(p.name) for p in PIPELINE) + 2  # the longest name still gets two spaces
    for p in PIPELINE:
        note = " (required)" if p.name in REQUIRED else ""
        click.echo(f"{p.name:<{width}}{p.doc}{note}")


@main.command()
@click.argument("graphdef", metavar="MODEL", type=click.Path(exists=True))
@click.option("--inputs", help="Comma-separated input node names.")
@click.option("--outputs", help="Comma-separated output node names.")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:D0,D1,...",
              help="Fix an input's shape, e.g. input:1,32,32,3 (repeatable).")
@_saved_model_options
@SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(graphdef, inputs, outputs, input_shape, signature, tags, checkpoint, set_values,
          as_json):
    """Report which TF ops of a GraphDef / SavedModel edgelite supports (exit 1 if any is
    not)."""
    from ..converter import check as check_graph
    if len(signature) > 1:
        raise click.BadParameter("check reads one signature at a time", param_hint="--signature")
    report = check_graph(graphdef, _names(inputs), _names(outputs), _input_shapes(input_shape),
                         _signatures(signature), tuple(tags) or None, checkpoint, set_values)
    if as_json:
        from .json_out import dumps, support
        click.echo(dumps(support(report)))
        sys.exit(0 if report.ok else 1)
    click.echo(terminal_lines(report.table()))  # node names come from the GraphDef
    for line in report.hint_lines():
        click.echo(terminal_lines(line))
    bad = report.unsupported
    if bad:
        n = sum(len(s.unsupported_nodes) for s in bad)
        click.echo(f"\n{len(bad)} unsupported op type(s) in {n} node(s).", err=True)
        sys.exit(1)
    click.echo("\nall ops supported.")


@main.command()
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--target", type=click.Choice(["micro"]), default=None,
              help="micro: also the tensor arena TensorFlow Lite Micro needs.")
@click.option("--footprint", is_flag=True,
              help="Per-op MACs, weight bytes and live activation bytes (TFLite Micro's "
                   "plan) instead of the summary.")
@click.option("--json", "as_json", is_flag=True,
              help="The structure (subgraphs, ops, tensors, quantization, signatures) as "
              "JSON; with --footprint, the footprint.")
def inspect(model, target, footprint, as_json):
    """Show a .tflite model's ops, tensors, shapes, dtypes, quantization and arena size."""
    from .inspect_cmd import describe, footprint_text, micro_arena_line
    if footprint:
        click.echo(footprint_text(model, as_json))
        return
    if as_json:
        from ..interpreter.loader.model import load_model, read_model_file
        from .json_out import dumps, model_structure
        click.echo(dumps(model_structure(load_model(read_model_file(model)))))
        return
    click.echo(describe(model))
    if target == "micro":
        click.echo(micro_arena_line(model))


@main.command()
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--input", "inputs", multiple=True, required=True, metavar="[NAME=]FILE.npy",
              help="Input data (.npy); NAME= picks the input tensor (repeatable).")
@click.option("-o", "--output", type=OUTPUT_PATH,
              help="Save the outputs to an .npz file instead of printing them in full.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the outputs (name, dtype, shape, values) as JSON.")
@timeout_option
def run(model, inputs, output, as_json):
    """Run a .tflite model on .npy inputs and print (or save) its outputs."""
    from .run_cmd import run_model
    run_model(model, inputs, output, as_json)


main.add_command(bench_command)


@main.command()
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--c-array", "folder", required=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Write NAME.cc, NAME.h (the model as a C array) and "
              "NAME_ops.h (TFLite Micro op resolver, arena size) into DIR.")
@click.option("--name", help="The array's name (a C identifier; default: what `xxd -i` "
              "derives from the file name).")
@click.option("--arena-size", type=click.IntRange(min=1), metavar="BYTES",
              help="kTensorArenaSize (TFLite Micro's arena on the device); default: what "
              "TFLite Micro needs for the model on a 32-bit target (as `edgelite inspect "
              "--target micro`). kTensorArenaSizeHost, for a 64-bit build, adds what the "
              "wider structs take there.")
@click.option("--force", is_flag=True, help="Export a model whose ops TensorFlow Lite Micro "
              "registers but cannot run (uint8, hybrid, sparse weights, ...); each problem "
              "becomes a warning.")
def export(model, folder, name, arena_size, force):
    """Export a .tflite model for TensorFlow Lite Micro firmware: C++ sources."""
    from ..converter.files import shown_path
    from ..converter.firmware import check_name, default_name, export_c_array
    from ..interpreter.loader.model import read_model_file
    name = check_name(name, "--name") if name is not None else \
        check_name(default_name(model), "the name derived from the file name")
    out = export_c_array(read_model_file(model), folder, name, arena_size, model, force)
    for path in out.paths:
        click.echo(f"wrote {shown_path(path)}")
    note = "" if out.arena_given else " (TFLite Micro's arena on a 32-bit target)"
    variables = f"; kNumResourceVariables {out.resource_variables}" \
        if out.resource_variables else ""
    click.echo(f"{len(out.methods)} op(s): {', '.join(out.methods)}; kTensorArenaSize "
               f"{out.arena_bytes}{note}; kTensorArenaSizeHost {out.host_arena_bytes} "
               f"(64-bit host build){variables}")
    _micro_warnings(out.warnings)


def _graphdef_options(fn):
    """--inputs / --outputs / --input-shape, for commands that convert a GraphDef to float."""
    for opt in reversed([
        click.option("--inputs", help="For a .pb/.pbtxt model: comma-separated input nodes."),
        click.option("--outputs", help="For a .pb/.pbtxt model: comma-separated output "
                     "nodes."),
        click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:D0,D1,...",
                     help="For a .pb/.pbtxt model: fix an input's shape (repeatable)."),
    ]):
        fn = opt(fn)
    return fn


@main.command()
@click.argument("reference", type=click.Path(exists=True))
@click.argument("quantized", type=click.Path(exists=True, dir_okay=False))
@click.option("--data", required=True, type=click.Path(exists=True),
              help="Input samples: .npy (first axis = samples; memory-mapped) or .npz (one "
              "array per input name, or 'x'), or a folder of .npy / .npz shards.")
@click.option("--samples", type=click.IntRange(min=1), help="Use only the first N samples.")
@click.option("--json", "fmt", flag_value="json", help="Print JSON instead of a table.")
@click.option("--csv", "fmt", flag_value="csv", help="Print CSV (one row per tensor).")
@click.option("-o", "--output", type=OUTPUT_PATH,
              help="Write the table / JSON / CSV to a file instead of stdout.")
@click.option("--plot", type=OUTPUT_PATH, metavar="OUT.png",
              help="Draw SQNR per layer in graph order (needs matplotlib).")
@click.option("--top", type=click.IntRange(min=1), metavar="K", help="Only the K worst tensors.")
@click.option("--sort", type=click.Choice(["op", "sqnr", "graph"]), default="op",
              show_default=True, help="op: by the error each op adds by itself (finds the "
              "culprit); sqnr: by SQNR against the float model; graph: graph order.")
@scale_options
@_graphdef_options
@timeout_option
def compare(reference, quantized, data, samples, fmt, output, plot, top, sort, workers, ray,
            inputs, outputs, input_shape):
    """Compare QUANTIZED with its float REFERENCE (.tflite, or the .pb/.pbtxt / SavedModel) tensor by
    tensor: SQNR, cosine, max error in LSB, bias, worst first; output SQNR, top-1 agreement."""
    from .compare_cmd import run_compare
    run_compare(reference, quantized, data, samples, fmt or "table", output, plot, top, sort,
                _names(inputs), _names(outputs), _input_shapes(input_shape), workers, ray)


@main.command("eval")
@click.argument("models", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--data", required=True, type=click.Path(exists=True),
              help="Input samples: .npy (memory-mapped) or .npz (one array per input name, "
              "or 'x'), or a folder of .npy / .npz shards (sorted by name).")
@click.option("--labels", required=True, type=click.Path(exists=True),
              help="Class labels: .npy, or .npz with 'y' / 'labels'; indices or one-hot; or "
              "a folder of label shards paired with --data's by sorted name.")
@click.option("--top-k", default=1, show_default=True, type=click.IntRange(min=1),
              help="Also report top-K accuracy.")
@click.option("--samples", type=click.IntRange(min=1), help="Use only the first N samples.")
@click.option("--min-accuracy", callback=fraction, metavar="A",
              help="Exit 1 if any model's accuracy is below A (0.9 or 90%).")
@click.option("--max-drop", callback=fraction, metavar="D",
              help="Exit 1 if a model's accuracy is more than D below the FIRST model's "
              "(absolute: 0.01 or 1% = one point).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("-o", "--output", type=OUTPUT_PATH,
              help="Write the table / JSON to a file instead of stdout.")
@scale_options
@_graphdef_options
@timeout_option
def eval_models(models, data, labels, top_k, samples, min_accuracy, max_drop, as_json, output,
                workers, ray, inputs, outputs, input_shape):
    """Accuracy, top-k and per-class accuracy of one or several MODELS side by side (.pb /
    .pbtxt / SavedModel directories converted to float, or float / int8 / uint8 .tflite);
    thresholds for CI."""
    from .eval_cmd import run_eval
    run_eval(models, data, labels, top_k, samples, min_accuracy, max_drop, as_json, output,
             _names(inputs), _names(outputs), _input_shapes(input_shape), workers, ray)


if __name__ == "__main__":
    main()
