"""The one base of errors a user caused and can fix (bad input, a missing env, an unreachable endpoint).

`cli.main` catches `EnvforgeError` and prints its message as one line on stderr (exit status 1);
anything else is a bug and keeps its traceback. Each package subclasses it where its own errors
live, keeping their other base (ValueError, LookupError, ...) so existing `except` clauses hold.
It sits in catalog/, the bottom of the dependency direction, so every package can reach it.
"""

from __future__ import annotations


class EnvforgeError(Exception):
    """A problem the user can fix, reported as one clear line."""
