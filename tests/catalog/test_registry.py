"""One name -> entry table for every CLI choice: registration order, decorator, one clear unknown-name error."""

from __future__ import annotations

import pickle

import pytest

from catalog.errors import EnvforgeError
from catalog.registry import Registry, UnknownName


def test_entries_keep_registration_order_and_are_the_choices() -> None:
    table: Registry[int] = Registry("color")
    table.add("red", 1)

    @table.register("green", lambda f: f())
    def green() -> int:
        return 2

    assert table.choices() == ["red", "green"] and table["green"] == 2 and "red" in table and len(table) == 2
    assert green() == 2  # the decorator hands back what it decorated


def test_an_unknown_name_lists_the_choices() -> None:
    table = Registry("color", hint="add one in colors.toml", entries={"red": 1, "blue": 3})
    with pytest.raises(UnknownName) as info:
        table["mauve"]
    assert str(info.value) == "unknown color 'mauve'; colors: red, blue (add one in colors.toml)"
    assert isinstance(info.value, KeyError) and isinstance(info.value, EnvforgeError)
    assert table.get("mauve") is None


def test_a_name_registered_twice_is_refused_and_a_copy_is_independent() -> None:
    table = Registry("color", entries={"red": 1})
    with pytest.raises(ValueError, match="color 'red' is registered twice"):
        table.add("red", 2)
    copy = table.copy()
    copy.add("blue", 3)
    assert table.choices() == ["red"] and copy.choices() == ["red", "blue"]


def test_a_table_of_plain_entries_pickles() -> None:
    table = Registry("color", entries={"red": 1})
    assert pickle.loads(pickle.dumps(table)).choices() == ["red"]
