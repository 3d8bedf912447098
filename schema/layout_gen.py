"""Write ``schema/layout.py``: the small table of tflite.fbs facts the interpreter reads a
model with, so that reading never imports the 690 KB flatc bindings (generated_tflite,
loaded only when a model is written).

    python -m edgelite.schema.layout_gen            # rewrite schema/layout.py
    python -m edgelite.schema.layout_gen --check    # exit 1 if layout.py is stale

layout.py holds every enum (name -> value), the two options unions (value -> table
name) and, for each table a union names, its fields in slot order:
``(key, slot, kind, default)`` -- ``key`` as ``ops.options_to_dict`` names it (the
object API's camelCase attribute, back in snake_case), ``kind`` a struct code
("b", "i", "f", "?", ...), "str" or "[" + a code for a vector. Deprecated fields keep
their slot but are left out, as flatc leaves them out of the object API.
tests/schema/test_layout.py checks the file is current and that reading options with it
gives what the object API gives.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parent
FBS = SCHEMA_DIR / "tflite.fbs"
OUTPUT = SCHEMA_DIR / "layout.py"

# fbs scalar type -> struct code
SCALAR_CODES = {
    "bool": "?", "byte": "b", "ubyte": "B", "short": "h", "ushort": "H", "int": "i",
    "uint": "I", "long": "q", "ulong": "Q", "float": "f", "double": "d",
    "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
    "int64": "q", "uint64": "Q", "float32": "f", "float64": "d",
}

_BLOCK = re.compile(r"\b(enum|union|table|struct)\s+(\w+)\s*(?::\s*(\w+))?\s*(\([^)]*\))?\s*"
                    r"\{([^}]*)\}", re.S)
_FIELD = re.compile(r"^(\w+)\s*:\s*(\[?\s*\w+\s*\]?)\s*(?:=\s*([^(;]+?))?\s*(\(.*\))?$", re.S)


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _enum_members(body: str, first: int = 0) -> dict[str, int]:
    """name -> value of an enum's (or a union's: ``first`` 1) comma-separated members."""
    members, value = {}, first - 1
    for item in body.split(","):
        item = re.sub(r"\(.*?\)", "", item).strip()
        if not item:
            continue
        name, _, given = item.partition("=")
        value = int(given.strip(), 0) if given.strip() else value + 1
        members[name.strip()] = value
    return members


def _union_members(body: str) -> dict[int, str]:
    """value -> table of a union's members; 0 is NONE."""
    return {0: "NONE", **{v: name for name, v in _enum_members(body, 1).items()}}


def _key(field: str) -> str:
    """The option key ops.options_to_dict gives: flatc's camelCase attribute name (an
    underscore dropped, the next character upper-cased) back in snake_case."""
    camel = re.sub(r"_(.)", lambda m: m.group(1).upper(), field)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def _default(text: str | None, kind: str, enum: dict[str, int] | None):
    if kind == "str" or kind.startswith("["):
        return None
    if text is None:
        return False if kind == "?" else 0.0 if kind in "fd" else 0
    text = text.strip()
    if kind == "?":
        return text == "true"
    if enum is not None and text in enum:
        return enum[text]
    return float(text) if kind in "fd" else int(text, 0)


def parse(text: str) -> tuple[dict, dict, dict]:
    """(enums, unions, tables) of a .fbs text."""
    text = _strip_comments(text)
    enums: dict[str, tuple[str, dict[str, int]]] = {}
    unions: dict[str, dict[int, str]] = {}
    raw_tables: dict[str, str] = {}
    for kind, name, base, _attrs, body in _BLOCK.findall(text):
        if kind == "enum":
            enums[name] = (base, _enum_members(body))
        elif kind == "union":
            unions[name] = _union_members(body)
        elif kind == "table":
            raw_tables[name] = body
    tables = {}
    for name, body in raw_tables.items():
        fields, slot = [], 0
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            m = _FIELD.match(decl)
            if m is None:
                raise ValueError(f"table {name}: cannot read field {decl!r}")
            fname, ftype, default, attrs = m.groups()
            ftype = ftype.replace(" ", "")
            deprecated = bool(attrs and "deprecated" in attrs)
            if ftype in unions:  # a union takes two slots: its type, then its value
                slot += 2
                continue
            base, enum = ftype.strip("[]"), None
            if base in enums:
                enum = enums[base][1]
                base = enums[base][0]
            if base == "string":
                code = "str"
            elif base in SCALAR_CODES:
                code = SCALAR_CODES[base]
            else:
                code = None  # a table or struct: not an options field
            if ftype.startswith("[") and code is not None:
                code = "[" + code
            if not deprecated and code is not None:
                fields.append((_key(fname), slot, code, _default(default, code, enum)))
            elif not deprecated:
                fields.append((_key(fname), slot, "table", None))
            slot += 1
        tables[name] = tuple(fields)
    return ({n: members for n, (_, members) in enums.items()}, unions, tables)


def render(text: str) -> str:
    enums, unions, tables = parse(text)
    options = {"BuiltinOptions": unions["BuiltinOptions"],
               "BuiltinOptions2": unions["BuiltinOptions2"]}
    wanted = sorted({t for u in options.values() for v, t in u.items() if v})
    lines = ['"""Generated from tflite.fbs by layout_gen.py -- do not edit (see there)."""',
             "", "ENUMS = {"]
    for name in sorted(enums):
        lines.append(f"    {name!r}: {enums[name]!r},")
    lines += ["}", "", "UNIONS = {"]
    for name, members in options.items():
        lines.append(f"    {name!r}: {members!r},")
    lines += ["}", "", "# table -> ((key, slot, kind, default), ...)", "TABLES = {"]
    for name in wanted:
        lines.append(f"    {name!r}: {tables[name]!r},")
    lines += ["}", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if layout.py is stale")
    args = parser.parse_args(argv)
    text = render(FBS.read_text())
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale: run python -m edgelite.schema.layout_gen", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
