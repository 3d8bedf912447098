"""A .tflite file as C++ sources for TensorFlow Lite Micro firmware.

``export_c_array(model_bytes, folder, name)`` writes three files (atomically, each):

* ``NAME.h``: a header guard and ``extern const unsigned char NAME[];`` /
  ``extern const unsigned int NAME_len;`` -- the names ``xxd -i`` gives, so code written
  against xxd's output keeps working;
* ``NAME.cc``: the model bytes as ``alignas(16) const unsigned char NAME[]`` (TFLM reads the
  flatbuffer in place: its buffers must stay 16-byte aligned, as in the file) and
  ``const unsigned int NAME_len``; it includes NAME.h, which gives both external linkage;
* ``NAME_ops.h``: ``NAME_OpResolver`` = ``tflite::MicroMutableOpResolver<N>`` (N = the
  number of distinct ops), ``NAME_RegisterOps(resolver)`` making exactly the ``Add...()``
  calls the model needs (micro_ops.RESOLVER_METHOD / CUSTOM_METHOD: TFLM's names),
  ``constexpr int kTensorArenaSize`` / ``kTensorArenaSizeHost`` and
  ``kNumResourceVariables``.

The arena sizes are what TFLite Micro needs for the model (``edgelite.interpreter.
micro_arena``: TFLM's planned activations plus its per-op data, scratch buffers and
bookkeeping) on a 32-bit target (``kTensorArenaSize``, or the caller's ``arena_bytes``) and
on a 64-bit host build (``kTensorArenaSizeHost``: the same firmware code built on a PC, as
in a PC-side unit test or the tflite-micro Python package; TFLM's structs hold pointers and
size_t, twice as wide there, so the 32-bit figure is too small). A model with resource
variables (VAR_HANDLE) needs a ``tflite::MicroResourceVariables`` with room for
``kNumResourceVariables`` of them, else its VAR_HANDLE fails to prepare; the header says so
and shows the calls.

NAME comes from the caller (``--name``) or from the file name (``default_name``: what
``xxd -i`` derives, every byte that is not an ASCII letter or digit becoming ``_``, with
runs of ``_`` made one, leading and trailing ``_`` dropped, ``model_`` before a leading
digit or a reserved word). Every identifier the files declare is NAME
followed by ``_len``, ``_OpResolver``, ``_RegisterOps``, ``_H_`` guards or a fixed name, so
``check_name`` keeps them clear of what C and C++ reserve (``__`` anywhere, ``_`` then a
capital first; a global name starting with ``_``): a NAME with ``__``, or starting or
ending with ``_``, a keyword, or a name TFLite Micro's headers or these files declare, is
refused. Ops TFLM cannot register refuse the export, all listed in one message; ops it
registers but cannot run (uint8, hybrid, sparse weights, ... micro_ops.micro_problems)
refuse it too unless ``force``, then they are warnings.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .. import __version__
from edgelite.errors import EdgeliteError
from ..interpreter.loader.model import load_model
from edgelite.names import quoted
from ..interpreter.micro.arena import micro_arena, resource_variable_count
from .files import write_atomic
from .micro_ops import micro_problems, problems_text, resolver_methods

ALIGNMENT = 16          # TFLM reads buffers in place; pack_model aligns them to 16 bytes
BYTES_PER_LINE = 12     # as xxd -i
MAX_NAME_CHARS = 200
MAX_ARENA_BYTES = 2**31 - 1  # kTensorArenaSize is an int
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# C23 and C++20 keywords and alternative tokens: a name that is one cannot be declared.
KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue
co_await co_return co_yield decltype default delete do double dynamic_cast else enum explicit
export extern false float for friend goto if inline int long mutable namespace new noexcept
not not_eq nullptr operator or or_eq private protected public register reinterpret_cast
requires restrict return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename typeof typeof_unqual union
unsigned using
virtual void volatile wchar_t while xor xor_eq _Alignas _Alignof _Atomic _Bool _Complex
_Generic _Imaginary _Noreturn _Static_assert _Thread_local _BitInt _Decimal32 _Decimal64
_Decimal128
""".split())
# Names the generated files, TFLite Micro's headers (tflite::, TfLite..., kTfLite...) or the
# C / C++ standard headers a firmware includes already declare: an array of that name
# would clash with them.
HEADER_CONSTANTS = ("kTensorArenaSize", "kTensorArenaSizeHost", "kNumResourceVariables")
TAKEN = frozenset("""
main std tflite NULL EOF errno assert offsetof stdin stdout stderr size_t ptrdiff_t
nullptr_t max_align_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
intptr_t uintptr_t intmax_t uintmax_t
""".split()) | frozenset(HEADER_CONSTANTS)
TAKEN_PREFIXES = ("TfLite", "kTfLite", "TFLITE_", "EDGELITE_")


@dataclass(frozen=True)
class FirmwareFiles:
    """What export_c_array wrote."""

    name: str
    paths: tuple[str, ...]     # NAME.cc, NAME.h, NAME_ops.h
    methods: tuple[str, ...]   # the Add...() calls, in the order written
    arena_bytes: int           # kTensorArenaSize: a 32-bit target
    arena_given: bool  # the caller's size, not micro_arena()'s
    warnings: tuple[str, ...] = ()  # ops TFLM registers but cannot run (export forced)
    host_arena_bytes: int = 0  # kTensorArenaSizeHost: a 64-bit host build
    resource_variables: int = 0  # kNumResourceVariables


def xxd_name(file_name: str) -> str:
    """The array name ``xxd -i FILE`` gives for the file's base name."""
    base = os.path.basename(os.fsdecode(file_name)).encode("utf-8", "surrogateescape")
    name = "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else "_" for b in base)
    return "__" + name if name[:1].isdigit() else name


def default_name(file_name: str) -> str:
    """The array name for a model file: xxd's, made one that C and C++ leave to the user
    (single ``_`` between words, none first or last, a letter first, no reserved word)."""
    name = re.sub(r"_+", "_", xxd_name(file_name)).strip("_") or "model"
    return "model_" + name if name[0].isdigit() or _reserved(name) else name


def _reserved(name: str) -> bool:
    return name in KEYWORDS or name in TAKEN or name.startswith(TAKEN_PREFIXES)


def check_name(name: str, origin: str) -> str:
    """``name`` if it can name the array (and prefix the other identifiers) in C and C++,
    else one EdgeliteError line saying why."""
    if not _IDENTIFIER.match(name) or len(name) > MAX_NAME_CHARS:
        why = (f"use letters, digits and _ (not first a digit), at most {MAX_NAME_CHARS} "
               "characters")
    elif "__" in name or name.startswith("_") or name.endswith("_"):
        why = ("C and C++ reserve identifiers with __ or a leading _ (and NAME_len, "
               "NAME_OpResolver ... must not get one): no __, no _ first or last")
    elif name in KEYWORDS:
        why = "it is a C/C++ keyword"
    elif _reserved(name):
        why = "TFLite Micro's headers, the C/C++ standard headers or the generated files " \
              "declare it"
    else:
        return name
    raise EdgeliteError(f"{origin} {quoted(name)} cannot name a C array: {why}; give one "
                        "with --name")


def _byte_lines(data: bytes) -> str:
    """xxd -i's layout: 12 bytes a line, ``0x1c, 0x00, ...``."""
    return ",\n".join("  0x" + data[i:i + BYTES_PER_LINE].hex(" ").replace(" ", ", 0x")
                      for i in range(0, len(data), BYTES_PER_LINE))


def _banner(source: str) -> str:
    return (f"// Generated by edgelite {__version__} from {source}; do not edit.\n"
            "// Regenerate with: edgelite export MODEL.tflite --c-array DIR\n")


def array_sources(data: bytes, name: str, source: str) -> tuple[str, str]:
    """(NAME.h, NAME.cc) texts."""
    guard = f"EDGELITE_ARRAY_{name}_H_"  # the name verbatim: distinct names, distinct guards
    header = (f"{_banner(source)}#ifndef {guard}\n#define {guard}\n\n"
              f"extern const unsigned char {name}[];\n"
              f"extern const unsigned int {name}_len;\n\n#endif  // {guard}\n")
    body = (f"{_banner(source)}#include \"{name}.h\"\n\n"
            f"// {ALIGNMENT}-byte aligned: TFLite Micro reads the model in place.\n"
            f"alignas({ALIGNMENT}) const unsigned char {name}[] = {{\n{_byte_lines(data)}\n}};\n"
            f"const unsigned int {name}_len = {len(data)};\n")
    return header, body


@dataclass(frozen=True)
class ArenaSizes:
    """The two arena constants of NAME_ops.h."""

    device: int   # kTensorArenaSize: a 32-bit target (micro_arena "32bit", or the caller's)
    host: int     # kTensorArenaSizeHost: a 64-bit host build (micro_arena "host")
    given: bool   # device is the caller's size; host adds edgelite's 64-bit difference
    sized: bool = True  # edgelite could size the model (False: host = the given size)


def arena_sizes(data: bytes, given: int | None = None) -> ArenaSizes:
    """TFLM's arena for the model on a 32-bit target and on a 64-bit host, or the caller's
    size ``given`` for the target and that plus what a 64-bit build adds for the host."""
    try:
        target, host = micro_arena(data, "32bit"), micro_arena(data, "host")
    except EdgeliteError as e:
        if given is None:
            raise EdgeliteError(f"edgelite cannot size this model's TFLite Micro arena "
                                f"({str(e).splitlines()[0]}); give the size with "
                                "--arena-size") from None
        return ArenaSizes(given, given, True, sized=False)
    if given is None:
        return ArenaSizes(target, host, False)
    return ArenaSizes(given, min(MAX_ARENA_BYTES, given + max(0, host - target)), True)


def _arena_text(arena: ArenaSizes) -> str:
    if not arena.given:
        what = ("// The tensor arena TFLite Micro needs for this model, in bytes\n"
                "// (edgelite.interpreter.micro_arena: planned tensors, per-op data, scratch "
                "buffers,\n// TFLM's own objects).\n")
    elif arena.sized:
        what = ("// The tensor arena for this model, in bytes: the size given to edgelite "
                "export,\n// and for a 64-bit build that plus what TFLite Micro's wider "
                "structs take there.\n")
    else:
        what = ("// The tensor arena for this model, in bytes (given to edgelite export; "
                "edgelite cannot\n// size this model, so a 64-bit build may need more than "
                "kTensorArenaSizeHost).\n")
    return (f"{what}// kTensorArenaSize: on the device (a 32-bit microcontroller).\n"
            "// kTensorArenaSizeHost: the same code built for a 64-bit host (a PC-side test, "
            "TFLM's\n// x86_64 build): pointers and size_t are twice as wide there, and "
            "kTensorArenaSize\n// is too small.\n"
            f"constexpr int kTensorArenaSize = {arena.device};\n"
            f"constexpr int kTensorArenaSizeHost = {arena.host};\n")


def _variables_text(name: str, count: int) -> str:
    """kNumResourceVariables and, for a model with some, how TFLM must be set up."""
    if not count:
        return ("// Resource variables (VAR_HANDLE): none; the MicroInterpreter constructor "
                "taking\n// tensor_arena and kTensorArenaSize will do.\n"
                "constexpr int kNumResourceVariables = 0;\n")
    return (f"// Resource variables: this model keeps state in {count} (VAR_HANDLE / "
            "READ_VARIABLE /\n// ASSIGN_VARIABLE). TFLite Micro needs a "
            "MicroResourceVariables with room for them,\n// created in the arena, or "
            "VAR_HANDLE fails to prepare (\"VAR_HANDLE requires resource\n// variables\"). "
            "kTensorArenaSize includes them:\n"
            "//   tflite::MicroAllocator* allocator =\n"
            "//       tflite::MicroAllocator::Create(tensor_arena, kTensorArenaSize);\n"
            "//   tflite::MicroResourceVariables* variables =\n"
            "//       tflite::MicroResourceVariables::Create(allocator, "
            "kNumResourceVariables);\n"
            f"//   tflite::MicroInterpreter interpreter(tflite::GetModel({name}), resolver,\n"
            "//                                        allocator, variables);\n"
            f"constexpr int kNumResourceVariables = {count};\n")


def ops_source(name: str, methods: list[str], arena: ArenaSizes, variables: int,
               source: str) -> str:
    """NAME_ops.h text: the resolver type, the registration function, the arena sizes and
    the resource variables."""
    guard = f"EDGELITE_OPS_{name}_H_"
    calls = "".join(f"  if (resolver.{m}() != kTfLiteOk) return kTfLiteError;\n"
                    for m in methods)
    return (f"{_banner(source)}#ifndef {guard}\n#define {guard}\n\n"
            "#include \"tensorflow/lite/micro/micro_mutable_op_resolver.h\"\n\n"
            f"{_arena_text(arena)}\n{_variables_text(name, variables)}\n"
            f"// One registration per distinct op of the model ({len(methods)}).\n"
            f"using {name}_OpResolver = tflite::MicroMutableOpResolver<{len(methods)}>;\n\n"
            f"inline TfLiteStatus {name}_RegisterOps({name}_OpResolver& resolver) {{\n"
            f"{calls}  return kTfLiteOk;\n}}\n\n#endif  // {guard}\n")


def _check_ops(model, force: bool) -> tuple[str, ...]:
    """Refuse ops TFLM cannot register (always: there is no Add...() to write) and, unless
    ``force``, ops it registers but cannot run (types, sparse weights, shapes); the latter
    lines when forced."""
    problems = micro_problems(model)
    unknown = [p for p in problems if not p.registrable]
    if unknown:
        raise EdgeliteError(problems_text(unknown, "cannot export"))
    if problems and not force:
        raise EdgeliteError(problems_text(problems, "cannot export") + "\nconvert the model "
                            "for TFLite Micro (edgelite convert --target micro), or export "
                            "it anyway with --force")
    return tuple(p.line() for p in problems)


def export_c_array(data: bytes, folder: str | os.PathLike, name: str,
                   arena_bytes: int | None = None, source: str = "model.tflite",
                   force: bool = False) -> FirmwareFiles:
    """Write NAME.h, NAME.cc and NAME_ops.h for the model ``data`` into ``folder``
    (created if missing). ``name`` must be a C identifier (``check_name``); ``source`` names
    the model in the files' banner (escaped); ``force`` writes a model TFLM registers but
    cannot run (FirmwareFiles.warnings lists why)."""
    check_name(name, "name")
    model = load_model(data)
    warnings = _check_ops(model, force)
    if arena_bytes is not None and not 0 < arena_bytes <= MAX_ARENA_BYTES:
        raise EdgeliteError(f"arena size {arena_bytes} is out of range: give 1 to "
                            f"{MAX_ARENA_BYTES} bytes")
    arena = arena_sizes(data, arena_bytes)
    variables = resource_variable_count(model)
    methods = resolver_methods(model)
    # the banner names the file by its base name, in characters that cannot end or splice
    # the // comment (no newline, no trailing backslash)
    shown_source = re.sub(r"[^A-Za-z0-9._-]", "?", os.path.basename(source))[:MAX_NAME_CHARS]
    header, body = array_sources(data, name, shown_source)
    texts = {f"{name}.cc": body, f"{name}.h": header,
             f"{name}_ops.h": ops_source(name, methods, arena, variables, shown_source)}
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for file_name, text in texts.items():
        path = os.path.join(folder, file_name)
        write_atomic(path, text.encode("ascii"))
        paths.append(path)
    return FirmwareFiles(name, tuple(paths), tuple(methods), arena.device, arena.given,
                         warnings, arena.host, variables)


__all__ = ["FirmwareFiles", "ArenaSizes", "arena_sizes", "export_c_array", "xxd_name",
           "default_name", "check_name"]
