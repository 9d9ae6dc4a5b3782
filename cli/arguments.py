"""Argument parsing shared by every command: the parser whose usage errors are bad input, and value types."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from cli.errors import UserError


class Parser(argparse.ArgumentParser):
    """Usage errors are bad input like any other: one line and exit status 1 (argparse prints usage, exits 2).

    `epilog_from` builds the epilog only when help is shown (e.g. from a registry that is slow to
    import); `old_form` parses a command's earlier syntax, returning None when the arguments are
    not in it, so existing command lines keep working beside new subcommands.
    """

    def __init__(self, *args: Any, epilog_from: Callable[[], str] | None = None,
                 old_form: Callable[[list[str]], argparse.Namespace | None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epilog_from, self.old_form = epilog_from, old_form

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see: {self.prog} --help)")

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        if self.old_form is not None and args is not None:
            old = self.old_form(list(args))
            if old is not None:
                return old, []
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()


def whole_number(low: int) -> Callable[[str], int]:
    """Parse a whole number >= `low` (0 examples or workers, a negative limit: nothing sensible to do)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def number(low: float, high: float = math.inf, *, inclusive: bool) -> Callable[[str], float]:
    """Parse a number in [low, high] (`inclusive`) or in (low, high); NaN is never inside."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value <= high if inclusive else low < value < high):
            bounds = (f"from {low:g} to {high:g}" if inclusive else
                      f"more than {low:g}" if high == math.inf else f"between {low:g} and {high:g}, exclusive")
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {text}")
        return value
    return parse


POSITIVE = whole_number(1)
SECONDS = number(0, inclusive=False)
SHARE = number(0, 1, inclusive=True)
