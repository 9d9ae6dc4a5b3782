"""Imported envs behave exactly as their own code: replay in the sandbox vs the original run directly.

For each of the four conventions, the project's own fixture (tests/fixtures/external/conventions/,
written for these tests in the public conventions' style) is imported as the CLI imports it (load
check in the sandbox), a scripted call sequence is replayed in the sandbox, and the same calls are
made on the original code run directly in this process (the fixtures are the project's own code).
Every observation and every state after a call must be identical in the lossless encoding: int
keys, Decimals, sets and pydantic objects included, and in the same key order.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from catalog.importing.importer import import_env
from catalog.models import Outcome
from catalog.state import codec
from catalog.store import Catalog
from sandbox.loadcheck import sandbox_load_check
from sandbox.pool import SandboxPool
from verifier.replay import replay

CONVENTIONS = Path(__file__).resolve().parents[1] / "fixtures" / "external" / "conventions"

Calls = list[tuple[str, dict[str, Any]]]

SCRIPTS: dict[str, Calls] = {
    "class": [
        ("get_balance", {"account": 1001}), ("get_balance", {"account": 9}), ("deposit", {"account": 1002, "amount": "9.90"}),
        ("transfer", {"source": 1001, "target": 1003, "amount": "100.00"}),
        ("transfer", {"source": 1003, "target": 1001, "amount": "5000.00"}), ("freeze", {"account": 1002}),
        ("deposit", {"account": 1002, "amount": "1.00"}), ("interest_quote", {"account": 1001, "years": 3}),
        ("interest_quote", {"account": 1001, "years": 3}), ("describe", {}), ("get_balance", {"account": "1001"}),
    ],
    "tool_classes": [
        ("list_flights", {"origin": "JFK", "destination": "SFO"}), ("get_reservation", {"reservation_id": "R100"}),
        ("book_flight", {"user_id": "u1", "flight_number": "UA1", "seats": 2}),
        ("book_flight", {"user_id": "nobody", "flight_number": "UA1"}),
        ("cancel_reservation", {"reservation_id": "R100"}), ("cancel_reservation", {"reservation_id": "R100"}),
        ("list_flights", {"origin": "JFK", "destination": "SFO"}),
    ],
    "toolkit": [
        ("get_product", {"sku": 101}), ("find_products", {"tag": "green"}),
        ("place_order", {"order_id": "O2", "customer": "bo", "sku": 101, "quantity": 3}),
        ("place_order", {"order_id": "O3", "customer": "bo", "sku": 102, "quantity": 1}),
        ("order_total", {"order_id": "O2"}), ("order_total", {"order_id": "O2"}), ("cancel_order", {"order_id": "O2"}),
        ("get_product", {"sku": 999}), ("order_total", {"order_id": "O1"}),
    ],
    "functions": [
        ("find_books", {"genre": "sf"}), ("borrow", {"member_id": "m2", "book": 1}),
        ("borrow", {"member_id": "m1", "book": 1}), ("borrow", {"member_id": "m1", "book": 3}),
        ("give_back", {"member_id": "m1", "book": 2, "days_late": 3}), ("give_back", {"member_id": "m1", "book": 2}),
        ("find_books", {"genre": "classic"}),
    ],
}


def _load(path: Path, name: str, root: Path) -> ModuleType:
    """Import a fixture file directly (fresh module state) with its folder importable."""
    sys.path.insert(0, str(root))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(root))


class Direct:
    """The original code run directly: `call(name, arguments)` and `state()` as the code holds it."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any], state: Callable[[], dict[str, Any]],
                 types: codec.TypeNames) -> None:
        self.call, self.state, self.types = call, state, types


def _bank() -> Direct:
    module = _load(CONVENTIONS / "bank_class" / "bank_env.py", "fidelity_bank", CONVENTIONS / "bank_class")
    env = module.BankAPI()
    env._load_scenario(json.loads((CONVENTIONS / "bank_class" / "bank_scenario.json").read_text()))
    return Direct(lambda name, args: getattr(env, name)(**args),
                  lambda: {k: v for k, v in vars(env).items() if not k.startswith("_")},
                  codec.TypeNames({module.__name__: "env"}))


def _airline() -> Direct:
    root = CONVENTIONS / "airline_tools"
    sys.path.insert(0, str(root))
    try:
        from airline.tools import ALL_TOOLS
    finally:
        sys.path.remove(str(root))
    data = {p.stem: json.loads(p.read_text()) for p in sorted((root / "airline" / "data").glob("*.json"))}
    tools = {tool.get_info()["function"]["name"]: tool for tool in ALL_TOOLS}
    return Direct(lambda name, args: tools[name].invoke(data, **args), lambda: data, codec.TypeNames())


def _shop() -> Direct:
    folder = CONVENTIONS / "shop_toolkit"
    module = _load(folder / "shop_tools.py", "fidelity_shop", folder)
    db = module.ShopDB.model_validate(json.loads((folder / "shop_db.json").read_text()))
    toolkit = module.ShopTools(db)
    return Direct(lambda name, args: getattr(toolkit, name)(**args),
                  lambda: {name: getattr(db, name) for name in type(db).model_fields},
                  codec.TypeNames({module.__name__: "env"}))


def _library() -> Direct:
    folder = CONVENTIONS / "library_functions"
    module = _load(folder / "library.py", "fidelity_library", folder)
    return Direct(lambda name, args: getattr(module, name)(**args), lambda: module.LIBRARY,
                  codec.TypeNames({module.__name__: "env"}))


CASES: dict[str, tuple[Path, list[Path], str, Callable[[], Direct]]] = {
    "class": (CONVENTIONS / "bank_class" / "bank_env.py", [CONVENTIONS / "bank_class" / "bank_scenario.json"],
              "retail-bank", _bank),
    "tool_classes": (CONVENTIONS / "airline_tools" / "airline" / "tools" / "__init__.py",
                     [CONVENTIONS / "airline_tools" / "airline" / "data"], "airline", _airline),
    "toolkit": (CONVENTIONS / "shop_toolkit" / "shop_tools.py", [CONVENTIONS / "shop_toolkit" / "shop_db.json"],
                "tea-shop", _shop),
    "functions": (CONVENTIONS / "library_functions" / "library.py", [], "lending", _library),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    """The four fixtures imported as the CLI does it (detected, load-checked in the sandbox)."""
    catalog = Catalog(tmp_path_factory.mktemp("catalog"))
    with SandboxPool(1) as pool:
        for path, configs, env_id, _ in CASES.values():
            import_env(path, catalog, configs=configs, env_id=env_id, check=functools.partial(sandbox_load_check, pool=pool))
    yield catalog


@pytest.mark.parametrize("convention", list(CASES))
def test_replay_in_the_sandbox_matches_the_original_code(imported: Catalog, convention: str) -> None:
    _, _, env_id, direct_of = CASES[convention]
    handle = imported.get(env_id)
    script = SCRIPTS[convention]
    result = replay(handle, None, [{"name": n, "arguments": a} for n, a in script], catalog=imported, states=True)
    direct = direct_of()
    assert len(result.steps) == len(script)
    for (name, arguments), step in zip(script, result.steps, strict=True):
        try:
            expected: Any = codec.encode(direct.call(name, copy.deepcopy(arguments)), direct.types)
        except Exception as exc:  # the original raised: the replayed step must say which exception
            assert step.result.outcome in (Outcome.CRASH, Outcome.FAILURE), (name, arguments, exc)
            assert step.result.info.get("exception") == type(exc).__name__, (name, arguments)
        else:
            assert json.dumps(step.result.observation) == json.dumps(expected), (name, arguments)
        state = codec.encode(direct.state(), direct.types)
        assert step.result.state is not None
        # text equality: same values, same types, same key order
        assert json.dumps(step.result.state) == json.dumps(state), (name, arguments)
