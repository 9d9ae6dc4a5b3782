"""Derive a tool's descriptor (description + JSON schema) from its signature and docstring.

The docstring is the schema (as in tau2-bench): its summary is the description and its Google
style `Args:` block describes each parameter. Types come from the annotations via pydantic, so
`Literal`, `X | None`, `list[int]` and enums get the same schema pydantic would validate with.
A small hand-written parser reads the `Args:` block; a docstring library would be a dependency
for thirty lines.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from catalog.models import ToolDescriptor, ToolKind

__all__ = ["describe_tool", "parse_docstring"]

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description (text before the first section) and arg docs.

    >>> parse_docstring('''Lend a book.
    ...
    ...     Args:
    ...         book_id (str): The book, such as 'B001'.
    ...             Must be available.
    ...     ''')
    ('Lend a book.', {'book_id': "The book, such as 'B001'. Must be available."})
    """
    text = inspect.cleandoc(doc or "")
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            section, current, arg_indent = header.group(1).lower(), None, None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in ("args", "arguments", "parameters") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(line.strip())
        if match and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = match.group(1).lstrip("*")
            args[current] = match.group(3).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(description).strip(), args


def _schema_of(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    schema = TypeAdapter(annotation).json_schema()
    return _strip_titles(schema)


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def describe_tool(name: str, function: Callable[..., Any], kind: ToolKind | None) -> ToolDescriptor:
    """Build the descriptor of a tool method (bound or unbound; `self` is skipped).

    Parameters without an annotation accept any JSON value; parameters without a default are
    required. `*args`/`**kwargs` cannot be called by name from JSON and are left out.
    """
    declared = getattr(function, "__envforge_schema__", None)  # a convention adapter's own schema (get_info())
    if isinstance(declared, dict):
        parameters = declared.get("parameters") or {"type": "object", "properties": {}, "required": []}
        return ToolDescriptor(name=name, kind=kind, description=str(declared.get("description") or ""),
                              parameters=dict(parameters))
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        hints = {}
    description, arg_docs = parse_docstring(function.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = _schema_of(hints.get(param.name, param.annotation))
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        else:
            try:
                schema["default"] = TypeAdapter(Any).dump_python(param.default, mode="json")
            except Exception:
                pass
        properties[param.name] = schema
    parameters = {"type": "object", "properties": properties, "required": required}
    return ToolDescriptor(name=name, kind=kind, description=description, parameters=parameters)
