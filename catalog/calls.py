"""Call files: the sequences of tool calls that `replay` runs, read from the formats people keep them in.

Two formats, told apart by their content (never by the file name):

- Calls: JSONL, one `{"name": ..., "arguments": ...}` per line (also a JSON array of them, or one
  object). `arguments` is an object or its JSON text; absent means `{}`.
- An OpenAI-messages trajectory: a JSON list of messages, a JSONL of messages, or
  `{"messages": [...]}`. The calls are the assistant messages' `tool_calls` in order
  (`function.name`, `function.arguments` as JSON text), plus the legacy `function_call`.

A file that is not one of these is bad input: `CallFileError` names the line or the message that is
wrong. Arguments that are not a JSON object are not bad input: a model wrote them, so the call is
kept with a `problem` and replays as an invalid step (the trajectory's own mistake, worth seeing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.errors import EnvforgeError

__all__ = ["Call", "CallFileError", "as_call", "as_tool_call", "parse_calls", "read_calls"]


class CallFileError(ValueError, EnvforgeError):
    """The call file cannot be read as calls; the message names where (line or message index)."""


@dataclass(frozen=True)
class Call:
    """One tool call read from a file.

    `arguments` is the object to call with; when the file's arguments are unusable it is `{}`,
    `raw_arguments` keeps what the file said and `problem` says why the call cannot run.
    `source` names where in the file the call came from (for messages to the user).
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    problem: str | None = None
    raw_arguments: Any = None

    def to_action(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}

    def shown_arguments(self) -> Any:
        """The arguments as the file gave them when unusable, else the parsed object."""
        return self.raw_arguments if self.problem else self.arguments


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Parse a call's arguments: an object, or JSON text of one (empty text means none)."""
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(raw, dict):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    return raw, None


def as_call(item: Any, where: str) -> Call:
    """One `{"name", "arguments"}` object as a Call (arguments may be JSON text); CallFileError names `where`."""
    if not isinstance(item, dict):
        raise CallFileError(f"{where}: expected an object {{\"name\", \"arguments\"}}, got {type(item).__name__}")
    unknown = sorted(set(item) - {"name", "arguments", "id", "type"})
    if "name" not in item:
        raise CallFileError(f"{where}: the call has no \"name\"" + (f" (keys: {', '.join(unknown)})" if unknown else ""))
    if not isinstance(item["name"], str) or not item["name"]:
        raise CallFileError(f"{where}: \"name\" must be a non-empty string, got {json.dumps(item['name'])}")
    if unknown:
        raise CallFileError(f"{where}: unexpected keys {', '.join(unknown)} (a call is {{\"name\", \"arguments\"}})")
    arguments, problem = _arguments(item.get("arguments"))
    return Call(item["name"], arguments, where, problem, item.get("arguments"))


def as_tool_call(item: Any, where: str = "tool call") -> Call:
    """A `{"name", "arguments"}` object or an OpenAI tool call `{"id", "type", "function": {...}}` as a Call."""
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        return _function(item["function"], f"{where}.function")
    return as_call(item, where)


def _message_calls(message: Any, where: str) -> list[Call]:
    """The calls one message makes: an assistant's `tool_calls` (or legacy `function_call`)."""
    if not isinstance(message, dict):
        raise CallFileError(f"{where}: expected a message object, got {type(message).__name__}")
    if not isinstance(message.get("role"), str):
        raise CallFileError(f"{where}: the message has no \"role\"")
    if message["role"] != "assistant":
        return []
    calls: list[Call] = []
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            raise CallFileError(f"{where}: \"tool_calls\" must be a list, got {type(tool_calls).__name__}")
        for number, tool_call in enumerate(tool_calls):
            here = f"{where}.tool_calls[{number}]"
            if not isinstance(tool_call, dict) or not isinstance(tool_call.get("function"), dict):
                raise CallFileError(f"{here}: expected {{\"type\": \"function\", \"function\": {{\"name\", \"arguments\"}}}}")
            if tool_call.get("type", "function") != "function":
                raise CallFileError(f"{here}: only function tool calls can be replayed, got type "
                                    f"{json.dumps(tool_call.get('type'))}")
            calls.append(_function(tool_call["function"], f"{here}.function"))
    function_call = message.get("function_call")
    if function_call is not None:
        if not isinstance(function_call, dict):
            raise CallFileError(f"{where}: \"function_call\" must be an object {{\"name\", \"arguments\"}}")
        calls.append(_function(function_call, f"{where}.function_call"))
    return calls


def _function(function: dict[str, Any], where: str) -> Call:
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise CallFileError(f"{where}: \"name\" must be a non-empty string, got {json.dumps(name)}")
    arguments, problem = _arguments(function.get("arguments"))
    return Call(name, arguments, where, problem, function.get("arguments"))


def _from_messages(messages: list[Any], label: str) -> list[Call]:
    calls: list[Call] = []
    for index, message in enumerate(messages):
        calls += _message_calls(message, label.format(index=index))
    return calls


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and "role" in item


def _from_document(data: Any) -> list[Call]:
    """A file that is one JSON value: a trajectory, a list of calls, or one call."""
    if isinstance(data, dict) and "messages" in data:
        if not isinstance(data["messages"], list):
            raise CallFileError(f"\"messages\" must be a list, got {type(data['messages']).__name__}")
        return _from_messages(data["messages"], "messages[{index}]")
    if isinstance(data, list):
        if data and _is_message(data[0]):
            return _from_messages(data, "messages[{index}]")
        return [as_call(item, f"item {index}") for index, item in enumerate(data)]
    if _is_message(data):
        return _message_calls(data, "line 1")
    return [as_call(data, "line 1")]


def _from_lines(lines: list[tuple[int, Any]]) -> list[Call]:
    """A JSONL file: calls, or messages (told by the first line), or one `{"messages"}` record."""
    first = lines[0][1]
    if isinstance(first, dict) and "messages" in first:
        if len(lines) > 1:
            raise CallFileError(f"line {lines[1][0]}: a second trajectory; replay runs one from one state "
                                "(put each trajectory in its own file)")
        return _from_document(first)
    calls: list[Call] = []
    messages = _is_message(first)
    for number, item in lines:
        if messages:
            calls += _message_calls(item, f"line {number}")
        elif _is_message(item):
            raise CallFileError(f"line {number}: a message among calls (line {lines[0][0]} is a call, so every "
                                "line must be a {\"name\", \"arguments\"} object)")
        else:
            calls.append(as_call(item, f"line {number}"))
    return calls


def parse_calls(text: str) -> list[Call]:
    """The calls in `text` (any format above), in order; raises CallFileError naming the bad spot."""
    if not text.strip():
        raise CallFileError("the file is empty: expected JSONL calls or an OpenAI-messages trajectory")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as whole:
        calls = _from_jsonl(text, whole)
    else:
        calls = _from_document(data)
    if not calls:
        raise CallFileError("no tool calls in it (a trajectory's calls are its assistant messages' tool_calls)")
    return calls


def _from_jsonl(text: str, whole: json.JSONDecodeError) -> list[Call]:
    """JSONL; when even the first line is not JSON, the file was meant as one document: report that error."""
    lines: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            lines.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            error = exc if lines else whole
            raise CallFileError(f"line {number if lines else whole.lineno}: not valid JSON "
                                f"({error.msg} at column {error.colno})") from None
    return _from_lines(lines)


def read_calls(path: Path) -> list[Call]:
    """The calls in the file at `path`; CallFileError (prefixed with the path) for bad content."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CallFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return parse_calls(text)
    except CallFileError as exc:
        raise CallFileError(f"{path}: {exc}") from None
