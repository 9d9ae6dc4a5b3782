"""verify on envs written elsewhere: each planted quirk is reported with the call that shows it, and a clean env
in the same style (int-keyed dicts, sets, error strings declared as failures, a List[str] parameter) gives none.

The fixtures are imported as a user would (sandboxed load check) and recorded as imported envs are: faithful
argument checking (`strict_args: false`) and their failure convention.
"""

import decimal
import json
import random
import types
from pathlib import Path

import pytest

from catalog.importing.importer import import_class_env
from catalog.models import FailureConvention
from catalog.runtime import load_module
from catalog.store import Catalog
from sandbox.globalstate import EnvGlobals, changed, fingerprint
from sandbox.pool import SandboxPool
from verifier.gate.run import verify_env

QUIRKS = Path(__file__).resolve().parents[1] / "fixtures" / "external" / "quirks"
FIXTURES = {"clean_pantry": ("pantry.json", ["Error:"]), "wall_clock": ("stock.json", []),
            "rng_read": ("trivia.json", []), "hidden_cache": ("prices.json", []),
            "decimal_precision": ("balances.json", []), "typed_crash": ("reviews.json", []),
            "error_strings": ("wallet.json", ["Error:"])}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(2, timeout=5.0) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def reports(tmp_path_factory, pool):
    """verify of every quirk fixture, computed once (each takes a few seconds)."""
    catalog = Catalog(tmp_path_factory.mktemp("quirks"))
    out = {}
    for name, (config, prefixes) in FIXTURES.items():
        # Fixtures this project wrote: the import's load check may run them here (the trusted path);
        # verify itself runs them in the sandbox as always.
        handle = import_class_env(QUIRKS / f"{name}.py", catalog, configs=[QUIRKS / config],
                                  env_id=name.replace("_", "-")).handle
        manifest = handle.manifest.model_copy(update={"strict_args": False, "failure": FailureConvention(
            exceptions=list(handle.manifest.failure_exceptions), error_prefixes=prefixes)})
        (handle.path / "env.json").write_text(json.dumps(manifest.model_dump(mode="json"), indent=1), encoding="utf-8")
        report = verify_env(catalog.get(handle.id), pool, examples=40, effort=0.2)
        out[name] = {c["name"]: c for c in report.model_dump(mode="json")["checks"]}
    return out


def findings(checks):
    """Checks that failed, minus guard coverage (the guard search is constraints' measurement, not a quirk)."""
    return sorted(name for name, c in checks.items() if not c["ok"] and name != "every_guard_reachable")


def calls(check):
    return [(a["name"], a["arguments"]) for a in check["counterexample"]["actions"]]


def test_clean_env_in_the_same_style_has_no_finding(reports):
    checks = reports["clean_pantry"]
    assert [name for name, c in checks.items() if not c["ok"]] == []  # guards included: zero false alarms
    assert checks["no_crash_on_typed_input"]["ok"]  # add_item(tags: List[str]) is never called with tags=0
    accepted = checks["ill_typed_accepted"]  # information, not a finding: the calls ran as Python runs them
    assert accepted["informational"] and accepted["ok"]
    assert {c["action"]["name"] for c in accepted["counterexample"]["calls"]} >= {"get_item", "set_units"}


def test_wall_clock_is_non_determinism_from_the_clock(reports):
    checks = reports["wall_clock"]
    assert findings(checks) == ["deterministic"]
    assert "cause: clock" in checks["deterministic"]["detail"]
    assert calls(checks["deterministic"])[0][0] == "place_order"


def test_rng_in_a_read_tool_is_non_determinism_from_the_rng(reports):
    checks = reports["rng_read"]
    assert "deterministic" in findings(checks) and "cause: rng" in checks["deterministic"]["detail"]
    # the draw differs 2 times in 3, so shrinking may keep a harmless extra call; the named call is the draw
    assert ("get_question", {"topic": "space"}) in calls(checks["deterministic"])
    assert "(get_question)" in checks["deterministic"]["detail"]


def test_decimal_precision_change_is_an_interpreter_wide_change(reports):
    checks = reports["decimal_precision"]
    assert findings(checks) == ["no_interpreter_wide_change"]
    check = checks["no_interpreter_wide_change"]
    assert "decimal context" in check["detail"] and calls(check)[0][0] == "quote_interest"


def test_exception_on_well_typed_input_is_a_crash_with_a_well_typed_counterexample(reports):
    checks = reports["typed_crash"]
    assert findings(checks) == ["no_crash_on_typed_input"]
    check = checks["no_crash_on_typed_input"]
    assert calls(check) == [("average_rating", {"product_id": 2})] and "ZeroDivisionError" in check["detail"]


def test_error_string_after_a_partial_write_is_a_failure_that_changed_state(reports):
    checks = reports["error_strings"]
    assert findings(checks) == ["failure_changes_nothing"]
    (tool, arguments), = calls(checks["failure_changes_nothing"])
    assert tool == "buy" and arguments["product_id"] in (1, 2)  # a real product: the write happened before the refusal


def test_hidden_cache_write_in_a_read_tool(reports):
    checks = reports["hidden_cache"]
    assert findings(checks) == ["read_tools_keep_hidden_state"]
    check = checks["read_tools_keep_hidden_state"]
    assert calls(check)[0][0] == "get_price" and "_quote_cache" in check["detail"]
    assert checks["hidden_writes"]["informational"] and checks["hidden_writes"]["counterexample"]


def test_undeclared_error_strings_are_reported(tmp_path, pool):
    catalog = Catalog(tmp_path)
    handle = import_class_env(QUIRKS / "clean_pantry.py", catalog, configs=[QUIRKS / "pantry.json"],
                              env_id="pantry").handle
    manifest = handle.manifest.model_copy(update={"strict_args": False, "failure": FailureConvention()})
    (handle.path / "env.json").write_text(json.dumps(manifest.model_dump(mode="json"), indent=1), encoding="utf-8")
    from constraints.completeness import spec_of
    from verifier.gate.properties import PropertySuite

    suite = PropertySuite(catalog.get("pantry"), spec_of(catalog.get("pantry")), pool, examples=30)
    check = suite.errors_signalled_as_failures()
    assert not check.ok and check.counterexample is not None
    assert "declare the env's error prefix" in check.detail and check.detail.split(" returned ")[1].startswith("'Error:")


# --- the worker's fingerprint of interpreter-wide state --------------------------------------
def test_fingerprint_sees_each_kind_of_interpreter_wide_change(tmp_path):
    (tmp_path / "env.py").write_text(
        "CACHE = {}\n\nclass Counter:\n    created = 0\n\n    def bump(self):\n        Counter.created += 1\n\n"
        "    def remember(self, key):\n        CACHE[key] = 1\n", encoding="utf-8")
    module = load_module(tmp_path / "env.py", "quirk_probe_counter")
    env = EnvGlobals(module, tmp_path)
    instance = module.Counter()
    saved_prec, saved_random = decimal.getcontext().prec, random.getstate()
    try:
        cases = [(lambda: None, []), (instance.bump, ["class Counter.created"]),
                 (lambda: instance.remember("k"), ["quirk_probe_counter.CACHE"]),
                 (lambda: setattr(decimal.getcontext(), "prec", 5), ["decimal context"]),
                 (lambda: random.random(), ["random module state"]),
                 (lambda: decimal.Decimal(1) / decimal.Decimal(3), [])]  # arithmetic sets flags only
        for action, expected in cases:
            before = fingerprint(env)
            action()
            assert changed(before, fingerprint(env)) == expected
    finally:
        decimal.getcontext().prec = saved_prec
        random.setstate(saved_random)
    assert isinstance(module, types.ModuleType)
