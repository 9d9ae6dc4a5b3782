"""How commands print: JSON, rendered lines, and a progress line on a terminal."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from catalog.state.jsonable import pretty_json


def print_json(data: Any) -> None:
    print(pretty_json(data))


def print_lines(lines: Sequence[str]) -> None:
    """Print what a `render_*` function gave, one line each."""
    for line in lines:
        print(line)


class ProgressLine:
    """One progress line rewritten in place on stderr: shown on a terminal only, never with --json."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.shown = sys.stderr.isatty() and not getattr(args, "json", False)

    def show(self, text: str) -> None:
        if self.shown:
            sys.stderr.write(f"\r{text}   ")
            sys.stderr.flush()

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
