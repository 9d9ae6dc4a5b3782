"""docs/reference/cli.md is the parsers' `--help` as they stand: regenerated here, it must match the committed file."""

import argparse
from pathlib import Path

from cli.parser import build_parser
from cli.reference import COMMAND, parsers, reference

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"


def test_the_committed_reference_is_current():
    assert REFERENCE.read_text(encoding="utf-8") == reference(), f"docs/reference/cli.md is stale: run {COMMAND}"


def test_the_reference_has_every_command_and_action():
    progs = {parser.prog for parser in parsers(build_parser())}
    assert {"python cli.py", "python cli.py catalog run", "python cli.py verify write-plan",
            "python cli.py bench export", "python cli.py audit-sim", "python cli.py serve"} <= progs
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {f"python cli.py {name}" for name in commands.choices} <= progs
    text = reference()
    assert all(f"## {prog}\n" in text for prog in progs)


def test_the_reference_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = reference()
    monkeypatch.delenv("COLUMNS")
    assert narrow == reference()
