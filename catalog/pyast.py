"""`ast.parse` and `ast.literal_eval` that are safe to call from several threads at once.

CPython 3.11 keeps the recursion depth of its ast-object builder in interpreter-wide state, so
two threads parsing at once (a thread switch while the tree's objects are built) can fail with
`SystemError: AST constructor recursion depth mismatch`. Serving and rollouts make env instances
and judge steps on threads (loading tasks, checking argument hints, parsing observations), so
every parse on those paths goes through here, under one lock. Parses are small and rare; the
lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal, overload

__all__ = ["literal_eval", "parse"]

_LOCK = threading.RLock()


@overload
def parse(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...


@overload
def parse(source: str, mode: Literal["eval"]) -> ast.Expression: ...


def parse(source: str, mode: Literal["exec", "eval"] = "exec") -> ast.Module | ast.Expression:
    """`ast.parse(source, mode=mode)`, one thread at a time."""
    with _LOCK:
        return ast.parse(source, mode=mode)  # type: ignore[return-value]  # typeshed types ast.parse by mode only for literals


def literal_eval(text: str) -> Any:
    """`ast.literal_eval(text)`, one thread at a time."""
    with _LOCK:
        return ast.literal_eval(text)
