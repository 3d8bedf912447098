"""Names read from files, made safe to print.

Tensor, node, op and signature names come from untrusted files. Printed verbatim, a name
can clear or recolour the terminal (ESC sequences), forge an extra "error:" line (a
newline), reorder the text around it (bidi controls) or flood a message with kilobytes of
binary. Every message and table that shows such a name passes it through ``shown`` (bare,
for tables) or ``quoted`` (in quotes, for messages):

* every character that is not printable (``str.isprintable``: control characters, line
  and paragraph separators, bidi and other format characters, unassigned code points) is
  written as a Python escape (``\\x1b``, ``\\n``, ``\\u202e``), so the text stays inert
  and still says what the name holds;
* the escaped text is cut to ``MAX_NAME_CHARS``, keeping its head and tail (suffixes such
  as ``:1`` or ``/Relu`` tell names apart) around "...".

Both are pure functions of the name: the names themselves are never changed, so lookups
by name (signatures, ``--inputs``, ``compare``) keep working on the exact strings.
"""

from __future__ import annotations

MAX_NAME_CHARS = 120
_TAIL_CHARS = 30


def _escape(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def shown(name, limit: int = MAX_NAME_CHARS) -> str:
    """``name`` (str, bytes or anything with a str()) escaped and cut for display."""
    if isinstance(name, (bytes, bytearray, memoryview)):
        name = bytes(name).decode("utf-8", errors="backslashreplace")
    elif not isinstance(name, str):
        name = str(name)
    if len(name) > 4 * limit:  # escaping can only lengthen: cut first, bounded work
        name = name[:2 * limit] + name[-_TAIL_CHARS:]
        cut = True
    else:
        cut = False
    text = _escape(name)
    if len(text) <= limit and not cut:
        return text
    if limit < 8:
        return text[:limit]
    tail = min(_TAIL_CHARS, limit // 3)
    head = limit - tail - 3
    return f"{text[:head]}...{text[-tail:]}"


def quoted(name, limit: int = MAX_NAME_CHARS) -> str:
    """``shown(name)`` in single quotes, for messages: 'conv1/Relu'."""
    return f"'{shown(name, limit)}'"
