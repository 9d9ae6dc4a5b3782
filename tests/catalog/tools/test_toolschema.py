import datetime as dt
from typing import Literal

from catalog.models import ToolKind
from catalog.state.jsonable import canonical_json, to_jsonable
from catalog.tools.schema import describe_tool, parse_docstring


def sample(self, name: str, mode: Literal["a", "b"], limit: int = 10, when: dt.date | None = None,
           tags: list[str] | None = None, anything=None) -> dict:
    """Do a thing.

    Longer explanation.

    Args:
        name (str): The name, such as 'x'.
        mode: One of a or b,
            continued on a second line.
        limit: How many.

    Returns:
        dict: the result.
    """


def test_schema_from_hints_and_args_block():
    tool = describe_tool("sample", sample, ToolKind.READ)
    props = tool.parameters["properties"]
    assert tool.description == "Do a thing.\n\nLonger explanation."
    assert tool.parameters["required"] == ["name", "mode"]
    assert props["name"] == {"type": "string", "description": "The name, such as 'x'."}
    assert props["mode"]["enum"] == ["a", "b"] and props["mode"]["description"] == "One of a or b, continued on a second line."
    assert props["limit"] == {"type": "integer", "default": 10, "description": "How many."}
    assert {"type": "null"} in props["when"]["anyOf"]
    assert props["anything"] == {"default": None}
    assert "self" not in props
    assert tool.openai_schema()["function"]["name"] == "sample"


def test_docstring_without_args():
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("Just text.") == ("Just text.", {})


def test_jsonable_handles_python_values():
    from decimal import Decimal

    value = {"t": (1, 2), "d": dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC), "dec": Decimal("1.50"), "n": Decimal("3"), "s": {2, 1}, 5: "five"}
    assert to_jsonable(value) == {"t": [1, 2], "d": "2026-01-02T03:04:00+00:00", "dec": 1.5, "n": 3, "s": [1, 2], "5": "five"}
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
