"""converter/firmware.py: the model as C++ sources for TFLite Micro firmware.

Where a C++ compiler is present the generated files are compiled and linked with a small
program against a stub ``micro_mutable_op_resolver.h`` written here (the stub records each
``Add...()`` call): the program prints the array's bytes and the calls, so the test checks
what the compiler made of the files, not just their text.
"""

import os
import re
import shutil
import subprocess

import pytest

from edgelite.converter.firmware import (KEYWORDS, MAX_NAME_CHARS, check_name,
                                         export_c_array, xxd_name)
from edgelite.converter.micro_ops import CUSTOM_METHOD, RESOLVER_METHOD
from edgelite.interpreter.errors import EdgeliteError
from tests.conftest import MODELS

CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
KERAS_INT8 = MODELS / "keras_cnn.tf_int8.tflite"
# The op set of keras_cnn.tf_int8.tflite (edgelite inspect), as TFLM's method names.
KERAS_INT8_METHODS = ["AddAveragePool2D", "AddConv2D", "AddDepthwiseConv2D", "AddDequantize",
                      "AddFullyConnected", "AddMean", "AddQuantize", "AddSoftmax"]
SSD = MODELS / "custom_ssd_postprocess.tf.tflite"


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


def _compile_and_run(tmp_path, folder, name) -> tuple[bytes, list[str], int, int]:
    """Build the exported files with a main printing the array and the resolver's calls;
    (array bytes, calls, capacity N, kTensorArenaSize)."""
    _stub_resolver(tmp_path / "stub")
    main = tmp_path / "main.cc"
    main.write_text(
        f'#include <cstdio>\n#include "{name}.h"\n#include "{name}_ops.h"\n'
        "int main() {\n"
        f"  for (unsigned int i = 0; i < {name}_len; ++i) std::printf(\"%02x\", {name}[i]);\n"
        f"  std::printf(\"\\n%u %d %d\\n\", {name}_OpResolver::kCapacity, kTensorArenaSize,\n"
        f"              (int)(reinterpret_cast<unsigned long>({name}) % 16));\n"
        f"  {name}_OpResolver resolver;\n"
        f"  if ({name}_RegisterOps(resolver) != kTfLiteOk) return 1;\n"
        "  for (const auto& c : resolver.calls) std::printf(\"%s\\n\", c.c_str());\n"
        "  return 0;\n}\n")
    exe = tmp_path / "firmware_test"
    subprocess.run([CXX, "-std=c++17", "-Wall", "-Werror", "-I", str(folder), "-I",
                    str(tmp_path / "stub"), str(main), str(folder / f"{name}.cc"), "-o",
                    str(exe)], check=True, capture_output=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    capacity, arena, misalignment = (int(v) for v in lines[1].split())
    assert misalignment == 0
    return bytes.fromhex(lines[0]), lines[2:], capacity, arena


def _array_text_bytes(text: str, name: str) -> bytes:
    body = re.search(rf"alignas\(16\) const unsigned char {name}\[\] = \{{(.*?)\}};", text,
                     re.S).group(1)
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", body))


@pytest.mark.parametrize("file_name, expected", [
    ("models/keras_cnn.tf_int8.tflite", "keras_cnn_tf_int8_tflite"),
    ("3d-net.tflite", "__3d_net_tflite"),
    ("mod\u00e8le v2.tflite", "mod__le_v2_tflite"),   # e-grave: two UTF-8 bytes, two _
])
def test_names_are_xxd_names(tmp_path, file_name, expected):
    assert xxd_name(file_name) == expected
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
    assert "constexpr int kTensorArenaSize = 40000;" in ops and "32-bit target" not in ops


def test_arena_defaults_to_what_tflite_micro_needs_on_a_32bit_target(tmp_path):
    from edgelite.interpreter import Interpreter, micro_arena
    interp = Interpreter(model_path=str(KERAS_INT8))
    interp.allocate_tensors()
    out = export_c_array(KERAS_INT8.read_bytes(), tmp_path, "m")
    ops = (tmp_path / "m_ops.h").read_text()
    expected = micro_arena(KERAS_INT8.read_bytes(), "32bit")
    assert not out.arena_given and out.arena_bytes == expected > interp.arena_size
    assert f"constexpr int kTensorArenaSize = {expected};" in ops
    assert "on a 32-bit target" in ops


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@pytest.mark.parametrize("model, methods", [
    (KERAS_INT8, KERAS_INT8_METHODS),
    # a custom op TFLM registers by name: AddDetectionPostprocess
    (SSD, None),
])
def test_generated_files_compile_and_hold_the_model(tmp_path, model, methods):
    from edgelite.interpreter.model import load_model
    data = model.read_bytes()
    name = xxd_name(model.name)
    out = export_c_array(data, tmp_path / "fw", name, 12_345, model.name)
    ops = load_model(data).subgraphs[0].operators
    if methods is None:  # the op set of the file, named here independently of the table
        methods = sorted({"AddDetectionPostprocess" if o.name == "CUSTOM" else
                          "Add" + "".join(w.capitalize() for w in o.name.split("_"))
                          .replace("2d", "2D") for o in ops})
    array, calls, capacity, arena = _compile_and_run(tmp_path, tmp_path / "fw", name)
    assert array == data
    assert calls == methods == list(out.methods) and capacity == len(methods)
    assert arena == 12_345


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_array_file_compiles_alone_with_cc(tmp_path):
    export_c_array(KERAS_INT8.read_bytes(), tmp_path, "g_model", 1)
    subprocess.run(["cc", "-x", "c++", "-std=c++11", "-c", str(tmp_path / "g_model.cc"),
                    "-o", str(tmp_path / "g_model.o")], check=True, capture_output=True)


@pytest.mark.parametrize("name", ["int", "class", "1model", "a-b", "a b", "", "x" * 201,
                                  "model\n#define", "caf\u00e9"])
def test_names_that_cannot_name_a_c_array_are_refused(tmp_path, name):
    assert "int" in KEYWORDS and MAX_NAME_CHARS == 200
    with pytest.raises(EdgeliteError, match=r"cannot name a C array.*--name"):
        export_c_array(KERAS_INT8.read_bytes(), tmp_path / "fw", name)
    assert not (tmp_path / "fw").exists()
    with pytest.raises(EdgeliteError, match="cannot name a C array"):
        check_name(name, "--name")


def test_ops_tflm_cannot_register_refuse_the_export_all_listed(tmp_path):
    with pytest.raises(EdgeliteError) as e:
        export_c_array((MODELS / "op_zoo_math.tf.tflite").read_bytes(), tmp_path / "fw", "m")
    lines = str(e.value).splitlines()
    assert lines[0] == "cannot export: TensorFlow Lite Micro cannot run 2 op(s):"
    assert lines[1:] == ["POW (subgraph 0 op 3): TFLM's op resolver has no entry for it",
                         "REDUCE_PROD (subgraph 0 op 7): TFLM's op resolver has no entry for it"]
    assert not (tmp_path / "fw").exists()


def test_custom_op_names_are_escaped_in_the_refusal(tmp_path):
    with pytest.raises(EdgeliteError, match=r"CUSTOM 'Asinh' .*\n.*CUSTOM 'Sinh'"):
        export_c_array((MODELS / "custom_asinh.tf.tflite").read_bytes(), tmp_path, "m")


@pytest.mark.parametrize("arena", [0, -5, 2**31])
def test_arena_size_out_of_range(tmp_path, arena):
    with pytest.raises(EdgeliteError, match=f"arena size {arena} is out of range"):
        export_c_array(KERAS_INT8.read_bytes(), tmp_path, "m", arena)
