"""A name a hostile file can hold, and the check that a message or table shows it inert.

Messages and tables must escape it (no raw control character: nothing clears or recolours
the terminal, no line can pass for a new ``error:`` line) and cut it (every line short),
while still showing its head so the user can tell which node or tensor is meant."""

from __future__ import annotations

BINARY = bytes(range(256)).decode("latin-1") * 40  # 10 KB: every byte value, NUL and ESC too
HOSTILE = "\x1b[2Jconv\nerror: forged" + BINARY
HEAD = "\\x1b[2Jconv\\nerror: forged"  # the name's head, escaped
MAX_LINE = 300


def assert_inert(text: str, head: str = HEAD, max_line: int = MAX_LINE) -> list[str]:
    """The lines of ``text``, after checking them: printable, none starting with "error:",
    each under ``max_line`` characters, and the escaped head of the name among them."""
    assert all(c == "\n" or c.isprintable() for c in text), repr(text[:300])
    lines = text.split("\n")
    assert not any(line.startswith("error:") for line in lines), text[:300]
    assert max(len(line) for line in lines) < max_line, [len(line) for line in lines]
    assert head in text, text[:300]
    return lines
