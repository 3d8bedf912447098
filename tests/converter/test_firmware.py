"""converter/firmware.py: the model as C++ sources for TFLite Micro firmware.

Where a C++ compiler is present the generated files are compiled and linked with a small
program against a stub ``micro_mutable_op_resolver.h`` written here (the stub records each
``Add...()`` call): the program prints the array's bytes, the calls and the constants, so
the test checks what the compiler made of the files, not just their text. The arena
constants are checked in TFLite Micro's 64-bit runtime (the tflite-micro package): the
host figure runs the model there, the 32-bit one does not.
"""

import os
import re
import shutil
import subprocess

import pytest

from edgelite.converter.firmware import (KEYWORDS, MAX_NAME_CHARS, check_name, default_name,
                                         export_c_array, xxd_name)
from edgelite.converter.micro_ops import CUSTOM_METHOD, RESOLVER_METHOD
from edgelite.interpreter import micro_arena
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS, micro_module

CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
KERAS_INT8 = MODELS / "keras_cnn.tf_int8.tflite"
# The op set of keras_cnn.tf_int8.tflite (edgelite inspect), as TFLM's method names.
KERAS_INT8_METHODS = ["AddAveragePool2D", "AddConv2D", "AddDepthwiseConv2D", "AddDequantize",
                      "AddFullyConnected", "AddMean", "AddQuantize", "AddSoftmax"]
SSD = MODELS / "custom_ssd_postprocess.tf.tflite"
KWS = MODELS / "kws_stream.tf_int8.tflite"  # two resource variables (VAR_HANDLE)


def _stub_resolver(root):
    """tensorflow/lite/micro/micro_mutable_op_resolver.h declaring the class template with
    every Add method of the table; each call is recorded by name."""
    folder = root / "tensorflow" / "lite" / "micro"
    folder.mkdir(parents=True)
    methods = sorted(set(RESOLVER_METHOD.values()) | set(CUSTOM_METHOD.values()))
    body = "".join(f'  TfLiteStatus {m}() {{ return Record("{m}"); }}\n' for m in methods)
    (folder / "micro_mutable_op_resolver.h").write_text(
        "#pragma once\n#include <string>\n#include <vector>\n"
        "typedef enum { kTfLiteOk = 0, kTfLiteError = 1 } TfLiteStatus;\n"
        "namespace tflite {\ntemplate <unsigned int tOpCount>\nclass MicroMutableOpResolver {\n"
        " public:\n  static constexpr unsigned int kCapacity = tOpCount;\n"
        "  std::vector<std::string> calls;\n"
        "  TfLiteStatus Record(const char* name) {\n"
        "    if (calls.size() >= tOpCount) return kTfLiteError;\n"
        "    calls.push_back(name);\n    return kTfLiteOk;\n  }\n"
        f"{body}}};\n}}  // namespace tflite\n")


def _main_program(tmp_path, name):
    """main.cc printing the array, then "N kTensorArenaSize kTensorArenaSizeHost
    kNumResourceVariables misalignment", then the resolver's calls."""
    _stub_resolver(tmp_path / "stub")
    main = tmp_path / "main.cc"
    main.write_text(
        f'#include <cstdio>\n#include "{name}.h"\n#include "{name}_ops.h"\n'
        "int main() {\n"
        f"  for (unsigned int i = 0; i < {name}_len; ++i) std::printf(\"%02x\", {name}[i]);\n"
        f"  std::printf(\"\\n%u %d %d %d %d\\n\", {name}_OpResolver::kCapacity,\n"
        "              kTensorArenaSize, kTensorArenaSizeHost, kNumResourceVariables,\n"
        f"              (int)(reinterpret_cast<unsigned long>({name}) % 16));\n"
        f"  {name}_OpResolver resolver;\n"
        f"  if ({name}_RegisterOps(resolver) != kTfLiteOk) return 1;\n"
        "  for (const auto& c : resolver.calls) std::printf(\"%s\\n\", c.c_str());\n"
        "  return 0;\n}\n")
    return main


def _compiler(tmp_path, folder, name, *args) -> list[str]:
    return [CXX, "-std=c++17", "-Wall", "-Werror", "-I", str(folder), "-I",
            str(tmp_path / "stub"), str(_main_program(tmp_path, name)),
            str(folder / f"{name}.cc"), *args]


def _compile_and_run(tmp_path, folder, name) -> tuple[bytes, list[str], int, tuple]:
    """Build the exported files with a main printing the array, the constants and the
    resolver's calls; (array bytes, calls, capacity N, (kTensorArenaSize,
    kTensorArenaSizeHost, kNumResourceVariables))."""
    exe = tmp_path / "firmware_test"
    subprocess.run(_compiler(tmp_path, folder, name, "-o", str(exe)), check=True,
                   capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    capacity, arena, host, variables, misalignment = (int(v) for v in lines[1].split())
    assert misalignment == 0
    return bytes.fromhex(lines[0]), lines[2:], capacity, (arena, host, variables)


def _array_text_bytes(text: str, name: str) -> bytes:
    body = re.search(rf"alignas\(16\) const unsigned char {name}\[\] = \{{(.*?)\}};", text,
                     re.S).group(1)
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", body))


@pytest.mark.parametrize("file_name, expected, name", [
    ("models/keras_cnn.tf_int8.tflite", "keras_cnn_tf_int8_tflite", "keras_cnn_tf_int8_tflite"),
    ("3d-net.tflite", "__3d_net_tflite", "model_3d_net_tflite"),
    # e-grave: two UTF-8 bytes, two _
    ("mod\u00e8le v2.tflite", "mod__le_v2_tflite", "mod_le_v2_tflite"),
    ("_Net__v2_.tflite", "_Net__v2__tflite", "Net_v2_tflite"),
    ("int", "int", "model_int"),                      # keywords, names TFLM / C++ declare
    ("main", "main", "model_main"),
    ("TfLiteNet.tflite", "TfLiteNet_tflite", "model_TfLiteNet_tflite"),
    ("___", "___", "model"),
])
def test_names_are_xxd_names_made_safe(tmp_path, file_name, expected, name):
    assert xxd_name(file_name) == expected
    assert default_name(file_name) == name == check_name(name, "name")
    if shutil.which("xxd") and "/" not in file_name:
        (tmp_path / file_name).write_bytes(b"\x01")
        out = subprocess.run(["xxd", "-i", file_name], cwd=tmp_path, check=True,
                             capture_output=True).stdout.decode()
        assert f"unsigned char {expected}[]" in out and f"unsigned int {expected}_len" in out


def test_files_and_their_text(tmp_path):
    data = KERAS_INT8.read_bytes()
    out = export_c_array(data, tmp_path / "fw", "g_model", 40_000, KERAS_INT8.name)
    assert [os.path.basename(p) for p in out.paths] == ["g_model.cc", "g_model.h",
                                                        "g_model_ops.h"]
    assert list(out.methods) == KERAS_INT8_METHODS and out.arena_given
    cc, h, ops = ((tmp_path / "fw" / f).read_text() for f in ("g_model.cc", "g_model.h",
                                                             "g_model_ops.h"))
    assert _array_text_bytes(cc, "g_model") == data
    assert f"const unsigned int g_model_len = {len(data)};" in cc
    assert "#ifndef EDGELITE_ARRAY_g_model_H_\n#define EDGELITE_ARRAY_g_model_H_" in h
    assert "#ifndef EDGELITE_OPS_g_model_H_\n#define EDGELITE_OPS_g_model_H_" in ops
    assert "extern const unsigned char g_model[];" in h
    assert "extern const unsigned int g_model_len;" in h
    assert "tflite::MicroMutableOpResolver<8>;" in ops
    assert re.findall(r"resolver\.(Add\w+)\(\)", ops) == KERAS_INT8_METHODS
    # the given size is the device's; the host build adds what its wider structs take
    extra = micro_arena(data, "host") - micro_arena(data, "32bit")
    assert extra > 0 and out.host_arena_bytes == 40000 + extra
    assert "constexpr int kTensorArenaSize = 40000;" in ops
    assert f"constexpr int kTensorArenaSizeHost = {40000 + extra};" in ops
    assert "given to edgelite export" in ops
    assert "constexpr int kNumResourceVariables = 0;" in ops
    assert "MicroResourceVariables::Create" not in ops and out.resource_variables == 0


@pytest.mark.parametrize("model", [KERAS_INT8, KWS], ids=lambda p: p.name)
def test_arenas_for_the_device_and_a_64bit_host_build(tmp_path, model):
    # kTensorArenaSize is the 32-bit figure; TFLM's 64-bit runtime (the tflite-micro
    # package, what a PC-side test runs) needs kTensorArenaSizeHost: with it the model runs
    # there, with the 32-bit figure TFLM fails to allocate
    from edgelite.interpreter import Interpreter
    from tests.interpreter.micro.test_arena import works_in_tflm
    data = model.read_bytes()
    interp = Interpreter(model_content=data)
    interp.allocate_tensors()
    out = export_c_array(data, tmp_path, "m")
    ops = (tmp_path / "m_ops.h").read_text()
    target, host = micro_arena(data, "32bit"), micro_arena(data, "host")
    assert not out.arena_given and (out.arena_bytes, out.host_arena_bytes) == (target, host)
    assert host > target > interp.arena_size
    assert f"constexpr int kTensorArenaSize = {target};" in ops
    assert f"constexpr int kTensorArenaSizeHost = {host};" in ops
    assert "// kTensorArenaSize: on the device (a 32-bit microcontroller)." in ops
    assert works_in_tflm([(model, host), (model, target)]) == [True, False]


def test_resource_variables_are_counted_and_explained(tmp_path):
    # TFLM creates one variable per VAR_HANDLE container / shared name
    # (MicroResourceVariables::CreateIdIfNoneFound); a firmware must create room for them
    runtime = micro_module()
    data = KWS.read_bytes()
    out = export_c_array(data, tmp_path, "kws")
    ops = (tmp_path / "kws_ops.h").read_text()
    assert out.resource_variables == runtime.count_resource_variables(data) == 2
    assert "constexpr int kNumResourceVariables = 2;" in ops
    assert "keeps state in 2 (VAR_HANDLE / READ_VARIABLE /" in ops
    assert "tflite::MicroResourceVariables::Create(allocator, kNumResourceVariables);" in ops
    assert "tflite::MicroInterpreter interpreter(tflite::GetModel(kws), resolver," in ops


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@pytest.mark.parametrize("model, methods", [
    (KERAS_INT8, KERAS_INT8_METHODS),
    # a custom op TFLM registers by name: AddDetectionPostprocess
    (SSD, None),
])
def test_generated_files_compile_and_hold_the_model(tmp_path, model, methods):
    from edgelite.interpreter.loader.model import load_model
    data = model.read_bytes()
    name = xxd_name(model.name)
    out = export_c_array(data, tmp_path / "fw", name, 12_345, model.name)
    ops = load_model(data).subgraphs[0].operators
    if methods is None:  # the op set of the file, named here independently of the table
        methods = sorted({"AddDetectionPostprocess" if o.name == "CUSTOM" else
                          "Add" + "".join(w.capitalize() for w in o.name.split("_"))
                          .replace("2d", "2D") for o in ops})
    array, calls, capacity, constants = _compile_and_run(tmp_path, tmp_path / "fw", name)
    assert array == data
    assert calls == methods == list(out.methods) and capacity == len(methods)
    assert constants == (12_345, out.host_arena_bytes, 0) and out.host_arena_bytes > 12_345


# C / C++ identifiers outside comments and string literals
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def _identifiers(text: str) -> set[str]:
    code = re.sub(r"//[^\n]*|\"[^\"\n]*\"", " ", text)
    return set(_IDENT.findall(code))


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@pytest.mark.parametrize("file_name", ["3d__net_.tflite", "_Model.tflite", "main",
                                       "kTensorArenaSize.tflite", "kws_stream.tf_int8.tflite"])
def test_identifiers_are_never_reserved_and_compile(tmp_path, file_name):
    # derived from awkward file names: no identifier with __ or starting with _ (reserved
    # in C and C++: a _ then a capital, or any _ at global scope), and the files compile
    # with -Wall -Werror, a model with resource variables too
    name = default_name(file_name)
    export_c_array(KWS.read_bytes(), tmp_path / "fw", name, source=file_name)
    names = set()
    for f in (tmp_path / "fw").iterdir():
        names |= _identifiers(f.read_text())
    assert name in names and f"{name}_len" in names and f"{name}_RegisterOps" in names
    bad = sorted(n for n in names if "__" in n or n.startswith("_"))
    assert not bad, bad
    subprocess.run(_compiler(tmp_path, tmp_path / "fw", name, "-fsyntax-only"), check=True,
                   capture_output=True)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_array_file_compiles_alone_with_cc(tmp_path):
    export_c_array(KERAS_INT8.read_bytes(), tmp_path, "g_model", 1)
    subprocess.run(["cc", "-x", "c++", "-std=c++11", "-c", str(tmp_path / "g_model.cc"),
                    "-o", str(tmp_path / "g_model.o")], check=True, capture_output=True)


@pytest.mark.parametrize("name, why", [
    *[(n, "use letters, digits and _") for n in ("1model", "a-b", "a b", "", "x" * 201,
                                                 "model\n#define", "caf\u00e9")],
    *[(n, "C and C++ reserve identifiers with __") for n in ("a__b", "_model", "_Model",
                                                             "model_", "__x", "__FILE__",
                                                             "__asm__", "_Pragma")],
    *[(n, "C/C++ keyword") for n in ("int", "class", "typeof", "typeof_unqual", "char8_t",
                                     "co_await", "constinit", "alignas", "bool")],
    *[(n, "headers or the generated files declare it") for n in (
        "main", "tflite", "std", "uint8_t", "TfLiteModel", "kTfLiteOk", "kTensorArenaSize",
        "kTensorArenaSizeHost", "kNumResourceVariables", "EDGELITE_OPS_m")],
])
def test_names_that_cannot_name_a_c_array_are_refused(tmp_path, name, why):
    assert "int" in KEYWORDS and MAX_NAME_CHARS == 200
    with pytest.raises(EdgeliteError, match=r"cannot name a C array.*--name"):
        export_c_array(KERAS_INT8.read_bytes(), tmp_path / "fw", name)
    assert not (tmp_path / "fw").exists()
    with pytest.raises(EdgeliteError) as e:
        check_name(name, "--name")
    assert why in str(e.value)


def test_ops_tflm_cannot_register_refuse_the_export_all_listed(tmp_path):
    with pytest.raises(EdgeliteError) as e:
        export_c_array((MODELS / "op_zoo_math.tf.tflite").read_bytes(), tmp_path / "fw", "m")
    lines = str(e.value).splitlines()
    assert lines[0] == "cannot export: TensorFlow Lite Micro cannot run 2 op(s):"
    assert lines[1:] == ["POW (subgraph 0 op 3): TFLM's op resolver has no entry for it",
                         "REDUCE_PROD (subgraph 0 op 7): TFLM's op resolver has no entry for it"]
    assert not (tmp_path / "fw").exists()


@pytest.mark.parametrize("file_name, kind", [
    ("tf1_cnn.tf_uint8.tflite", "no uint8 kernel"),
    ("sparse_mlp16.tf_int8.tflite", "reads sparse tensor"),
    ("hybrid_tconv.tf_dr.tflite", "(hybrid)"),
])
def test_ops_tflm_cannot_run_refuse_the_export_unless_forced(tmp_path, file_name, kind):
    data = (MODELS / file_name).read_bytes()
    with pytest.raises(EdgeliteError) as e:
        export_c_array(data, tmp_path / "fw", "m")
    lines = str(e.value).splitlines()
    assert lines[0].startswith("cannot export: TensorFlow Lite Micro cannot run ")
    assert all(kind in line for line in lines[1:-1]) and len(lines) > 2
    assert lines[-1] == ("convert the model for TFLite Micro (edgelite convert --target "
                         "micro), or export it anyway with --force")
    assert not (tmp_path / "fw").exists()
    out = export_c_array(data, tmp_path / "fw", "m", force=True)
    assert list(out.warnings) == lines[1:-1] and len(out.paths) == 3


def test_custom_op_names_are_escaped_in_the_refusal(tmp_path):
    with pytest.raises(EdgeliteError, match=r"CUSTOM 'Asinh' .*\n.*CUSTOM 'Sinh'"):
        export_c_array((MODELS / "custom_asinh.tf.tflite").read_bytes(), tmp_path, "m")


@pytest.mark.parametrize("arena", [0, -5, 2**31])
def test_arena_size_out_of_range(tmp_path, arena):
    with pytest.raises(EdgeliteError, match=f"arena size {arena} is out of range"):
        export_c_array(KERAS_INT8.read_bytes(), tmp_path, "m", arena)
