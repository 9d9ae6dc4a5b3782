"""Importing externally written class-based environments into the catalog."""

from pathlib import Path

import pytest

from catalog.importing.importer import ImportProblem, import_class_env
from catalog.store import Catalog
from constraints.completeness import completeness
from sandbox.calls import SandboxCallRunner
from sandbox.loadcheck import sandbox_load_check
from sandbox.pool import SandboxPool
from sandbox.session import open_runtime


def sandboxed_import(path, catalog, **options):
    """The import as the CLI does it: the module is loaded and checked only in the sandbox."""
    return import_class_env(path, catalog, check=sandbox_load_check, **options)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "external"


def test_envscaler_class_with_a_scenario_record(tmp_path):
    catalog = Catalog(tmp_path)
    report = sandboxed_import(FIXTURES / "bookshop" / "bookshop_env.py", catalog,
                              configs=[FIXTURES / "bookshop" / "shop_config.json"])
    handle = catalog.get("bookshop-system")
    assert handle.manifest.kind == "class" and handle.state_names() == ["shop_config"]
    assert [t.name for t in handle.manifest.tools] == ["get_book", "list_books", "order_book", "cancel_order"]
    order = handle.manifest.tool("order_book").parameters
    assert order["required"] == ["book_id"] and order["properties"]["book_id"] == {}  # no annotation: any
    runtime = open_runtime(handle)  # imported code: in the sandbox
    runtime.reset(handle.state("shop_config"))
    result = runtime.call({"name": "order_book", "arguments": {"book_id": "b1", "quantity": 2}})
    assert [op.path for op in result.delta] == [("books", "b1", "stock"), ("order_seq",), ("orders", "ord2")]
    assert report.files == ["env.py"]
    with SandboxPool(1) as pool:
        report = completeness(handle, runner=SandboxCallRunner(handle, pool))
    assert report.wrong == 0 and report.steps > 20


def test_load_scenario_class_with_sibling_modules_by_package_path_and_relative_import(tmp_path):
    catalog = Catalog(tmp_path)
    report = sandboxed_import(FIXTURES / "fleet" / "fleetpkg" / "fleet_api.py", catalog, env_id="fleet",
                              configs=[FIXTURES / "fleet" / "scenarios.json"])
    assert report.files == ["env.py", "fleetpkg/__init__.py", "fleetpkg/rules.py", "fleetpkg/units.py"]
    assert report.optional_missing == ["some_telemetry_sdk"] and report.failure_exceptions == ["ValueError"]
    handle = catalog.get("fleet")
    assert handle.state_names() == ["scenarios-1", "scenarios-2"]
    assert "from fleetpkg.rules import check_range" in handle.source()
    runtime = open_runtime(handle)  # imported code: in the sandbox
    runtime.reset(handle.state("scenarios-1"))
    trip = runtime.call({"name": "log_trip", "arguments": {"vehicle_id": "V1", "miles": 10}})
    assert trip.observation == {"logged_km": 16.1, "odometer": 12016.1}
    too_far = runtime.call({"name": "log_trip", "arguments": {"vehicle_id": "V1", "miles": 400}})
    assert too_far.outcome.value == "failure" and "exceeds the range" in too_far.observation["error"]
    with SandboxPool(1) as pool:
        report = completeness(handle, runner=SandboxCallRunner(handle, pool))
    assert report.wrong == 0 and report.guards_triggered == report.guards_total


def test_two_imported_envs_with_same_named_helpers_do_not_mix(tmp_path):
    other = tmp_path / "src" / "fleetpkg"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    (other / "units.py").write_text("def to_km(miles):\n    return 0.0\n")
    (other / "rules.py").write_text("def check_range(km):\n    return None\n")
    (other / "fleet_api.py").write_text((FIXTURES / "fleet" / "fleetpkg" / "fleet_api.py").read_text())
    catalog = Catalog(tmp_path / "catalog")
    sandboxed_import(FIXTURES / "fleet" / "fleetpkg" / "fleet_api.py", catalog, env_id="real")
    sandboxed_import(other / "fleet_api.py", catalog, env_id="fake")
    config = {"vehicles": {"V1": {"plate": "x", "odometer": 0.0, "status": "available"}}}
    results = {}
    for env_id in ("real", "fake", "real"):
        runtime = open_runtime(catalog.get(env_id))
        runtime.reset(config)
        results[env_id] = runtime.call({"name": "log_trip", "arguments": {"vehicle_id": "V1", "miles": 1}}).observation
    assert results["real"]["logged_km"] == 1.6 and results["fake"]["logged_km"] == 0.0


def test_missing_required_package_is_named(tmp_path):
    module = tmp_path / "needs.py"
    module.write_text("import definitely_not_installed_pkg\n\nclass A:\n    def go(self):\n        return {}\n")
    with pytest.raises(ImportProblem, match=r"`definitely_not_installed_pkg` is not installed \(pip install definitely_not_installed_pkg\)"):
        sandboxed_import(module, Catalog(tmp_path / "c"))


def test_ambiguous_or_bad_input_is_explained(tmp_path):
    module = tmp_path / "two.py"
    module.write_text("class A:\n    def go(self):\n        return {}\n\nclass B:\n    def run(self):\n        return {}\n")
    with pytest.raises(ImportProblem, match="pass --class NAME"):
        sandboxed_import(module, Catalog(tmp_path / "c"))
    sandboxed_import(module, Catalog(tmp_path / "c"), class_name="B")
    with pytest.raises(ImportProblem, match="does not load"):
        bad = tmp_path / "bad.json"
        bad.write_text('{"x": 1}')
        crashing = tmp_path / "crash.py"
        crashing.write_text("class C:\n    def __init__(self, config):\n        self.v = config['needed']\n"
                            "    def go(self):\n        return {}\n")
        sandboxed_import(crashing, Catalog(tmp_path / "c"), configs=[bad])
