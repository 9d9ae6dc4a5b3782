"""What the adapters share: names from a manifest checked before they become Python names, tool results as text."""

from __future__ import annotations

import json
import keyword
from typing import Any

from serving.gym import ServingError

__all__ = ["AdapterError", "python_name", "result_text", "final_answer"]


class AdapterError(ServingError):
    """An env an adapter cannot offer as asked (a tool or parameter name that is no Python name, a reserved name)."""


def python_name(kind: str, name: object, *, reserved: frozenset[str] = frozenset()) -> str:
    """`name` if it can be a Python attribute or parameter (ASCII identifier, not a keyword or reserved), else raise.

    Manifests are untrusted text: a name becomes an attribute through `setattr`-free class
    construction, never through code, and only after this check.
    """
    if not (isinstance(name, str) and name.isascii() and name.isidentifier() and not keyword.iskeyword(name)
            and not name.startswith("_") and name not in reserved):
        raise AdapterError(f"{kind} {name!r} cannot be offered to the trainer: it must be a Python identifier "
                           f"not starting with '_'{' and not one of ' + ', '.join(sorted(reserved)) if reserved else ''}")
    return name


def result_text(value: Any) -> str:
    """A tool's result as the model reads it: text as it is, anything else as JSON (what the MCP server sends)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def final_answer(messages: list[dict[str, Any]]) -> tuple[str | None, bool]:
    """The agent's final answer in a conversation, and whether the conversation was cut off.

    The answer is the last message when it is the assistant's and calls no tool; a conversation
    that ends on a tool call or a tool result stopped before the agent answered (cut off).
    """
    if not messages:
        return None, False
    last = messages[-1]
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return None, True
    content = last.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return (content if isinstance(content, str) else None), False
