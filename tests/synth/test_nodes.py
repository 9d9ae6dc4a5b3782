"""Each pipeline node alone: `(state, ctx) -> the keys it changes`, on the procedural backend.

The slot's state is carried from node to node here by hand (no graph, no checkpointer), so each
node's update can be checked by itself; the routers are pure functions of the state.
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog.search.vectors import DedupFilter
from catalog.store import Catalog
from synth.generators import ProceduralGenerator
from synth.nodes import NODES, dedup, reject, static_check
from synth.pipeline import END, route_after_check, route_after_dedup, route_after_stage
from synth.slot import MAX_CODE_ATTEMPTS, STAGES, Context, SlotState

SEED = 7


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every node in STAGES order on one slot: the state before each node and each node's update."""
    root = tmp_path_factory.mktemp("catalog")
    ctx = Context(run_dir=root / ".runs" / "run-t", catalog=Catalog(root), generator=ProceduralGenerator(),
                  gate_examples=8, gate_effort=0.05)
    state: SlotState = {"run_id": "run-t", "slot": 0, "seed": SEED}
    before, updates = {}, {}
    for name in STAGES:
        before[name] = dict(state)
        updates[name] = NODES[name](state, ctx)
        state = {**state, **updates[name]}  # type: ignore[typeddict-item]
    yield ctx, before, updates, state
    ctx.close()


def test_the_nodes_are_the_stages():
    assert tuple(NODES) == STAGES


@pytest.mark.parametrize("name", STAGES)
def test_each_node_records_its_stage_and_returns_only_what_it_changes(walk, name):
    _, before, updates, _ = walk
    update = updates[name]
    stage = update["stages"][name]
    assert stage["attempts"] == 1 and stage["ok"] is True and stage["first_ok"] is True, (name, stage)
    assert set(before[name].get("stages") or {}) | {name} == set(update["stages"])  # earlier stages kept
    assert update.get("status") in (None, "running", "registered"), update.get("reason")
    assert "run_id" not in update and "seed" not in update  # inputs are read, never written back


@pytest.mark.parametrize(("name", "keys"), [
    ("mine", {"topic", "env_id", "status", "attempts", "feedback"}), ("dedup", set()),
    ("plan", {"blueprint", "plan", "env_id"}), ("schema", {"schema"}), ("code", {"code", "attempts", "problems"}),
    ("static_check", {"problems", "feedback"}), ("states", {"states"}), ("execute", {"problems", "feedback"}),
    ("tasks", {"tasks", "delta_sizes", "realism"}), ("gate", {"gate"}), ("register", {"status", "reason"}),
])
def test_what_each_node_produces(walk, name, keys):
    _, _, updates, _ = walk
    assert set(updates[name]) - {"stages"} == keys


def test_the_walk_registers_a_gated_env(walk):
    ctx, _, updates, state = walk
    assert state["status"] == "registered"
    assert state["problems"] == [] and state["tasks"] and state["gate"]["passed"]
    assert ctx.catalog.get(state["env_id"]).manifest.quality.score == state["gate"]["score"]
    assert "class " in updates["schema"]["schema"] and updates["code"]["code"].startswith(updates["schema"]["schema"].rstrip())


@pytest.mark.parametrize("name", ["mine", "plan", "schema", "code", "states", "tasks"])
def test_a_node_given_the_same_state_answers_the_same(walk, name):
    ctx, before, updates, _ = walk
    again = NODES[name](before[name], ctx)
    strip = lambda u: {k: v for k, v in u.items() if k != "stages"}  # noqa: E731 - wall times differ
    assert strip(again) == strip(updates[name])


def test_dedup_ends_a_slot_whose_topic_is_taken(walk):
    ctx, before, _, _ = walk
    taken = DedupFilter()
    taken.add(["other-env"], [before["dedup"]["topic"]["topic"]])
    update = dedup(before["dedup"], Context(**{**vars(ctx), "dedup": taken, "_pool": None}))
    assert update["status"] == "deduplicated" and "other-env" in update["reason"]
    assert update["stages"]["dedup"]["ok"] is False
    assert route_after_dedup({**before["dedup"], **update}) == END  # type: ignore[typeddict-item]


def test_dedup_ends_a_slot_whose_id_another_slot_wrote(walk):
    ctx, before, _, state = walk
    other = {**before["dedup"], "slot": 1, "env_id": state["env_id"]}
    update = dedup(other, ctx)  # type: ignore[arg-type]
    assert update["status"] == "existing" and "kept, not replaced" in update["reason"]


def test_dedup_gives_an_env_id_to_the_first_slot_of_the_run_that_claims_it(walk, tmp_path):
    """Two slots with one id: the later ends at dedup, in slot order, not at register by whichever finishes first."""
    _, before, _, _ = walk
    ctx = Context(run_dir=tmp_path / ".runs" / "run-t", catalog=Catalog(tmp_path), generator=ProceduralGenerator(),
                  gate_examples=8, gate_effort=0.05, dedup=DedupFilter(), claims={})
    first = {**before["dedup"], "slot": 2}
    assert dedup(first, ctx).get("status") is None and ctx.claims == {first["env_id"]: 2}  # type: ignore[arg-type]
    assert dedup(first, ctx).get("status") is None  # the same slot again (a resumed run): still its own
    update = dedup({**first, "slot": 5}, ctx)  # type: ignore[arg-type]
    assert update["status"] == "deduplicated" and update["reason"] == f"env id {first['env_id']} is slot 2's, earlier in this run"
    assert route_after_dedup({**first, **update}) == END  # type: ignore[typeddict-item]


def test_static_check_turns_broken_code_into_feedback(walk):
    ctx, before, _, _ = walk
    update = static_check({**before["static_check"], "code": "class Broken(:\n", "problems": []}, ctx)
    assert update["problems"] == update["feedback"] and update["problems"][0].startswith("syntax error: line 1")
    assert update["stages"]["static_check"]["ok"] is False


def test_routing_after_a_check_retries_only_what_feedback_can_fix():
    clean: SlotState = {"problems": [], "attempts": 1}
    broken: SlotState = {"problems": ["syntax error"], "attempts": 1}
    assert route_after_check(clean, next_node="states", can_correct=False) == "states"
    assert route_after_check(broken, next_node="states", can_correct=True) == "code"
    assert route_after_check(broken, next_node="states", can_correct=False) == "reject"
    assert route_after_check({**broken, "attempts": MAX_CODE_ATTEMPTS}, next_node="tasks", can_correct=True) == "reject"
    assert route_after_stage({"status": "rejected"}) == END and route_after_stage({"status": "running"}) == "next"


def test_reject_names_the_attempts_and_the_last_problems():
    update = reject({"attempts": 5, "problems": ["tool x: crash", "tool y: crash"]})
    assert update == {"status": "rejected", "reason": "code: 5 attempts, last problems: tool x: crash; tool y: crash"}
