"""Argument checking follows the full typing of a tool's hints, and strict and faithful runtimes differ only in
whether an ill-typed call runs."""

from __future__ import annotations

from typing import Dict, List, Literal, NewType, Optional, Tuple, Union

import pytest

from catalog.models import FailureConvention, Outcome
from catalog.runtime import ClassRuntime, SqlRuntime, outcome_of, runtime_for
from catalog.tools.argcheck import ANY, compile_annotation, form_problem, type_problem

UserId = NewType("UserId", int)


@pytest.mark.parametrize(("annotation", "value", "problem"), [
    (List[str], ["AAPL", "MSFT"], None),
    (List[str], 0, "stocks must be a list, got 0"),
    ("List[str]", ["AAPL", 3], "stocks[1] must be a string, got 3"),
    (list[int], [1, True], "stocks[1] must be an integer, got True"),
    (Dict[str, int], {"a": 1}, None),
    ("dict[str, float]", {"a": "x"}, "stocks['a'] must be a number, got 'x'"),
    (Optional[int], None, None),
    ("Optional[int]", "7", "stocks must be an integer or null, got '7'"),
    (Union[int, str], 2.5, "stocks must be an integer or a string, got 2.5"),
    ("int | str", "x", None),
    (Literal["buy", "sell"], "hold", "stocks must be one of 'buy', 'sell', got 'hold'"),
    ("Literal[1, 2]", True, "stocks must be one of 1, 2, got True"),
    (Tuple[int, str], [1, "a"], None),  # JSON has no tuples: a list stands for one
    ("tuple[int, str]", [1, 2], "stocks[1] must be a string, got 2"),
    ("tuple[int, ...]", [1, 2, 3], None),
    ("set[str]", ["a"], None),
    ("Any", object(), None),
    (UserId, "u1", "stocks must be an integer, got 'u1'"),
    ("float", 3, None),
    ("float", "3", "stocks must be a number, got '3'"),
    ("'int'", 4, None),  # a quoted forward reference
    ("Annotated[int, 'an id']", "4", "stocks must be an integer, got '4'"),
])
def test_full_typing(annotation, value, problem):
    assert type_problem("stocks", annotation, value) == problem


def test_unknown_and_unresolvable_hints_are_not_checked():
    class Ticker:
        pass

    assert type_problem("x", Ticker, 3) is None
    assert type_problem("x", "Ticker", 3) is None  # no namespace to resolve it in
    assert compile_annotation("List[", None) is ANY  # does not parse


def test_string_hints_resolve_in_the_module_globals_without_evaluating_them():
    assert type_problem("sku", "Sku", 3, {"Sku": str}) == "sku must be a string, got 3"
    assert type_problem("sku", "t.List[Sku]", ["a", 1], {"Sku": str, "t": __import__("typing")}) == \
        "sku[1] must be a string, got 1"
    called = []
    namespace = {"boom": lambda: called.append(1)}
    assert type_problem("x", "boom()", 3, namespace) is None and called == []  # a call is no hint: never run


def test_form_problem_names_the_path_of_the_misfit():
    form = compile_annotation("dict[str, list[Optional[int]]]")
    assert form_problem("orders", form, {"a": [1, None, "2"]}) == "orders['a'][2] must be an integer or null, got '2'"


# --- strict and faithful runtimes -------------------------------------------------------------
class Broker:
    """An env in the style of function-calling benchmarks: ids may come as strings and still work."""

    def __init__(self):
        self.holdings = {}

    def get_quote(self, stock_id: int) -> dict:
        return {"stock_id": stock_id, "price": 10}

    def watch(self, stocks: List[str]) -> dict:
        return {"watching": [s.upper() for s in stocks]}

    def sell(self, stock_id: int, mode: Literal["market", "limit"] = "market") -> dict:
        return {"sold": stock_id, "mode": mode}


def test_strict_refuses_an_ill_typed_call_without_running_it():
    runtime = ClassRuntime(Broker)
    runtime.reset({})
    result = runtime.call({"name": "get_quote", "arguments": {"stock_id": "7"}})
    assert result.outcome is Outcome.INVALID
    assert result.observation == {"error": "Bad arguments for get_quote: stock_id must be an integer, got '7'"}
    assert result.info["ill_typed"] == "stock_id must be an integer, got '7'"
    watch = runtime.call({"name": "watch", "arguments": {"stocks": 0}})
    assert watch.outcome is Outcome.INVALID  # List[str] is checked now: no crash reported as an env bug


def test_faithful_runs_the_call_as_python_would_and_flags_it():
    runtime = ClassRuntime(Broker, strict_args=False)
    runtime.reset({})
    result = runtime.call({"name": "get_quote", "arguments": {"stock_id": "7"}})
    assert result.outcome is Outcome.SUCCESS and result.observation == {"stock_id": "7", "price": 10}  # unchanged
    assert result.info["ill_typed"] == "stock_id must be an integer, got '7'"
    crash = runtime.call({"name": "watch", "arguments": {"stocks": 0}})
    assert crash.outcome is Outcome.CRASH and crash.info["ill_typed"] == "stocks must be a list, got 0"
    fine = runtime.call({"name": "sell", "arguments": {"stock_id": 3}})
    assert fine.outcome is Outcome.SUCCESS and "ill_typed" not in fine.info


@pytest.mark.parametrize("strict", [True, False])
def test_binding_errors_are_invalid_in_both_modes(strict):
    """Python raises TypeError before the body runs, so nothing ran: invalid either way."""
    runtime = ClassRuntime(Broker, strict_args=strict)
    runtime.reset({})
    missing = runtime.call({"name": "get_quote", "arguments": {}})
    unknown = runtime.call({"name": "get_quote", "arguments": {"stock_id": 1, "venue": "x"}})
    assert missing.outcome is Outcome.INVALID and "stock_id" in missing.observation["error"]
    assert unknown.outcome is Outcome.INVALID and "venue" in unknown.observation["error"]


def test_postponed_annotations_resolve_in_the_env_module(tmp_path):
    from catalog.runtime import load_module

    (tmp_path / "env.py").write_text(
        "from __future__ import annotations\nimport typing as t\n\n"
        "class Shelf:\n    def __init__(self):\n        self.items = {}\n\n"
        "    def tag(self, skus: t.List[str], note: t.Optional[int] = None) -> dict:\n"
        "        return {'n': len(skus)}\n", encoding="utf-8")
    runtime = runtime_for(load_module(tmp_path / "env.py"), "class", "Shelf", strict_args=False)
    runtime.reset({})
    result = runtime.call({"name": "tag", "arguments": {"skus": ["a", 2]}})
    assert result.outcome is Outcome.SUCCESS and result.info["ill_typed"] == "skus[1] must be a string, got 2"
    note = runtime.call({"name": "tag", "arguments": {"skus": ["a"], "note": "5"}})  # `t` resolved in the module
    assert note.info["ill_typed"] == "note must be an integer or null, got '5'"


def test_sql_runtime_takes_the_mode_too():
    from catalog.store import REFERENCE_DIR, read_env

    handle = read_env(REFERENCE_DIR / "bank", reference=True)
    runtime = handle.runtime()
    runtime.reset(handle.state("default"))
    assert runtime.strict_args is True
    result = runtime.call({"name": "get_statement", "arguments": {"account_id": "A001", "limit": "5"}})
    assert result.outcome is Outcome.INVALID and result.info["ill_typed"] == "limit must be an integer, got '5'"
    faithful = SqlRuntime(runtime.env_class, strict_args=False)
    faithful.reset(handle.state("default"))
    ran = faithful.call({"name": "get_statement", "arguments": {"account_id": "A001", "limit": "5"}})
    assert ran.outcome is not Outcome.INVALID and ran.info["ill_typed"] == "limit must be an integer, got '5'"


def test_declared_error_prefixes_and_keys_make_failures():
    failure = FailureConvention(error_prefixes=["Error:"], error_keys=["error_message"])
    assert outcome_of("Error: product not found", failure) is Outcome.FAILURE
    assert outcome_of("Error: product not found") is Outcome.SUCCESS  # undeclared: a string is a result
    assert outcome_of({"error_message": "no"}, failure) is Outcome.FAILURE
    assert outcome_of({"error": "no", "success": True}, failure) is Outcome.SUCCESS
