"""Specs of imported envs in the other three conventions: rewritten into the class they run as, never wrong.

The fixtures are the project's own (tests/fixtures/external/conventions/). Completeness runs
their code in the sandbox (one pool for the module) and compares the spec-only simulator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog.importing.importer import import_env
from catalog.store import Catalog, EnvHandle
from constraints.completeness import CompletenessRun, spec_of
from constraints.extract import extract_spec
from constraints.normalize import class_source
from constraints.simulate import SpecSimulator
from sandbox.calls import SandboxCallRunner
from sandbox.pool import Job, SandboxPool

CONVENTIONS = Path(__file__).resolve().parents[1] / "fixtures" / "external" / "conventions"
FIXTURES = {
    "airline": (CONVENTIONS / "airline_tools" / "airline" / "tools" / "__init__.py",
                [CONVENTIONS / "airline_tools" / "airline" / "data"]),
    "tea-shop": (CONVENTIONS / "shop_toolkit" / "shop_tools.py", [CONVENTIONS / "shop_toolkit" / "shop_db.json"]),
    "lending": (CONVENTIONS / "library_functions" / "library.py", []),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    catalog = Catalog(tmp_path_factory.mktemp("catalog"))
    for env_id, (path, configs) in FIXTURES.items():
        import_env(path, catalog, configs=configs, env_id=env_id)  # the project's own fixtures: checked in-process
    return catalog


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(2) as running:
        yield running


@pytest.mark.parametrize("env_id", list(FIXTURES))
def test_spec_tools_are_the_runtime_tools(imported: Catalog, env_id: str) -> None:
    handle = imported.get(env_id)
    spec = spec_of(handle)
    assert spec.entry == handle.manifest.entry
    assert list(spec.tools) == [t.name for t in handle.manifest.tools]
    for tool in handle.manifest.tools:
        assert {p.name for p in spec.tools[tool.name].params} == set(tool.parameters["properties"])


def _module_state(handle: EnvHandle, pool: SandboxPool) -> None:
    """Add the functions env's own module dict (as the sandbox encodes it) as a state, so calls draw real ids."""
    result = pool.run(Job.for_env(handle, [{"name": "find_books", "arguments": {"genre": "sf"}}],
                                  state_name="empty", snapshot=True))
    assert result.event is None and result.calls[0].state
    (handle.path / "states" / "module.json").write_text(json.dumps(result.calls[0].state), encoding="utf-8")


@pytest.mark.parametrize("env_id", list(FIXTURES))
def test_completeness_is_never_wrong(imported: Catalog, pool: SandboxPool, env_id: str) -> None:
    handle = imported.get(env_id)
    if env_id == "lending":
        _module_state(handle, pool)
    run = CompletenessRun(handle, seed=1, calls_per_tool=6, search_budget=150, runner=SandboxCallRunner(handle, pool))
    report = run.run()
    assert report.wrong == 0, report.wrong_examples
    assert report.steps > 20 and not report.sandbox_events
    if env_id in ("airline", "lending"):
        assert report.exact > 0, report.top_abstain_reasons
    if env_id == "lending":  # calls on the module's own records reach the guards past "unknown member"
        assert report.guards_triggered >= 4, report.untriggered_guards


TOOLS = '''
import json

class Peek:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        users = data["users"]
        if user_id not in users:
            return "Error: no such user"
        return users[user_id]["name"]

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "peek", "description": "A user's name."}}

class Whole:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        if user_id == "x":
            return "Error: x"
        return helper(data, user_id)

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "whole"}}

class Getter:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        return str(data.get("users", {}).get(user_id))

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "getter"}}

class Loop:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        return ",".join(k for k in data)

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "loop"}}

class Rebind:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        if user_id == "a":
            data = {"users": {}}
        return str(len(data["users"]))

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "rebind"}}

class Keyed:
    @staticmethod
    def invoke(data, user_id: str) -> str:
        return str(len(data[user_id]))

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "keyed"}}

def helper(data, user_id):
    data["users"].pop(user_id, None)
    return "gone"

TOOLS = [Peek, Whole, Getter, Loop, Rebind, Keyed]
'''
STATE = {"users": {"a": {"name": "Ada"}, "b": {"name": "Bo"}}}


def _predict(spec: Any, tool: str, **arguments: Any) -> Any:
    return SpecSimulator(spec).predict(dict(STATE), {"name": tool, "arguments": arguments})


def test_tool_classes_rewrite_only_what_keeps_its_meaning() -> None:
    normalized = class_source(TOOLS, "tool_classes", "TOOLS")
    assert "def peek(self, user_id: str)" in normalized.source and 'self.users' in normalized.source
    assert set(normalized.marked) == {"whole", "getter", "loop", "rebind", "keyed"}
    spec = extract_spec(TOOLS, "class", "TOOLS", convention="tool_classes")
    assert list(spec.tools) == ["peek", "whole", "getter", "loop", "rebind", "keyed"]
    assert _predict(spec, "peek", user_id="a").observation == "Ada"
    assert _predict(spec, "peek", user_id="z").observation == "Error: no such user"
    assert _predict(spec, "whole", user_id="x").observation == "Error: x"  # before the unfollowed use: exact
    for tool in ("whole", "getter", "loop", "rebind", "keyed"):
        assert _predict(spec, tool, user_id="a").abstained, tool
    # the helper's write through the whole dict is not followed: the write set says it is unknown
    assert spec.tools["whole"].inferred_kind == "write" and any(e.unfollowed for e in spec.tools["whole"].effects)


FUNCTIONS = '''
STORE = {"users": {"a": {"name": "Ada"}, "b": {"name": "Bo"}}}


def _find(user_id):
    return STORE["users"].get(user_id)


def name_of(user_id: str) -> str:
    user = _find(user_id)
    if user is None:
        return "Error: no such user"
    return user["name"]


def via_get(user_id: str) -> str:
    return str(STORE.get("users"))


def passes_function(user_id: str) -> str:
    return str(sorted(STORE["users"], key=_find))


def rebinds(user_id: str) -> str:
    global STORE
    STORE = {}
    return "ok"
'''


def test_functions_become_methods_and_global_dict_uses_abstain() -> None:
    normalized = class_source(FUNCTIONS, "functions", "STORE")
    assert "self._find(user_id)" in normalized.source and 'self.users.get(user_id)' in normalized.source
    assert set(normalized.marked) == {"via_get", "passes_function", "rebinds"}
    spec = extract_spec(FUNCTIONS, "class", "STORE", convention="functions")
    assert list(spec.tools) == ["name_of", "via_get", "passes_function", "rebinds"]
    assert _predict(spec, "name_of", user_id="b").observation == "Bo"
    assert _predict(spec, "name_of", user_id="q").observation == "Error: no such user"
    for tool in ("via_get", "passes_function", "rebinds"):
        assert _predict(spec, tool, user_id="a").abstained, tool


TOOLKIT = '''
from pydantic import BaseModel


def is_tool(function):
    return function


def wraps_it(function):
    def inner(*args):
        return function(*args)
    return inner


class DB(BaseModel):
    users: dict


class Tools:
    def __init__(self, db: DB) -> None:
        self.db = db

    @is_tool
    def name_of(self, user_id: str) -> str:
        if user_id not in self.db.users:
            raise ValueError("no such user")
        return self.db.users[user_id]["name"]

    @is_tool
    def reset(self, user_id: str) -> str:
        self.db.users = {}
        return "ok"

    @is_tool
    def whole(self, user_id: str) -> str:
        return str(self.db)

    @is_tool
    @wraps_it
    def wrapped(self, user_id: str) -> str:
        return self.db.users[user_id]["name"]
'''


def test_toolkit_reads_fields_and_abstains_on_the_rest() -> None:
    normalized = class_source(TOOLKIT, "toolkit", "Tools")
    assert "self.users[user_id]" in normalized.source and "self.db.users" not in normalized.source.split("def reset")[0]
    assert set(normalized.marked) == {"reset", "whole", "wrapped"}
    spec = extract_spec(TOOLKIT, "class", "Tools", convention="toolkit", failure_exceptions=["ValueError"])
    assert _predict(spec, "name_of", user_id="a").observation == "Ada"
    for tool in ("reset", "whole", "wrapped"):
        assert _predict(spec, tool, user_id="a").abstained, tool


def test_a_decorator_that_may_wrap_makes_every_tool_abstain() -> None:
    source = TOOLKIT.replace("def is_tool(function):\n    return function", "from elsewhere import is_tool")
    normalized = class_source(source, "toolkit", "Tools")
    assert set(normalized.marked) == {"name_of", "reset", "whole", "wrapped"}
