"""The gym-style API: make / reset / step / evaluate over real runtimes (in-process and sandboxed)."""

import json
import shutil

import pytest

from catalog.models import Action
from catalog.store import REFERENCE_DIR, Catalog, CatalogError
from catalog.tasks import Task, declines
from serving import BadToolCall, EpisodeOver, ServingError, make
from tests.conftest import REFERENCE_IDS


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_reference_solutions_earn_reward_and_terminate(reference, env_id):
    for task in reference.get(env_id).tasks():
        env = make(env_id, task=task.id, catalog=reference)
        observation, info = env.reset(seed=7)
        assert observation == task.instruction and info["task"] == task.id and info["state"] == task.state
        assert info["seed"] == 7 and info["sandboxed"] is False and [t["function"]["name"] for t in info["tools"]] == \
            [t.name for t in reference.get(env_id).manifest.tools]
        assert env.evaluate()[0] == 0.0
        for number, action in enumerate(task.solution, 1):
            _, reward, terminated, truncated, step_info = env.step(action.model_dump())
            assert step_info["outcome"] == "success" and step_info["step"] == number and not truncated
            assert terminated == (reward == 1.0) and step_info["check"]["task"] == task.id
        assert (reward, terminated) == (1.0, True)
        assert env.evaluate() == (1.0, {"task": task.id, "passed": True, "error": None, "check": True,
                                        "cut_off": False, "refusal": False})
        with pytest.raises(EpisodeOver, match="task solved"):
            env.step(task.solution[0].model_dump())


def test_instances_are_isolated_and_reset_restores(reference):
    first, second = make("library", catalog=reference), make("library", catalog=reference)
    first.reset()
    second.reset()
    before = second.state()
    _, reward, terminated, _, info = first.step({"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}})
    assert info["outcome"] == "success" and info["delta"] and (reward, terminated) == (0.0, False)
    assert first.state() != before and second.state() == before
    first.reset()
    assert first.state() == before


def test_tool_call_forms(reference):
    env = make("bank", catalog=reference)
    env.reset()
    name = env.tools[0]["function"]["name"]
    as_dict = env.step({"name": name, "arguments": {}})
    as_text = env.step({"name": name, "arguments": ""})
    as_openai = env.step({"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}})
    as_action = env.step(Action(name=name))
    assert as_dict[0] == as_text[0] == as_openai[0] == as_action[0]
    bad_json = env.step({"name": name, "arguments": "{not json"})
    assert bad_json[4]["outcome"] == "invalid" and "not valid JSON" in bad_json[0]["error"] and not bad_json[4]["delta"]
    unknown = env.step({"name": "no_such_tool", "arguments": {}})
    assert unknown[4]["outcome"] == "invalid" and unknown[4]["step"] == 6
    with pytest.raises(BadToolCall):
        env.step({"arguments": {}})


def test_truncation_and_reset_options(reference):
    tasks = reference.get("clinic").tasks()
    env = make("clinic", task=tasks[0].id, catalog=reference, max_steps=2)
    env.reset()
    read = {"name": "find_doctors", "arguments": {}}
    assert env.step(read)[3] is False
    _, reward, terminated, truncated, _ = env.step(read)
    assert (reward, terminated, truncated) == (0.0, False, True)
    with pytest.raises(EpisodeOver, match="max_steps 2"):
        env.step(read)
    other = next(t for t in tasks if t.state != tasks[0].state)
    observation, info = env.reset(options={"task": other.id})
    assert observation == other.instruction and info["state"] == other.state
    _, info = env.reset(options={"state": "quiet"})
    assert info["state"] == "quiet" and info["task"] == other.id
    with pytest.raises(ServingError, match="unknown reset options"):
        env.reset(options={"level": 3})
    with pytest.raises(CatalogError, match="no task"):
        env.reset(options={"task": "nope"})
    with pytest.raises(CatalogError, match="no state"):
        env.reset(options={"state": "nope"})
    assert env.reset()[1]["state"] == "quiet"  # a failed reset changed nothing


REFUSE_LOAN = Task(
    id="library-refuse-loan", state="default", refusal=True,
    instruction="Grace Hopper (M002) asks to borrow Invisible Cities. Policy: no loans this week; decline.",
    check="def check(initial, final):\n    return final['books']['B010'] == initial['books']['B010']\n",
    solution=[Action(name="search_books", arguments={"query": "calvino"})],
    forbidden=[Action(name="borrow_book", arguments={"member_id": "M002", "book_id": "B010"})])


def test_a_refusal_is_earned_by_declining_not_by_doing_nothing(reference):
    env = make("library", task=REFUSE_LOAN, catalog=reference)
    env.reset()
    reward, details = env.evaluate()  # the empty episode: the check holds, no decline was said
    assert reward == 0.0 and details["check"] is True and details["passed"] is False and details["refusal"]
    _, reward, terminated, _, info = env.step(REFUSE_LOAN.solution[0].model_dump())
    assert (reward, terminated) == (0.0, False) and info["check"]["passed"] is True  # steps never pay a refusal
    assert env.evaluate("Done: I found the book for you.")[0] == 0.0
    assert env.evaluate("Sorry, I can't lend it: our policy does not allow loans this week.")[0] == 1.0
    env.step(REFUSE_LOAN.forbidden[0].model_dump())  # the forbidden loan: no decline makes up for it
    assert env.evaluate("I cannot do that.")[0] == 0.0


def test_an_episode_cut_off_at_its_step_limit_is_not_a_success(reference):
    task = reference.get("library").tasks()[0]
    env = make("library", task=task.id, catalog=reference, max_steps=len(task.solution), terminate_on_success=False)
    env.reset()
    rewards = [env.step(action.model_dump())[1:4] for action in task.solution]
    assert rewards[-1] == (0.0, False, True)  # solved on the last allowed step, but cut off there
    assert env.evaluate()[1]["check"] is True and env.evaluate()[0] == 0.0
    solo = make("library", task=task.id, catalog=reference)  # no limit of its own: the caller cut it off
    solo.reset()
    for action in task.solution:
        solo.step(action.model_dump())
    assert solo.evaluate()[0] == 1.0 and solo.evaluate(cut_off=True)[0] == 0.0


def test_no_task_means_no_reward(reference):
    env = make("store", catalog=reference, max_steps=None, state="spring_sale")
    observation, info = env.reset()
    assert observation == reference.get("store").manifest.description and info["task"] is None
    _, reward, terminated, truncated, info = env.step({"name": env.tools[0]["function"]["name"], "arguments": {}})
    assert (reward, terminated, truncated) == (0.0, False, False) and "check" not in info
    assert env.evaluate()[0] == 0.0 and env.initial_state is None


def test_untrusted_env_runs_and_is_judged_in_the_sandbox(tmp_path):
    """A catalog env that is not a shipped reference env: calls and the task's check run in the worker."""
    shutil.copytree(REFERENCE_DIR / "store", tmp_path / "store")
    catalog = Catalog(tmp_path, include_reference=False)
    task = catalog.get("store").tasks()[0]
    with make("store", task=task.id, catalog=catalog) as env:
        assert not env.in_process
        env.reset()
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": a.name, "arguments": json.dumps(a.arguments)}}
                 for i, a in enumerate(task.solution)]
        results = [env.step(call) for call in calls]
        assert [r[4]["outcome"] for r in results] == ["success"] * len(calls)
        assert results[-1][1:3] == (1.0, True) and env.evaluate()[0] == 1.0


@pytest.mark.parametrize("env_id", REFERENCE_IDS)
def test_sibling_runtimes_match_a_runtime_of_its_own(reference, env_id, runtimes):
    """Instances made as siblings (sharing class-derived parts and, for SQL, one engine and its compiled
    statements) behave exactly as a runtime built on its own, and never share state with each other."""
    from serving._code import loaded

    handle = reference.get(env_id)
    shared = loaded(handle)
    own = runtimes[env_id]
    for task in handle.tasks():
        first, second = shared.runtime(), shared.runtime()
        start = shared.start(task.state)
        for runtime in (first, second):
            shared.reset(runtime, start)
        own.reset(handle.state(task.state))
        for action in [*task.solution, *task.solution]:  # the repeats are refused by rules
            expected, got = own.call(action, snapshot=True), first.call(action, snapshot=True)
            assert (got.observation, got.delta, got.outcome, got.state) == \
                (expected.observation, expected.delta, expected.outcome, expected.state)
        assert second.snapshot() == handle_state_snapshot(own, handle, task.state)


def handle_state_snapshot(runtime, handle, state):
    runtime.reset(handle.state(state))
    return runtime.snapshot()


@pytest.mark.parametrize(("message", "declined"), [
    ("I cannot do that.", True), ("I can't change it: policy forbids it.", True), ("I won't cancel it.", True),
    ("That is not permitted under our policy.", True), ("I must decline this request.", True),
    ("I'm unable to issue the refund.", True), ("Done: the order is cancelled.", False),
    ("Here are the books you asked for.", False), ("", False), (None, False)])
def test_declines_reads_a_decline_in_plain_words(message, declined):
    assert declines(message) is declined


@pytest.mark.parametrize("trusted", [True, False], ids=["in-process", "sandboxed"])
def test_load_goes_on_from_a_state_and_the_check_still_judges_from_the_reset(reference, trusted):
    """`load` (a hybrid env's simulated step): the next state without running the call; the initial state stays."""
    task = reference.get("library").tasks()[0]
    with make("library", task=task.id, catalog=reference, trusted=trusted) as solved, \
            make("library", task=task.id, catalog=reference, trusted=trusted, terminate_on_success=False) as env:
        solved.reset()
        for action in task.solution[:-1]:
            solved.step(action.model_dump())
        almost = solved.state()
        env.reset()
        initial = env.state()
        env.load(almost)
        assert env.state() == almost and env.evaluate()[0] == 0.0  # judged (initial, almost): not solved yet
        _, reward, _, _, info = env.step(task.solution[-1].model_dump())  # the last call runs on the loaded state
        assert info["outcome"] == "success" and reward == 1.0 and env.evaluate()[0] == 1.0
        assert env.initial_state == initial
        env.load(initial)  # back where it started: the check (initial, initial) fails again
        assert env.evaluate()[0] == 0.0
        with pytest.raises(ServingError, match="a state is an object"):
            env.load(["not", "a", "state"])  # type: ignore[arg-type]
