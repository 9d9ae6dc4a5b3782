"""Names stay names: env ids, state names and task ids are checked before they touch a path.

Every one of them ends up joined into a path (`<root>/<env_id>/`, `states/<name>.json`) or
compared with shipped folders, and every one can come from an untrusted place (a CLI argument,
an MCP client, a URL query, tasks.jsonl, env.json). One pattern, the manifest's, checked with
`fullmatch` (a `$` would let a trailing newline through): a letter or digit first, then letters,
digits, `_`, `.`, `-`; so no `/`, no NUL, no leading `.` (`..` is never a whole name).
"""

from __future__ import annotations

import re

from catalog.errors import EnvforgeError

__all__ = ["NAME_PATTERN", "MAX_NAME", "REFERENCE_IDS", "BadName", "is_name", "check_env_id", "check_state_name",
           "check_task_id"]

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
MAX_NAME = 128
_NAME = re.compile(NAME_PATTERN)

# The envs shipped in catalog/reference/ (trusted: their code runs in-process). Reference status
# comes from this list, never from a path that happens to exist for a given id.
REFERENCE_IDS: tuple[str, ...] = ("bank", "clinic", "library", "store")


class BadName(ValueError, EnvforgeError):
    """An env id, state name or task id that is not a plain name (it would be a path)."""


def is_name(value: object) -> bool:
    """True if `value` is a str matching the name pattern, at most MAX_NAME characters."""
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME and _NAME.fullmatch(value) is not None


def _check(kind: str, value: object) -> str:
    if is_name(value):
        assert isinstance(value, str)
        return value
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise BadName(f"invalid {kind} {shown}: a name is 1-{MAX_NAME} letters, digits, '_', '.', '-' "
                  "starting with a letter or digit (no '/', no '..' path)")


def check_env_id(value: object) -> str:
    """Return `value` if it is a valid env id; raise BadName otherwise."""
    return _check("env id", value)


def check_state_name(value: object) -> str:
    """Return `value` if it is a valid state name; raise BadName otherwise."""
    return _check("state name", value)


def check_task_id(value: object) -> str:
    """Return `value` if it is a valid task id; raise BadName otherwise."""
    return _check("task id", value)
