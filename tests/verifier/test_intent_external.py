"""verify on envs written elsewhere, past what generic properties see (issue 28, items 7 and 8).

- a tool that writes through a method of a state object (`self._current_dir.mkdir(...)`) is never labelled
  `read`, and a method proven pure (`entry`) keeps a read tool `read`;
- a hidden write only a valid id reaches (a cache a lookup fills, a cursor `cd` moves), under a name no
  parameter shares, is reported by verify: calls are seeded with ids from anywhere in the state;
- the spec simulator is handed the hidden state too, so tools that read private attributes are predicted;
- a plan for an imported env (drafted by `verify write-plan`, a rule kept or written by the user) makes
  verify fail a booking tool that never counts the seat, with the call that shows it; a broken plan file is
  one line.

Fixtures (tests/fixtures/external/intent/) are this project's own, written in the function-calling benchmark
style; the import's load check runs them in-process here (trusted), verify runs them in the sandbox.
"""

import json
from pathlib import Path

import pytest

from catalog.importing.importer import import_env
from catalog.plan import Invariant
from catalog.store import Catalog
from cli import main
from constraints.completeness import CompletenessRun, InProcessCallRunner, candidates, seeded_calls, state_ids
from constraints.extract import extract_spec
from sandbox.pool import SandboxPool
from verifier.gate.intent import PlanError, load_plan, write_plan
from verifier.gate.run import verify_env
from verifier.gate.typed_values import state_keys

INTENT = Path(__file__).resolve().parents[1] / "fixtures" / "external" / "intent"
QUIRKS = INTENT.parent / "quirks"
ENVS = {"filesystem": "FileSystem", "stations": None, "booking": None}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(2, timeout=5.0) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """The fixtures imported as a user would, recorded as imported envs are (faithful arguments)."""
    catalog = Catalog(tmp_path_factory.mktemp("intent"))
    for name, class_name in ENVS.items():
        handle = import_env(INTENT / f"{name}.py", catalog, configs=[INTENT / f"{name}.json"], env_id=name,
                            class_name=class_name).handle
        manifest = handle.manifest.model_copy(update={"strict_args": False})
        (handle.path / "env.json").write_text(json.dumps(manifest.model_dump(mode="json"), indent=1), encoding="utf-8")
    return catalog


def checks(report):
    return {c["name"]: c for c in report.model_dump(mode="json")["checks"]}


# --- item 7a: a write through a state object's method is a write ---------------------------------------
def test_a_tool_writing_through_a_state_objects_method_is_never_labelled_read():
    spec = extract_spec((INTENT / "filesystem.py").read_text(encoding="utf-8"), "class", "FileSystem")
    kinds = {name: tool.kind for name, tool in spec.tools.items()}
    assert kinds == {"pwd": "read", "ls": "read", "cat": "read",  # `entry` is proven pure: still reads
                     "mkdir": "write", "touch": "write",  # `self._current_dir.mkdir(...)` writes the tree
                     "cd": "write"}  # moves the private cursor
    mkdir = spec.tools["mkdir"]
    assert not mkdir.writes_known and mkdir.allows_write(["root", "contents", "x"]) is None  # not placed: unknown
    assert any("mkdir() of a state value" in (e.unfollowed or "") for e in mkdir.effects)


@pytest.mark.parametrize("method_body, kind", [
    ("return self.contents.get(name)", "read"),
    ("self.hits += 1\n        return self.contents.get(name)", "write"),  # a counter on the object
    ("found = []\n        found.append(name)\n        return found", "read"),  # a list it built itself
    ("return helper(self, name)", "write"),  # a function the module does not define: not followed
])
def test_a_state_objects_method_is_pure_only_when_proven(method_body, kind):
    source = (INTENT / "filesystem.py").read_text(encoding="utf-8").replace(
        "return self.contents.get(name)", method_body, 1)
    assert extract_spec(source, "class", "FileSystem").tools["cat"].kind == kind


def test_a_method_of_an_object_from_elsewhere_is_a_write():
    source = ("import random\n\nclass Host:\n    def __init__(self):\n        self._random = random.Random(1)\n"
              "        self.items = {}\n\n    def pick(self) -> int:\n        return self._random.randint(1, 6)\n\n"
              "    def names(self) -> list:\n        return sorted(n.lower() for n in self.items)\n")
    tools = extract_spec(source, "class", "Host").tools
    assert tools["pick"].kind == "write" and tools["names"].kind == "read"  # str.lower is a pure builtin


def test_filesystem_verify_has_no_false_alarm_on_writes_through_objects(catalog, pool):
    found = checks(verify_env(catalog.get("filesystem"), pool, examples=40, effort=0.2))
    for name in ("read_tools_write_nothing", "writes_inside_write_set", "read_tools_keep_hidden_state"):
        assert found[name]["ok"], found[name]
    # item 7b: only `cd` into a folder that exists moves the cursor; verify reports that hidden write
    hidden = found["hidden_writes"]
    assert hidden["informational"] and hidden["counterexample"] and "_current_dir" in hidden["detail"]
    (action,) = hidden["counterexample"]["actions"]
    assert action["name"] == "cd" and action["arguments"]["folder"] in ("docs", "src")


# --- item 7b: ids from deep in the state reach hidden writes ---------------------------------------------
def test_the_lookup_id_is_out_of_reach_of_the_name_heuristics():
    """What makes the fixture discriminating: no value drawn by name is a valid call sign."""
    state = json.loads((INTENT / "stations.json").read_text(encoding="utf-8"))
    spec = extract_spec((INTENT / "stations.py").read_text(encoding="utf-8"), "class", "StationDirectory")
    param = spec.tools["lookup_station"].params[0]
    assert state_keys(param.name, state) == []
    assert not set(candidates(param, state)) & set(state["stations"])
    assert set(state["stations"]) <= set(state_ids(state))


def test_a_cache_only_a_valid_id_fills_is_reported_by_verify(catalog, pool):
    found = checks(verify_env(catalog.get("stations"), pool, examples=40, effort=0.2))
    check = found["read_tools_keep_hidden_state"]
    assert not check["ok"] and "_recent" in check["detail"]
    (action,) = check["counterexample"]["actions"]
    assert action["name"] == "lookup_station" and action["arguments"]["callsign"] in ("KSFO", "EGLL", "RJTT")
    assert found["hidden_writes"]["counterexample"]


def test_seeded_calls_are_deterministic_and_leave_sql_envs_alone(catalog):
    handle = catalog.get("stations")
    spec = extract_spec(handle.source(), "class", handle.manifest.entry)
    states = {name: handle.state(name) for name in handle.state_names()}
    first = seeded_calls(spec, states, 3, 4)
    assert first == seeded_calls(spec, states, 3, 4) and len(first) == 8  # two tools, 4 calls each
    library = catalog.get("library")
    sql_spec = extract_spec(library.source(), "sql")
    assert seeded_calls(sql_spec, {n: library.state(n) for n in library.state_names()}, 0, 4) == []


# --- item 7c: the simulator is handed the hidden state -----------------------------------------------------
def test_completeness_hands_the_simulator_the_hidden_state(tmp_path):
    """rng_read's tool reads `self._random`: with the public state only, the simulator had to abstain."""
    catalog = Catalog(tmp_path)
    handle = import_env(QUIRKS / "rng_read.py", catalog, configs=[QUIRKS / "trivia.json"], env_id="rng-read").handle
    figures = {}
    for hidden in (False, True):
        runner = InProcessCallRunner(catalog.get(handle.id), trusted=True)
        runner.hidden = hidden
        figures[hidden] = CompletenessRun(catalog.get(handle.id), runner=runner, seed=0).run()
    assert figures[False].abstained > 0 and figures[True].abstained < figures[False].abstained
    assert figures[True].wrong == 0 and figures[True].exact > figures[False].exact


# --- item 8: intent for an imported env ----------------------------------------------------------------------
def test_without_a_plan_the_uncounted_seat_is_invisible(catalog, pool):
    found = checks(verify_env(catalog.get("booking"), pool, examples=30, effort=0.1))
    assert [n for n, c in found.items() if not c["ok"] and n != "every_guard_reachable"] == []


def test_a_plan_rule_fails_the_booking_tool_that_never_counts_the_seat(catalog, pool, capsys):
    handle = catalog.get("booking")
    assert main(["verify", "write-plan", "booking", "--catalog", str(catalog.root)]) == 0
    assert "draft" in capsys.readouterr().out
    plan = load_plan(handle.path)
    assert plan is not None and plan.invariants == [Invariant(
        kind="count_of_children", collection="flights", field="seats_booked", child="bookings", via="flight_id",
        description=plan.invariants[0].description)]  # inferred from the states, for the user to keep
    report = verify_env(catalog.get("booking"), pool, examples=30, effort=0.1)
    found = checks(report)
    check = found["invariants_hold"]
    assert not report.passed and not check["ok"] and "seats_booked" in check["detail"]
    (action,) = check["counterexample"]["actions"]
    assert action["name"] == "book_seat" and action["arguments"]["flight_id"] in ("UA100", "LH400")
    assert found["code_matches_plan_statically"]["ok"] and found["code_agrees_with_plan"]["ok"]  # the draft is the code


def test_a_rule_the_user_writes_is_checked_too(catalog, pool):
    handle = catalog.get("booking")
    plan = load_plan(handle.path)
    assert plan is not None
    plan.invariants = [Invariant(kind="le", collection="flights", field="seats_booked", other="capacity"),
                       Invariant(kind="nonneg", collection="flights", field="seats_booked")]
    write_plan(handle.path, plan)
    found = checks(verify_env(catalog.get("booking"), pool, examples=30, effort=0.1))
    assert found["invariants_hold"]["ok"]  # true of this code: the rule a user states is what is checked


@pytest.mark.parametrize("text, says", [
    ("{not json", "invalid plan"),
    ('{"env_id": "booking", "kind": "class", "invariants": [{"kind": "maybe", "collection": "flights", '
     '"field": "x"}]}', "invariants.0.kind"),
    ('{"env_id": "booking", "kind": "class", "tools": {"book_seat": {"preconditions": ["nope"]}}}', "'nope'"),
    ('{"env_id": "booking", "kind": "class", "program": {"kind": "perl"}}', "invalid plan"),
    ('{"env_id": "booking", "kind": "class", "surprise": 1}', "surprise"),
])
def test_a_broken_plan_file_is_one_line(tmp_path, text, says, capsys):
    (tmp_path / "plan.json").write_text(text, encoding="utf-8")
    with pytest.raises(PlanError) as raised:
        load_plan(tmp_path)
    message = str(raised.value)
    assert says in message and "\n" not in message


def test_a_plan_file_that_is_a_symlink_is_refused(tmp_path):
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    (tmp_path / "plan.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(PlanError, match="cannot read"):
        load_plan(tmp_path)


def test_verify_with_a_broken_plan_is_one_line_on_the_command_line(tmp_path, capsys):
    catalog = Catalog(tmp_path)
    handle = import_env(INTENT / "booking.py", catalog, configs=[INTENT / "booking.json"], env_id="booking").handle
    (handle.path / "plan.json").write_text('{"env_id": "booking"}', encoding="utf-8")
    assert main(["verify", "gate", "booking", "--catalog", str(tmp_path)]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert error[-1].startswith("envforge: ") and "invalid plan at kind" in error[-1]
