"""Tolerant parsing of model output: extract, repair and validate JSON, and spot loops.

Small models (and servers without structured output) wrap JSON in prose or code fences, use
Python literals and single quotes, leave trailing commas, and stop mid-object at max_tokens.
Repairing these cheaply is worth far more than a re-ask at ~30 tokens/s. The repair is a
single left-to-right scan written for this project (no dependency); the validator covers the
JSON-Schema subset envforge's node schemas use, so no ``jsonschema`` install is needed.
"""

from __future__ import annotations

import json
import re
from typing import Any

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERALS = {"true": "true", "True": "true", "false": "false", "False": "false", "null": "null",
             "None": "null", "NULL": "null", "undefined": "null", "NaN": "null", "Infinity": "null"}
_ESCAPES = set('"\\/bfnrtu')
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)(?:```|$)", re.S)


def parse_json_loose(text: str, *, want: type = dict) -> tuple[Any, bool]:
    r"""Parse the first JSON value of type ``want`` in ``text``; return ``(value, repaired)``.

    ``repaired`` is False when the value was valid JSON as found (possibly inside prose or a
    code fence) and True when the syntax had to be fixed. Raises ValueError if nothing parses.

    >>> parse_json_loose('Sure! ```json\n{"a": 1}\n```')
    ({'a': 1}, False)
    >>> parse_json_loose("{'a': True, 'b': [1, 2,], 'c': None")
    ({'a': True, 'b': [1, 2], 'c': None}, True)
    """
    stripped = text.strip()
    try:
        value = json.loads(stripped)
        if isinstance(value, want):
            return value, False
    except ValueError:
        pass
    opener = "[" if want is list else "{"
    for source in _fenced_blocks(text) + [text]:
        start = source.find(opener)
        if start < 0:
            continue
        end = _balanced_end(source, start)
        if end is not None:
            try:
                value = json.loads(source[start:end])
                if isinstance(value, want):
                    return value, False
            except ValueError:
                pass
        try:
            value = _loads_repaired(source[start:])
        except ValueError:
            continue
        if isinstance(value, want):
            return value, True
    kind = "array" if want is list else "object"
    raise ValueError(f"no JSON {kind} found in the reply" if opener not in text
                     else f"the JSON {kind} in the reply is beyond repair")


def repair_json(text: str) -> str:
    """Rewrite near-JSON (starting at its first bracket) into valid JSON text.

    Fixes single-quoted strings, Python/JS literals, unquoted keys, trailing commas, comments,
    raw control characters in strings, and output truncated mid-value (closes strings and
    brackets, dropping an incomplete last member). Raises ValueError if no closing helps.

    >>> repair_json('{"a": [1, 2, {"b": "c')
    '{"a": [1, 2, {"b": "c"}]}'
    """
    value = _loads_repaired(text)
    return json.dumps(value, ensure_ascii=False)


def _fenced_blocks(text: str) -> list[str]:
    return [m.group(1) for m in _FENCE.finditer(text)] if "```" in text else []


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracketed value starting at ``start`` (JSON strings respected)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _read_string(text: str, i: int) -> tuple[str, int, bool]:
    """Read a '…' or "…" string at ``i``; return (JSON string, index after it, closed)."""
    quote, i, n = text[i], i + 1, len(text)
    parts: list[str] = []
    while i < n:
        c = text[i]
        if c == quote:
            return '"' + "".join(parts) + '"', i + 1, True
        if c == "\\":
            if i + 1 >= n:
                break
            nxt = text[i + 1]
            if nxt == "'" and quote == "'":
                parts.append("'")
            elif nxt == "u" and not re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                if i + 6 > n:
                    break  # cut off inside the escape: drop it
                parts.append("\\\\u")
            elif nxt in _ESCAPES:
                parts.append("\\" + nxt)
            else:
                parts.append("\\\\" + nxt)
            i += 2
            continue
        if c == '"':
            parts.append('\\"')
        elif c < " ":
            parts.append(json.dumps(c)[1:-1])
        else:
            parts.append(c)
        i += 1
    return '"' + "".join(parts) + '"', n, False


def _scan(text: str) -> tuple[list[str], list[str], list[tuple[int, tuple[str, ...]]]]:
    """Rewrite tokens; return (output chunks, open closers, cut points for truncation)."""
    out: list[str] = []
    stack: list[str] = []
    cuts: list[tuple[int, tuple[str, ...]]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            s, i, closed = _read_string(text, i)
            out.append(s)
            if not closed:
                break
            continue
        if c in "{[":
            stack.append("}" if c == "{" else "]")
            out.append(c)
            if len(stack) > 1:  # never cut back to an empty top-level value: that is no repair
                cuts.append((len(out), tuple(stack)))
        elif c in "}]":
            _drop_trailing_comma(out)
            if c in stack:
                while stack:
                    closer = stack.pop()
                    out.append(closer)
                    if closer == c:
                        break
                if not stack:
                    break
        elif c == ",":
            _drop_trailing_comma(out)
            cuts.append((len(out), tuple(stack)))
            out.append(c)
        elif c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif c in "+-.0123456789" and (m := _NUMBER.match(text, i)):
            out.append(_number(m.group()))
            i = m.end()
            continue
        elif c.isalpha() or c == "_":
            m = _WORD.match(text, i)
            assert m is not None
            word, i = m.group(), m.end()
            k = i
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] == ":":
                out.append(json.dumps(word))
            else:
                out.append(_LITERALS.get(word, json.dumps(word)))
            continue
        else:
            out.append(c)
        i += 1
    return out, stack, cuts


def _number(raw: str) -> str:
    """A JSON spelling of a loosely written number (``+3``, ``1.``, ``.5``, ``007``)."""
    if _JSON_NUMBER.fullmatch(raw):
        return raw
    body = raw.lstrip("+")
    if any(ch in body for ch in ".eE"):
        return repr(float(body))
    return str(int(body))


def _drop_trailing_comma(out: list[str]) -> None:
    """Remove a comma (and the whitespace after it) at the end of the output."""
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j:]


def _loads_repaired(text: str) -> Any:
    out, stack, cuts = _scan(text)
    candidates = [(len(out), tuple(stack))] + sorted(cuts, reverse=True)[:40] if stack else [(len(out), ())]
    for size, open_ in candidates:
        body = "".join(out[:size]).rstrip()
        body = body.rstrip(",").rstrip()
        try:
            return json.loads(body + "".join(reversed(open_)))
        except ValueError:
            continue
    raise ValueError("beyond repair")


# --- schema validation --------------------------------------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "null": (type(None),),
}


def validate(value: Any, schema: dict[str, Any], *, limit: int = 10) -> list[str]:
    """Problems of ``value`` against ``schema`` (a JSON-Schema subset), as ``$.path: problem``.

    Covers type, enum, const, properties, required, additionalProperties, items, min/maxItems,
    min/maxLength, minimum/maximum, anyOf/oneOf/allOf and local ``$ref`` (``#/$defs/...``).

    >>> validate({"a": "x"}, {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "integer"}}})
    ['$.a: expected integer, got string', '$: missing required key "b"']
    """
    problems: list[str] = []
    _check(value, schema, "$", schema, problems)
    return problems[:limit]


def _type_name(value: Any) -> str:
    for name, types in _TYPES.items():
        if isinstance(value, types) and not (isinstance(value, bool) and name in ("integer", "number")):
            return name
    return type(value).__name__


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, object))


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return _resolve(node, root) if isinstance(node, dict) else {}


def _check(value: Any, schema: Any, path: str, root: dict[str, Any], problems: list[str]) -> None:
    if not isinstance(schema, dict) or len(problems) > 50:
        return
    schema = _resolve(schema, root)
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is(value, k) for k in kinds):
            problems.append(f"{path}: expected {' or '.join(kinds)}, got {_type_name(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [b for b in schema[key] if isinstance(b, dict)]
            fits = sum(1 for b in branches if not _sub(value, b, path, root))
            if fits == 0 or (key == "oneOf" and fits > 1):
                problems.append(f"{path}: does not match {'exactly one' if key == 'oneOf' else 'any'} "
                                f"of the {len(branches)} allowed shapes")
    for sub in schema.get("allOf", []):
        _check(value, sub, path, root, problems)
    if isinstance(value, dict):
        _check_object(value, schema, path, root, problems)
    elif isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: needs at least {schema['minItems']} items, has {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: allows at most {schema['maxItems']} items, has {len(value)}")
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _check(item, items, f"{path}[{i}]", root, problems)
    elif isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
    elif _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: {value} is above the maximum {schema['maximum']}")


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str, root: dict[str, Any],
                  problems: list[str]) -> None:
    props = schema.get("properties", {})
    for key, sub in props.items():
        if key in value:
            _check(value[key], sub, f"{path}.{key}", root, problems)
    for key in schema.get("required", []):
        if key not in value:
            problems.append(f'{path}: missing required key "{key}"')
    extra = schema.get("additionalProperties", True)
    for key in value:
        if key in props:
            continue
        if extra is False:
            problems.append(f'{path}: unexpected key "{key}"')
        elif isinstance(extra, dict):
            _check(value[key], extra, f"{path}.{key}", root, problems)


def _sub(value: Any, schema: dict[str, Any], path: str, root: dict[str, Any]) -> list[str]:
    found: list[str] = []
    _check(value, schema, path, root, found)
    return found


def strict_compatible(schema: Any) -> bool:
    """True if OpenAI's ``strict`` structured-output mode accepts the schema.

    Strict mode needs every object to list all its properties as required and to forbid extra
    keys; sending ``strict: true`` with any other schema gets a 400.
    """
    if isinstance(schema, list):
        return all(strict_compatible(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
    return all(strict_compatible(v) for k, v in schema.items() if k not in ("enum", "const", "default"))


# --- repetition -----------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W\d]+|\d|\S")
_TOKEN_RUNS = re.compile(r"[^\W\d]+|\d+|\S")


def detect_repetition(text: str, *, truncated: bool, max_period: int = 64) -> tuple[str, float] | None:
    """Return ``(pattern, repeats)`` if the text loops, else None.

    Tokens are words, single digits and single punctuation marks. A reply cut at max_tokens is a
    loop when it ends in at least 3 back-to-back copies of a pattern spanning >= 16 tokens (the
    usual way a small model degenerates; it is checked a second time with every number as one
    token, so a numbered list that loops is caught too); a reply that stopped on its own only
    when a pattern repeats >= 8 times over >= 64 tokens, so repetitive but sane data passes.

    >>> detect_repetition('{"a": "b", "c": "d"}', truncated=False) is None
    True
    >>> detect_repetition('{"names": ' + '"bob", ' * 20, truncated=True)
    ('"bob", ', 20.0)
    """
    found = _periodic(_TOKEN.findall(text), text, truncated, max_period)
    if found is None and truncated:  # numbered loops ("7. Ananas 8. Ananas ...") differ only in numbers
        runs = ["#" if t.isdigit() else t for t in _TOKEN_RUNS.findall(text)]
        found = _periodic(runs, text, truncated, max_period)
        if found and not re.search(r"[^\W\d]", found[0]):
            found = None  # numbers and punctuation only: a counting list, not a loop
    return found


def _periodic(tokens: list[str], text: str, truncated: bool, max_period: int) -> tuple[str, float] | None:
    """The longest back-to-back repetition in ``tokens`` (at the tail if truncated), if it counts."""
    n = len(tokens)
    best: tuple[int, int, int] | None = None  # (span, period, start)
    for p in range(1, min(max_period, n // 2) + 1):
        run = 0
        for i in range(n - p):
            if tokens[i] == tokens[i + p]:
                run += 1
                span = run + p
                if truncated and i + p != n - 1:
                    continue
                if best is None or span > best[0]:
                    best = (span, p, i - run + 1)
            else:
                run = 0
    if best is None:
        return None
    span, period, start = best
    repeats = span / period
    if truncated and (repeats < 3 or span < 16):
        return None
    if not truncated and (repeats < 8 or span < 64):
        return None
    pattern_tokens = tokens[start:start + period]
    idx = _locate(text, pattern_tokens)
    return (idx if idx is not None else " ".join(pattern_tokens)), round(repeats, 2)


def _locate(text: str, pattern_tokens: list[str]) -> str | None:
    """The pattern as it appears in the text (with its original spacing)."""
    regex = r"\s*".join(r"\d+" if t == "#" else re.escape(t) for t in pattern_tokens)
    m = re.search(r"(" + regex + r")\s*(?=" + regex + ")", text)
    return m.group(0) if m else None
