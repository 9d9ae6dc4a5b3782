"""The spec-only simulator is never wrong: the adversarial corpus, and the cases it found.

Each regression env below is the minimal form of a disagreement the corpus (or review) found
between the simulator and execution; the fixtures are ours, so they run in-process through the
trusted runtime, while the corpus's generated code runs in the sandbox.
"""

from __future__ import annotations

import textwrap
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest

from catalog.runtime import ClassRuntime, load_module
from catalog.state import codec
from catalog.state.jsonable import json_equal
from constraints.extract import extract_spec
from constraints.simulate import SpecSimulator
from sandbox.pool import SandboxPool

from .adversarial import FAILURES, draw_cases, run_corpus

CORPUS_ENVS = 100


def test_the_adversarial_corpus_is_never_wrong() -> None:
    cases = draw_cases(CORPUS_ENVS, seed=11)
    with SandboxPool(2, timeout=5.0) as pool:
        tally = run_corpus(cases, pool)
    assert tally.wrong == 0, tally.wrong_cases[:2]
    assert tally.envs == CORPUS_ENVS and tally.calls > CORPUS_ENVS
    assert tally.exact > 2 * tally.abstained, tally.reasons.most_common(8)


def _runtime(tmp_path: Path, source: str, entry: str = "Env") -> tuple[ClassRuntime, SpecSimulator]:
    source = textwrap.dedent(source)
    path = tmp_path / "env.py"
    path.write_text(source)
    runtime = ClassRuntime(getattr(load_module(path), entry), failure_exceptions=FAILURES)
    return runtime, SpecSimulator(extract_spec(source, "class", entry, failure_exceptions=FAILURES))


def _check(runtime: ClassRuntime, simulator: SpecSimulator, state: dict[str, Any], calls: list[dict[str, Any]]) -> list[str]:
    """Run calls; every prediction must be exact or an abstention. Returns 'exact'/'abstained' per call."""
    runtime.reset({name: codec.encode(value) for name, value in state.items()})
    verdicts = []
    for action in calls:
        before = runtime.snapshot(hidden=True)
        prediction = simulator.predict(before, action)
        result = runtime.call(action)
        if prediction.abstained:
            verdicts.append("abstained")
            continue
        assert json_equal(prediction.observation, result.observation), (action, prediction, result)
        assert prediction.delta == result.delta, (action, prediction.delta, result.delta)
        verdicts.append("exact")
    return verdicts


ENV = """
    from decimal import Decimal

    SEEN = []


    class Env:
        def __init__(self):
            self.orders = {}
            self.users = {}
            self.log = []
            self.tags = set()

        def find(self, oid: int):
            if oid not in self.orders:
                return {"error": f"Order {oid} not found"}
            return self.orders[oid]

        def bump(self, oid: int):
            items = self.log
            items += [oid]
            return len(self.log)

        def pick(self, uid: str):
            self.current = self.users[uid]
            self.current["visits"] = self.current.get("visits", 0) + 1
            return {"ok": True}

        def tag_text(self):
            return ", ".join(self.tags)

        def remember(self, tag: str, into=[]):
            into.append(tag)
            return len(into)

        def half(self, qty: int, /):
            return qty / 2

        def price(self, oid: int):
            total = self.orders[oid]["price"] * 3
            return f"{total}"

        def positive(self):
            return any(1 / x > 0 for x in self.counts)

        def late(self):
            later = (n + self.offset for n in range(2))
            self.offset = 100
            return list(later)

        def same(self, tag: str):
            other = "a"
            return tag is other

        def seen(self, tag: str):
            SEEN.append(tag)
            return len(SEEN)

        def unbound(self, oid: int):
            if oid > 1:
                label = "big"
            return label

        def close(self, oid: int):
            self.orders[oid]["status"] = "closed"
            raise ValueError("closed too early")
"""
STATE: dict[str, Any] = {"orders": {7: {"price": Decimal("1.10"), "status": "open"}}, "users": {"u1": {"name": "ann"}},
         "log": [], "tags": {"b", "a"}, "counts": [1, 0], "offset": 1}


def test_int_keys_are_found_as_in_python(tmp_path: Path) -> None:
    """The original bug: int keys came back as str and the simulator answered 'not found'."""
    runtime, simulator = _runtime(tmp_path, ENV)
    assert _check(runtime, simulator, STATE, [{"name": "find", "arguments": {"oid": 7}},
                                              {"name": "find", "arguments": {"oid": 8}},
                                              {"name": "price", "arguments": {"oid": 7}}]) == ["exact"] * 3


def test_generators_are_lazy_and_read_the_scope_when_consumed(tmp_path: Path) -> None:
    runtime, simulator = _runtime(tmp_path, ENV)
    assert _check(runtime, simulator, STATE, [{"name": "positive", "arguments": {}},
                                              {"name": "late", "arguments": {}}]) == ["exact", "exact"]


def test_augmented_assignment_extends_the_list_every_alias_sees(tmp_path: Path) -> None:
    runtime, simulator = _runtime(tmp_path, ENV)
    assert _check(runtime, simulator, STATE, [{"name": "bump", "arguments": {"oid": 1}}]) == ["exact"]


def test_an_attribute_that_aliases_a_record_is_encoded_as_a_reference(tmp_path: Path) -> None:
    runtime, simulator = _runtime(tmp_path, ENV)
    verdicts = _check(runtime, simulator, STATE, [{"name": "pick", "arguments": {"uid": "u1"}},
                                                  {"name": "pick", "arguments": {"uid": "u1"}}])
    assert verdicts == ["exact", "exact"]


@pytest.mark.parametrize("action", [
    {"name": "tag_text", "arguments": {}},  # a set's iteration order is not in the state
    {"name": "remember", "arguments": {"tag": "x"}},  # a mutable default persists between calls
    {"name": "half", "arguments": {"qty": 3}},  # a positional-only parameter passed by name does not bind
    {"name": "same", "arguments": {"tag": "a"}},  # identity of strs depends on interning
    {"name": "seen", "arguments": {"tag": "a"}},  # module-level state changed by calls
    {"name": "unbound", "arguments": {"oid": 0}},  # UnboundLocalError, not a module name
])
def test_what_python_decides_outside_the_state_is_abstained(tmp_path: Path, action: dict[str, Any]) -> None:
    runtime, simulator = _runtime(tmp_path, ENV)
    assert _check(runtime, simulator, STATE, [action]) == ["abstained"]


def test_a_failure_keeps_what_the_class_wrote_before_raising(tmp_path: Path) -> None:
    runtime, simulator = _runtime(tmp_path, ENV)
    assert _check(runtime, simulator, STATE, [{"name": "close", "arguments": {"oid": 7}}]) == ["exact"]


def test_an_env_that_changes_the_decimal_context_is_abstained_on(tmp_path: Path) -> None:
    """The context is interpreter-wide: one call's change alters later calls' Decimal results."""
    runtime, simulator = _runtime(tmp_path, """
        from decimal import Decimal, getcontext


        class Env:
            def __init__(self):
                self.total = Decimal(1)

            def precise(self):
                getcontext().prec = 3
                return "set"

            def third(self):
                return str(self.total / 3)
    """)
    calls = [{"name": "precise", "arguments": {}}, {"name": "third", "arguments": {}}]
    with localcontext():  # the fixture runs in this process: its change must not outlive the test
        assert _check(runtime, simulator, {"total": Decimal(1)}, calls) == ["abstained", "abstained"]
