"""The documentation stays true to the tree: the README is short, every relative link in
README.md and docs/*.md reaches a file of the repository (and a heading, where it names
one), and every file docs/adding-an-op.md names in backticks exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
MAX_README_LINES = 160

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# a backticked word that names a file: a path with a folder, or a file name with a suffix
FILE_NAME = re.compile(r"^[\w.\-]+(/[\w.\-]*)+$|^[\w\-]+\.(py|md|fbs|proto|toml|json)$")


def prose_lines(text: str):
    """The lines outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(page.read_text()):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    out = []
    for line in prose_lines(page.read_text()):
        out += LINK.findall(INLINE_CODE.sub("", line))
    return out


def test_slug_follows_github():
    assert slug("Does TFLM run it: `convert --target micro`") == "does-tflm-run-it-convert---target-micro"
    assert slug("Loops, branches and state") == "loops-branches-and-state"
    assert slug("Sequence models (LSTMs)") == "sequence-models-lstms"


def test_link_and_heading_parsing(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# A\n\n[x](b.md#c) `[not](a-link.md)`\n```\n# not a heading\n[no](x.md)\n```\n"
                    "## A\n")
    assert links(page) == ["b.md#c"]
    assert anchors(page) == {"a", "a-1"}


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES})"


def test_there_is_documentation_to_check():
    names = {p.name for p in DOCS}
    assert {"architecture.md", "adding-an-op.md", "cli.md", "converting.md", "quantization.md",
            "interpreter.md", "micro.md", "results.md"} <= names
    assert all(links(page) for page in (README, ROOT / "docs" / "architecture.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.\-]*:", target):       # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if ROOT not in file.parents and file != ROOT:
            broken.append(f"{target}: outside the repository")
        elif not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading '#{anchor}' in {file.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_names_no_design_document_outside_the_repository():
    assert "../" not in "".join(t for t in links(README) if not t.startswith("http"))
    assert "shared/DESIGN.md" not in README.read_text()


def test_files_named_in_adding_an_op_exist():
    page = ROOT / "docs" / "adding-an-op.md"
    named = [word for line in page.read_text().splitlines()
             for word in re.findall(r"`([^`]+)`", line)
             if FILE_NAME.match(word) and "<" not in word]
    assert len(named) >= 10, named            # the guide names its files in backticks
    missing = [word for word in named if not (ROOT / word).exists()]
    assert not missing, f"docs/adding-an-op.md names files that do not exist: {missing}"
