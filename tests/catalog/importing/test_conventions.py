"""Importing envs written in the four conventions, package paths, failure conventions, allowed modules.

The fixtures under tests/fixtures/external/conventions/ are the project's own, written for these
tests in the public conventions' style. Imports the CLI would make go through the sandbox; the
forced-convention variants use the in-process check (trusted: the project wrote these files).
"""

from __future__ import annotations

import ast
import functools
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cli
from catalog.importing.failures import infer_failure
from catalog.importing.importer import ImportProblem, LoadCheck, import_env
from catalog.models import FailureConvention, Outcome
from catalog.runtime import outcome_of
from catalog.state.codec import readable
from catalog.store import Catalog, EnvHandle
from sandbox.loadcheck import sandbox_load_check
from sandbox.pool import Job, JobResult, SandboxPool

CONVENTIONS = Path(__file__).resolve().parents[2] / "fixtures" / "external" / "conventions"
BANK = CONVENTIONS / "bank_class" / "bank_env.py"
AIRLINE = CONVENTIONS / "airline_tools" / "airline" / "tools" / "__init__.py"
SHOP = CONVENTIONS / "shop_toolkit" / "shop_tools.py"
LIBRARY = CONVENTIONS / "library_functions" / "library.py"
CORNER = CONVENTIONS / "pkgpath" / "src" / "shoppkg" / "envs" / "shop.py"
SETTINGS = CONVENTIONS / "settings_yaml" / "settings_env.py"

CASES = {
    "class": (BANK, [CONVENTIONS / "bank_class" / "bank_scenario.json"], "retail-bank",
              ["get_balance", "deposit", "transfer", "freeze", "interest_quote", "describe"]),
    "tool_classes": (AIRLINE, [CONVENTIONS / "airline_tools" / "airline" / "data"], "airline",
                     ["list_flights", "get_reservation", "book_flight", "cancel_reservation"]),
    "toolkit": (SHOP, [CONVENTIONS / "shop_toolkit" / "shop_db.json"], "tea-shop",
                ["get_product", "find_products", "place_order", "order_total", "cancel_order"]),
    "functions": (LIBRARY, [], "lending", ["find_books", "borrow", "give_back"]),
}


def _airline_tools() -> list[Any]:
    """The airline fixture's tool classes, imported directly (the project's own code, for comparison)."""
    sys.path.insert(0, str(CONVENTIONS / "airline_tools"))
    try:
        from airline.tools import ALL_TOOLS
    finally:
        sys.path.remove(str(CONVENTIONS / "airline_tools"))
    return list(ALL_TOOLS)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    """One sandbox for the module's imports and runs (a worker per env version, one fork server)."""
    with SandboxPool(2) as running:
        yield running


def sandboxed(pool: SandboxPool) -> LoadCheck:
    """The CLI's load check (the module's code runs only in the sandbox), on the shared pool."""
    return functools.partial(sandbox_load_check, pool=pool)


def run(pool: SandboxPool, handle: EnvHandle, state: str, calls: list[tuple[str, dict[str, Any]]]) -> JobResult:
    """Calls in order from a named state, in the sandbox, with the state after the last one."""
    actions = [{"name": name, "arguments": arguments} for name, arguments in calls]
    result = pool.run(Job.for_env(handle, actions, state_name=state, snapshot=True))
    assert result.event is None, result.event
    return result


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, pool: SandboxPool) -> Catalog:
    """All four fixtures imported as the CLI does it: detected, and checked in the sandbox."""
    catalog = Catalog(tmp_path_factory.mktemp("catalog"))
    for path, configs, env_id, _ in CASES.values():
        import_env(path, catalog, configs=configs, env_id=env_id, check=sandboxed(pool))
    return catalog


@pytest.mark.parametrize("convention", list(CASES))
def test_each_convention_is_detected_with_its_tools(imported: Catalog, convention: str) -> None:
    _, _, env_id, tools = CASES[convention]
    manifest = imported.get(env_id).manifest
    assert manifest.convention == convention
    assert [t.name for t in manifest.tools] == tools
    assert manifest.strict_args is False


@pytest.mark.parametrize("convention", list(CASES))
def test_forcing_the_right_convention_gives_the_same_env(tmp_path: Path, imported: Catalog, convention: str) -> None:
    path, configs, env_id, _ = CASES[convention]
    forced = import_env(path, Catalog(tmp_path), configs=configs, env_id=env_id, convention=convention)  # type: ignore[arg-type]
    assert forced.handle.manifest.tools == imported.get(env_id).manifest.tools
    assert forced.handle.manifest.entry == imported.get(env_id).manifest.entry


def test_tool_schemas_come_from_the_code(imported: Catalog) -> None:
    airline = imported.get("airline").manifest
    assert [t.openai_schema() for t in airline.tools] == [tool.get_info() for tool in _airline_tools()]
    shop = imported.get("tea-shop").manifest
    assert shop.tool("place_order").parameters["properties"]["sku"]["type"] == "integer"
    assert shop.tool("get_product").description == "Get a product by its SKU."
    assert "tool_types" not in [t.name for t in shop.tools]  # a public method without the tool decorator
    library = imported.get("lending").manifest
    assert library.tool("give_back").parameters["required"] == ["member_id", "book"]
    assert library.tool("give_back").parameters["properties"]["days_late"]["default"] == 0


def test_airline_calls_in_the_sandbox_match_the_original_code(imported: Catalog, pool: SandboxPool) -> None:
    handle = imported.get("airline")
    data_dir = CONVENTIONS / "airline_tools" / "airline" / "data"
    data = {p.stem: json.loads(p.read_text()) for p in sorted(data_dir.glob("*.json"))}
    by_name = {tool.get_info()["function"]["name"]: tool for tool in _airline_tools()}
    calls = [("book_flight", {"user_id": "mia_li", "flight_number": "HAT003", "seats": 2}),
             ("book_flight", {"user_id": "noah_kim", "flight_number": "HAT001"}),
             ("cancel_reservation", {"reservation_id": "R100"}),
             ("cancel_reservation", {"reservation_id": "R100"}),
             ("list_flights", {"origin": "JFK", "destination": "SFO"})]
    result = run(pool, handle, "data", calls)
    for (name, arguments), call in zip(calls, result.calls, strict=True):
        expected = by_name[name].invoke(data, **arguments)
        assert call.observation == expected
        assert call.outcome == ("failure" if expected.startswith("Error:") else "success")
    assert result.calls[-1].state == data


def test_toolkit_and_functions_run_in_the_sandbox(imported: Catalog, pool: SandboxPool) -> None:
    shop = run(pool, imported.get("tea-shop"), "shop_db", [
        ("place_order", {"order_id": "O2", "customer": "bo", "sku": 101, "quantity": 3}),
        ("place_order", {"order_id": "O3", "customer": "bo", "sku": 102, "quantity": 1}),
        ("tool_types", {}),
        ("order_total", {"order_id": "O1"})])
    placed, refused, hidden, total = shop.calls
    assert placed.outcome == "success" and readable(placed.observation)["status"] == "placed"
    assert refused.outcome == "failure" and "Cannot order 1 of 102" in refused.observation["error"]
    assert total.observation == "25.00"
    assert hidden.outcome == "invalid"  # a public method without the tool decorator is not a tool
    assert total.state is not None
    state = readable(total.state)  # pydantic records and int keys are tagged in the lossless encoding
    assert state["products"]["101"]["stock"] == 1 and set(state["orders"]) == {"O1", "O2"}
    library = run(pool, imported.get("lending"), "empty", [  # no config: the module's own dict is the state
        ("borrow", {"member_id": "m2", "book": 1}),
        ("borrow", {"member_id": "m1", "book": 1}),
        ("give_back", {"member_id": "m1", "book": 2, "days_late": 3}),
        ("find_books", {"genre": "sf"})])
    owes, lent, back, found = library.calls
    assert owes.outcome == "failure" and owes.observation == {"error": "member owes 1.50"}
    assert lent.observation == {"success": True, "loans": [1, 2]}
    assert back.observation == {"success": True, "fees": "0.75"}
    assert found.observation == [1, 3]


@pytest.mark.parametrize(("path", "forced", "expected"), [
    (LIBRARY, "toolkit", r"not the toolkit convention: .*no toolkit class.*; it looks like --convention functions"),
    (BANK, "tool_classes", r"not the tool_classes convention: no tool classes.*--convention class"),
    (SHOP, "functions", r"not the functions convention: no public module-level functions; it looks like --convention toolkit"),
])
def test_a_wrong_convention_forced_is_explained(tmp_path: Path, path: Path, forced: str, expected: str) -> None:
    with pytest.raises(ImportProblem, match=expected):
        import_env(path, Catalog(tmp_path), convention=forced)  # type: ignore[arg-type]


def test_package_path_needs_its_root_and_then_works_in_the_sandbox(tmp_path: Path, pool: SandboxPool) -> None:
    catalog = Catalog(tmp_path / "catalog")
    stock = CONVENTIONS / "pkgpath" / "stock.json"
    with pytest.raises(ImportProblem, match=r"`shoppkg` is not installed and looks like the package shop.py is in "
                                            r".*pass --package-root .*pkgpath/src"):
        import_env(CORNER, catalog, configs=[stock], check=sandboxed(pool))
    report = import_env(CORNER, catalog, configs=[stock], check=sandboxed(pool),
                        package_root=CONVENTIONS / "pkgpath" / "src")
    assert report.files == ["env.py", "shoppkg/__init__.py", "shoppkg/tools/__init__.py",
                            "shoppkg/tools/inventory.py", "shoppkg/tools/pricing.py"]
    handle = report.handle
    assert "from shoppkg.tools.pricing import price_of" in handle.source()  # the relative import, made absolute
    sold, too_many = run(pool, handle, "stock", [("sell", {"sku": 1, "quantity": 2}),
                                                  ("sell", {"sku": 2, "quantity": 41})]).calls
    assert sold.observation == {"success": True, "total": "6.40"}
    assert too_many.outcome == "failure" and "not enough of 2" in too_many.observation["error"]
    # naming the package folder itself works too
    again = import_env(CORNER, Catalog(tmp_path / "other"), configs=[stock],
                       package_root=CONVENTIONS / "pkgpath" / "src" / "shoppkg")
    assert again.files == report.files


def _copy_pkg(tmp_path: Path) -> Path:
    target = tmp_path / "src"
    shutil.copytree(CONVENTIONS / "pkgpath" / "src", target)
    return target


def test_package_root_messages_tell_the_cases_apart(tmp_path: Path, pool: SandboxPool) -> None:
    src = _copy_pkg(tmp_path)
    entry = src / "shoppkg" / "envs" / "shop.py"
    (src / "shoppkg" / "tools" / "inventory.py").rename(src / "shoppkg" / "tools" / "stock.py")
    with pytest.raises(ImportProblem, match=r"`shoppkg.tools.inventory` is not found under the package root .*src "
                                            r"\(no shoppkg/tools/inventory.py"):
        import_env(entry, Catalog(tmp_path / "c1"), package_root=src)
    (src / "shoppkg" / "tools" / "stock.py").rename(src / "shoppkg" / "tools" / "inventory.py")
    (src / "shoppkg" / "tools" / "pricing.py").write_text("PRICES = {1: 1 / 0}\n\ndef price_of(sku, n):\n    return 0\n")
    with pytest.raises(ImportProblem, match=r"imports a module that fails \(shoppkg/tools/pricing.py\): "
                                            r"ZeroDivisionError: division by zero"):
        import_env(entry, Catalog(tmp_path / "c2"), package_root=src, check=sandboxed(pool))
    (src / "shoppkg" / "tools" / "pricing.py").write_text("def price_of(sku, n)\n    return 0\n")
    with pytest.raises(ImportProblem, match=r"imports a module that fails: shoppkg/tools/pricing.py: SyntaxError"):
        import_env(entry, Catalog(tmp_path / "c3"), package_root=src)
    needs = tmp_path / "needs.py"
    needs.write_text("import surely_absent_pkg_xyz\n\nclass A:\n    def go(self):\n        return {}\n")
    with pytest.raises(ImportProblem, match=r"`surely_absent_pkg_xyz` is not installed \(pip install surely_absent_pkg_xyz\)"):
        import_env(needs, Catalog(tmp_path / "c4"))


def test_an_allowed_installed_module_runs_in_the_sandbox_for_that_env_only(tmp_path: Path, pool: SandboxPool) -> None:
    pytest.importorskip("yaml")
    catalog = Catalog(tmp_path)
    config = [SETTINGS.parent / "settings.json"]
    with pytest.raises(ImportProblem, match=r"does not allow: import yaml .*--allow-module yaml"):
        import_env(SETTINGS, catalog, configs=config, check=sandboxed(pool))
    with pytest.raises(ImportProblem, match=r"^--allow-module subprocess: the sandbox never allows it"):
        import_env(SETTINGS, catalog, configs=config, allow_modules=["subprocess"], check=sandboxed(pool))
    with pytest.raises(ImportProblem, match=r"^--allow-module surely_absent_pkg_xyz: no installed module"):
        import_env(SETTINGS, catalog, configs=config, allow_modules=["surely_absent_pkg_xyz"])
    report = import_env(SETTINGS, catalog, configs=config, check=sandboxed(pool), allow_modules=["yaml"])
    handle = report.handle
    assert handle.manifest.allow_modules == ["yaml"]
    job = Job.for_env(handle, [{"name": "set_value", "arguments": {"key": "lang", "value": "fr"}},
                               {"name": "export", "arguments": {}}], state_name="settings")
    allowed = pool.run(job)
    assert allowed.event is None
    assert allowed.calls[1].observation == "lang: fr\ntheme: dark\n"
    job.allow_modules = []  # the same folder without the allowance: refused, in a worker of its own
    refused = pool.run(job)
    assert refused.event is not None and refused.event.startswith("forbidden: import yaml")


def test_failure_conventions_are_read_from_the_syntax_tree(imported: Catalog) -> None:
    bank = imported.get("retail-bank").manifest
    assert bank.failure is not None
    # KeyError and ValueError only appear in a comment and in strings: they do not count
    assert bank.failure.exceptions == ["InsufficientFunds", "PermissionError"]
    assert bank.failure_exceptions == bank.failure.exceptions
    assert bank.failure.error_keys == ["error", "success"]
    airline = imported.get("airline").manifest
    assert airline.failure == FailureConvention(exceptions=[], error_prefixes=["Error:"], error_keys=[])
    assert imported.get("tea-shop").manifest.failure.exceptions == ["ValueError"]  # type: ignore[union-attr]
    source = ("class A:\n    def t(self):\n        # raise KeyError('x')\n        s = 'raise OSError()'\n"
              "        if s:\n            return f'Failed: {s}'\n        return 'Error - not a prefix'\n")
    inferred = infer_failure([ast.parse(source)])
    assert inferred == FailureConvention(exceptions=[], error_prefixes=["Failed:"], error_keys=[])


def test_declared_failure_conventions_are_added_and_counted(tmp_path: Path) -> None:
    path, configs, _, _ = CASES["tool_classes"]
    report = import_env(path, Catalog(tmp_path), configs=configs, env_id="air", error_prefixes=["Sorry,"],
                        failure_exceptions=["LookupError"])
    failure = report.handle.manifest.failure
    assert failure is not None and failure.error_prefixes == ["Error:", "Sorry,"]
    assert failure.exceptions == ["LookupError"]
    assert outcome_of("Sorry, no seats", failure) is Outcome.FAILURE
    assert outcome_of("Error: reservation not found", failure) is Outcome.FAILURE
    assert outcome_of("Reservation R100 cancelled", failure) is Outcome.SUCCESS
    assert outcome_of("Error: x", None) is Outcome.SUCCESS  # without a declared prefix a string is a result


def test_cli_import_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, configs, _, _ = CASES["tool_classes"]
    root = str(tmp_path / "catalog")
    status = cli.main(["catalog", "import", str(path), "--config", str(configs[0]), "--id", "air", "--catalog", root,
                       "--convention", "tool_classes", "--error-prefix", "Sorry,", "--json", "--trusted"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0 and out["convention"] == "tool_classes" and out["failure"]["error_prefixes"] == ["Error:", "Sorry,"]
    assert cli.main(["catalog", "show", "air", "--catalog", root]) == 0
    shown = capsys.readouterr().out
    assert "convention: tool_classes, entry ALL_TOOLS" in shown
    assert "failure: returned strings starting with: 'Error:', 'Sorry,'" in shown
    status = cli.main(["import", str(SETTINGS), "--allow-module", "surely_absent_pkg_xyz", "--catalog", root])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1 and "no installed module 'surely_absent_pkg_xyz'" in err[0]
