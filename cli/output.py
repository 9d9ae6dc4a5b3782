"""How commands print: JSON and rendered lines (progress is `catalog.runs.progress.Progress`, on stderr)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from catalog.state.jsonable import pretty_json


def print_json(data: Any) -> None:
    print(pretty_json(data))


def print_lines(lines: Sequence[str]) -> None:
    """Print what a `render_*` function gave, one line each."""
    for line in lines:
        print(line)

