"""The documentation holds together: the README is a front door of at most 15 KB that points only
inside the repository, every relative link in README.md and docs/**/*.md reaches a file of the
repository (and, into a Markdown file, a heading it has), and docs/modules.md has exactly one row
per module of the packages. Docs rot silently; these checks are cheap."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").rglob("*.md")])
README_LIMIT = 15 * 1024
PACKAGES = ("catalog", "constraints", "sandbox", "executors", "serving", "verifier", "synth")

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def prose(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks (links inside code are examples, not links)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def links(path: Path) -> list[str]:
    return [target for line in prose(path) for target in LINK.findall(re.sub(r"`[^`]*`", "", line))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in prose(path):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(1))
            name, n = base, 1
            while name in found:
                name, n = f"{base}-{n}", n + 1
            found.add(name)
    return found


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)) or target.startswith("//")


def test_readme_is_a_front_door_of_at_most_15_kb():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into docs/guide/"


def test_readme_points_only_inside_the_repository():
    outside = [target for target in links(README) if is_external(target)]
    assert not outside, outside


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    broken = []
    for target in links(doc):
        if is_external(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists() or ROOT not in (dest, *dest.parents):
            broken.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, broken


SECTION = re.compile(r"^##\s+`([^`]+/)`")
ROW = re.compile(r"^\|([^|]*)\|")


def modules_md_rows() -> tuple[set[str], list[str]]:
    """docs/modules.md's package sections (folders) and the module paths its rows name.

    A row's first cell names modules (or a folder of data modules, `reference/`) relative to the
    section's package; a package's `__init__.py` is described by its section's paragraph.
    """
    sections: set[str] = set()
    rows: list[str] = []
    section = ""
    for line in prose(ROOT / "docs" / "modules.md"):
        heading = SECTION.match(line)
        if heading:
            section = heading.group(1)
            sections.add(section)
        elif line.startswith("## "):
            section = ""
        row = ROW.match(line)
        if row and section:
            rows += [section + name for name in re.findall(r"`([^`]+)`", row.group(1)) if name.endswith((".py", "/"))]
    return sections, rows


def test_modules_md_has_one_row_per_module():
    packages = [*PACKAGES, *(["cli"] if (ROOT / "cli").is_dir() else [])]  # the CLI, once a package
    modules = {p.relative_to(ROOT).as_posix() for package in packages for p in (ROOT / package).rglob("*.py")}
    sections, rows = modules_md_rows()
    duplicated = sorted({row for row in rows if rows.count(row) > 1})
    assert not duplicated, f"more than one row: {duplicated}"
    folders = [row for row in rows if row.endswith("/")]
    stale = sorted(row for row in rows if row not in modules and not (row in folders and (ROOT / row).is_dir()))
    assert not stale, f"rows naming no module: {stale}"
    covered = {m for m in modules if m in rows or any(m.startswith(folder) for folder in folders)}
    described = {m for m in modules if m.endswith("/__init__.py") and m[: -len("__init__.py")] in sections}
    missing = sorted(modules - covered - described)
    assert not missing, f"modules without a row: {missing}"
    twice = sorted(m for m in modules if m in rows and any(m.startswith(folder) for folder in folders))
    assert not twice, f"modules with a row and a folder row: {twice}"
    packages_without_section = sorted({m[: -len("__init__.py")] for m in modules if m.endswith("/__init__.py")} - sections
                                      - {m[: -len("__init__.py")] for m in covered})
    assert not packages_without_section, f"packages without a section: {packages_without_section}"


def test_the_readmes_test_command_is_what_ci_runs():
    """The second set-up command and .ci/run are the same command (pip's -q aside)."""
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python3 -m venv")]
    readme = [line for line in (ROOT / "README.md").read_text().splitlines()
              if line.startswith("python3 -m venv") and "pytest" in line]
    assert len(ci) == 1 and len(readme) == 1
    assert readme[0].replace(" -q", "") == ci[0].replace(" -q", "")
