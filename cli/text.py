"""Text for the terminal: nothing from a file or an exception can drive it.

Names read from files are formatted with ``interpreter.names.shown`` / ``quoted`` where
messages and tables are built; these helpers are the last line: ``terminal_text`` escapes
whatever reaches an error line (an OSError on a path holding ESC, a message from a library),
``fit`` cuts a name to a table column.
"""

from __future__ import annotations

from edgelite.names import shown

MAX_LINE_CHARS = 2000  # one error line; longer ones keep their head and tail


def terminal_text(text: str, keep_lines: bool = False) -> str:
    """``text`` with every non-printable character escaped (``\\x1b``, ``\\n``) and cut.

    ``keep_lines`` keeps the line breaks of a multi-line message edgelite wrote itself (a
    support table), indenting every line after the first, so no line can pass for a new
    ``error:`` line; everything else on those lines is escaped too."""
    if not keep_lines:
        return shown(text, MAX_LINE_CHARS)
    lines = [shown(line, MAX_LINE_CHARS) for line in text.split("\n")]
    return "\n  ".join(lines)


def terminal_lines(text: str) -> str:
    """A multi-line text (a table) with each line escaped and cut like an error line."""
    return "\n".join(shown(line, MAX_LINE_CHARS) for line in text.split("\n"))


def fit(name, width: int) -> str:
    """A name escaped and cut to at most ``width`` characters, for a table column: its head
    and a short tail are kept (suffixes such as ``/Relu`` or ``:1`` tell names apart)."""
    return shown(name, width)
