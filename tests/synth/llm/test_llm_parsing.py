"""Tolerant parsing, schema validation and loop detection of model replies (no HTTP)."""

import pytest

from synth.llm import detect_repetition, parse_json_loose, repair_json, validate


@pytest.mark.parametrize("text, expected, repaired", [
    ('{"a": 1}', {"a": 1}, False),
    ('Sure:\n```json\n{"a": [1, 2]}\n```\nDone.', {"a": [1, 2]}, False),
    ('The answer is {"a": {"b": "}"}} as requested', {"a": {"b": "}"}}, False),
    ("{'a': 'it\\'s', 'b': True, 'c': None, 'd': False}", {"a": "it's", "b": True, "c": None, "d": False}, True),
    ('{"a": [1, 2, ], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}, True),
    ('{name: "x", count: 2}', {"name": "x", "count": 2}, True),
    ('{"a": 1, // note\n "b": 2 /* more */}', {"a": 1, "b": 2}, True),
    ('{"text": "two\nlines", "path": "C:\\data"}', {"text": "two\nlines", "path": "C:\\data"}, True),
    ('{"a": [1, 2, {"b": "unfinished', {"a": [1, 2, {"b": "unfinished"}]}, True),
    ('{"a": 1, "b": ', {"a": 1}, True),
    ('{"a": 1, "b"', {"a": 1}, True),
    ('{"a": +1, "b": .5, "c": 2.}', {"a": 1, "b": 0.5, "c": 2.0}, True),
])
def test_parse_json_loose(text, expected, repaired):
    assert parse_json_loose(text) == (expected, repaired)


@pytest.mark.parametrize("text", ["no json at all", "[1, 2, 3]", '{"a": 1 2 3 ]]'])
def test_parse_json_loose_gives_up(text):
    with pytest.raises(ValueError):
        parse_json_loose(text)


def test_repair_json_returns_json_text():
    assert repair_json("{'a': 1, 'b': [True,") == '{"a": 1, "b": [true]}'
    with pytest.raises(ValueError):
        repair_json('{"ab')


def test_validate_reports_paths():
    schema = {"type": "object", "required": ["tools"], "additionalProperties": False, "properties": {
        "tools": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/tool"}}},
        "$defs": {"tool": {"type": "object", "required": ["name", "kind"], "properties": {
            "name": {"type": "string", "minLength": 1}, "kind": {"enum": ["read", "write"]},
            "args": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}}
    assert validate({"tools": [{"name": "get", "kind": "read", "args": None}]}, schema) == []
    problems = validate({"tools": [{"name": "", "kind": "delete", "args": "x"}, {"kind": "read"}], "x": 1}, schema)
    assert problems == [
        "$.tools[0].name: shorter than 1 characters",
        "$.tools[0].kind: 'delete' is not one of ['read', 'write']",
        "$.tools[0].args: does not match any of the 2 allowed shapes",
        '$.tools[1]: missing required key "name"',
        '$: unexpected key "x"',
    ]
    assert validate(True, {"type": "integer"}) == ["$: expected integer, got boolean"]
    assert validate(2.0, {"type": "integer"}) == []


def test_repetition_cut_at_max_tokens():
    numbered = "".join(f"{i}. Ananasal\n" for i in range(4, 30))
    assert detect_repetition("1. Bananas\n2. Apples\n3. Ananas\n" + numbered, truncated=True)[0] == "4. Ananasal\n"
    assert detect_repetition('{"population": 1' + "1" * 100, truncated=True) == ("1", 101.0)


@pytest.mark.parametrize("text, truncated", [
    ('{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12', True),      # counting, not looping
    ('{"desc": "A library where members borrow books and return', True),
    ('{"zeros": [' + ", ".join(["0"] * 20) + "]}", False),      # repetitive but legitimate data
    ('{"rows": [' + ", ".join(['{"qty": 1}'] * 6) + "]}", False),
])
def test_no_false_repetition(text, truncated):
    assert detect_repetition(text, truncated=truncated) is None


def test_repetition_without_truncation_needs_many_copies():
    assert detect_repetition("The cat sat on the mat. " * 10, truncated=False) == ("The cat sat on the mat. ", 10.0)
    assert detect_repetition("The cat sat on the mat. " * 3, truncated=False) is None
