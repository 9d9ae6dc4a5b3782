"""Rollouts end to end: the reference agent, verified simulated rollouts, and a model agent over real HTTP.

The model agent runs the real `openai` client against tests/llm_server.py's scripted server;
envs are the shipped reference envs (in-process) through the real gym API (serving).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from catalog.bench.items import BenchItem, SimResult
from catalog.store import Catalog
from constraints.simulate import SpecSimulator
from synth.rollout import (
    TRAJECTORIES_FILE,
    ModelAgent,
    RolloutConfig,
    RolloutError,
    build_report,
    plan_units,
    reference_agent,
    run_rollouts,
)
from tests.llm_server import Reply

ROOT = Path(__file__).resolve().parents[2]
ROLES = {"system", "user", "assistant", "tool"}


def assert_openai_messages(messages: list[dict[str, Any]]) -> None:
    """The OpenAI chat structure: system, user, then assistant turns whose every tool call a tool message answers."""
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert all(m["role"] in ROLES and isinstance(m["content"], str) for m in messages)
    pending: list[str] = []
    for message in messages[2:]:
        if message["role"] == "assistant":
            assert not pending, "a new assistant turn before every tool call was answered"
            for call in message.get("tool_calls", []):
                assert call["type"] == "function" and isinstance(call["id"], str)
                assert isinstance(call["function"]["name"], str) and isinstance(call["function"]["arguments"], str)
                pending.append(call["id"])
        elif message["role"] == "tool":
            assert message["tool_call_id"] == pending.pop(0)
        else:
            raise AssertionError(f"unexpected {message['role']} message after the first turn")
    assert not pending and messages[-1]["role"] == "assistant" and "tool_calls" not in messages[-1]


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / TRAJECTORIES_FILE).read_text(encoding="utf-8").splitlines()]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_reference_rollout_solves_every_task_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "ref"
    done = cli("rollout", "--model", "reference", "--all", "--out", str(out), "--json", "--catalog", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary == {"model": "reference", "trajectories": 15, "success_rate": 1.0, "tokens_in": 0,
                       "tokens_out": 0, "cost_usd": 0.0}
    trajectories = lines(out)
    assert len(trajectories) == 15 and all(t["success"] and t["reward"] == 1.0 for t in trajectories)
    for t in trajectories:
        assert_openai_messages(t["messages"])
        assert {tool["function"]["name"] for tool in t["tools"]} >= {s["name"] for s in t["steps"]}
        calls = [c for m in t["messages"] for c in m.get("tool_calls", [])]
        assert len(calls) == len(t["steps"]) == t["metadata"]["solution_length"]
        assert all(isinstance(json.loads(s["delta_json"]), list) for s in t["steps"])
    report = json.loads((out / "report.json").read_text())
    assert report["by_env"]["library"]["success_rate"] == 1.0 and (out / "report.md").is_file()
    assert (out / "rollouts.png").stat().st_size > 0
    again = cli("rollout", "--model", "reference", "--all", "--out", str(out), "--json", "--catalog",
                str(tmp_path / "c"))
    assert again.returncode == 0 and json.loads(again.stdout)["trajectories"] == 15
    assert len(lines(out)) == 15  # nothing run twice
    other = cli("rollout", "--model", "reference", "--all", "--max-steps", "3", "--out", str(out), "--catalog",
                str(tmp_path / "c"))
    assert other.returncode == 1 and other.stderr.count("\n") == 1 and "another configuration" in other.stderr


def test_reference_rollout_with_spec_simulator_verifies_every_trajectory(tmp_path: Path) -> None:
    done = cli("rollout", "--model", "reference", "--all", "--simulator", "spec", "--out", str(tmp_path / "s"),
               "--json", "--catalog", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "s" / "report.json").read_text())
    assert json.loads(done.stdout)["verified"] == 15, report["divergences"]
    assert report["verified_yield"] == 1.0 and report["steps_verified"] == report["simulated_steps"] > 15
    assert all(s["sim"]["verified"] for t in lines(tmp_path / "s") for s in t["steps"])


class WrongAt:
    """The spec-only simulator, except that its answer to the `wrong`-th call of an episode drops the delta."""

    name, mode = "wrong-at", "scripted"

    def __init__(self, wrong: int) -> None:
        self.wrong, self.asked = wrong, 0
        self.inner = SpecSimulator()

    def predict(self, item: BenchItem) -> SimResult:
        answer = self.inner.predict(item)
        self.asked += 1
        if self.asked - 1 == self.wrong:
            answer.delta = []
        return answer


def test_a_wrong_simulated_step_is_caught_at_that_step(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "c")
    units, _ = plan_units(catalog, ["library"], "library-borrow-calvino")
    simulator = WrongAt(1)  # step 0 searches (read), step 1 borrows: its state change is dropped
    result = run_rollouts(catalog, units, RolloutConfig(model="reference", simulator="wrong-at"), tmp_path / "o",
                          agent_factory=reference_agent, simulator=simulator, concurrency=1)
    (t,) = result.trajectories
    assert t["verified"] is False and json.loads(t["first_divergence_json"]) == {
        "step": 1, "tool": "borrow_book", "what": "state differ"}
    assert [s["sim"]["verified"] for s in t["steps"]] == [True, False]
    assert t["steps"][1]["sim"]["fm"] is True and json.loads(t["steps"][1]["sim"]["predicted_delta_json"]) == []
    assert t["success"] is True  # the real env executed every call: the reward is the real check's
    report = build_report(result.trajectories, model="reference", simulator="wrong-at")
    assert report["verified"] == 0 and report["divergences"] == [{"id": t["id"], **json.loads(t["first_divergence_json"])}]


def _library_unit(catalog: Catalog, task: str = "library-borrow-calvino") -> list[Any]:
    return plan_units(catalog, ["library"], task)[0]


def test_model_agent_native_tool_calls_malformed_arguments_429_and_multi_turn(tmp_path: Path, llm_server) -> None:
    llm_server.script(
        Reply(content=None, tool_calls=[("borrow_book", '{"member_id": "M002", "book_id": ')]),  # cut-off JSON
        Reply(status=429, content=None, headers={"retry-after": "0"}),
        Reply(content=None, tool_calls=[("search_books", {"query": "calvino", "available_only": True})]),
        Reply(content=None, tool_calls=[("borrow_book", {"member_id": "M002", "book_id": "B010"})]),
        "Grace now has Invisible Cities.")
    client = llm_server.client("gpt-4o-mini")
    catalog = Catalog(tmp_path / "c")
    result = run_rollouts(catalog, _library_unit(catalog), RolloutConfig(model="gpt-4o-mini"), tmp_path / "o",
                          agent_factory=lambda unit, handle: ModelAgent(client), concurrency=1)
    (t,) = result.trajectories
    assert t["success"] and t["end"] == "final" and t["metadata"]["malformed_calls"] == 1
    assert [s["outcome"] for s in t["steps"]] == ["malformed", "success", "success"]
    assert_openai_messages(t["messages"])
    requests = llm_server.chat_requests
    assert len(requests) == 5 and all(r["tools"] for r in requests)  # the 429 was retried by the client
    told = requests[1]["messages"][-1]
    assert told["role"] == "tool" and "not valid JSON" in told["content"]
    assert [m["role"] for m in requests[4]["messages"]].count("tool") == 3  # multi-turn: every result sent back
    assert t["usage"]["calls"] == 4 and t["usage"]["tokens_in"] == 40 and t["cost_usd"] > 0


def test_json_schema_fallback_records_native_messages(tmp_path: Path, llm_server) -> None:
    llm_server.script({"tool": "search_books", "arguments": {"query": "calvino", "available_only": True},
                       "message": ""},
                      {"tool": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}, "message": ""},
                      {"tool": "final", "arguments": {}, "message": "Lent."})
    client = llm_server.client("local-4b")  # the registry: json_schema, no native tool calling
    catalog = Catalog(tmp_path / "c")
    result = run_rollouts(catalog, _library_unit(catalog), RolloutConfig(model="local-4b"), tmp_path / "o",
                          agent_factory=lambda unit, handle: ModelAgent(client), concurrency=1)
    (t,) = result.trajectories
    assert t["success"] and t["messages"][-1] == {"role": "assistant", "content": "Lent."}
    assert_openai_messages(t["messages"])
    first, last = llm_server.chat_requests[0], llm_server.chat_requests[-1]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    options = first["response_format"]["json_schema"]["schema"]["anyOf"]
    assert {o["properties"]["tool"]["const"] for o in options} == {"final", *(n["function"]["name"] for n in t["tools"])}
    assert {m["role"] for m in last["messages"]} == {"system", "user", "assistant"}  # results as user turns


def test_resume_runs_only_what_is_missing(tmp_path: Path, llm_server) -> None:
    catalog = Catalog(tmp_path / "c")
    units = plan_units(catalog, ["library"], None)[0][:2]
    config = RolloutConfig(model="gpt-4o-mini")

    def answer(request: dict[str, Any]) -> Any:
        first_user = request["body"]["messages"][1]["content"]
        if first_user == units[1].instruction:
            return 500  # the second unit's episodes fail on every attempt
        return "I will not do anything."

    llm_server.script(answer)
    client = llm_server.client("gpt-4o-mini", attempts=2)
    first = run_rollouts(catalog, units, config, tmp_path / "o", agent_factory=lambda u, h: ModelAgent(client),
                         concurrency=1)
    assert [t["id"] for t in first.trajectories] == [units[0].id] and list(first.errors) == [units[1].id]
    asked = len(llm_server.chat_requests)
    llm_server.script(lambda request: "Nothing to do.")
    second = run_rollouts(catalog, units, config, tmp_path / "o", agent_factory=lambda u, h: ModelAgent(client),
                          concurrency=1)
    assert [t["id"] for t in second.trajectories] == [u.id for u in units] and not second.errors
    assert len(llm_server.chat_requests) == asked + 1  # only the missing unit was asked again
    assert sorted(t["id"] for t in lines(tmp_path / "o")) == sorted(u.id for u in units)
    with pytest.raises(RolloutError, match="another configuration"):
        run_rollouts(catalog, units, RolloutConfig(model="gpt-4o"), tmp_path / "o",
                     agent_factory=lambda u, h: ModelAgent(client))


@pytest.mark.slow
def test_reference_rollout_on_a_synthesized_env_in_the_sandbox(synthesized_copy: Path, tmp_path: Path) -> None:
    """A synthesized env runs in the sandbox (its checks too): gold trajectories solve it and the spec verifies them."""
    catalog = Catalog(synthesized_copy)  # a copy of the session's synthesized envs (tests/conftest.py); one is run
    env_id = min(s.id for s in catalog.list()[0] if not s.reference)
    units, _ = plan_units(catalog, [env_id])
    result = run_rollouts(catalog, units, RolloutConfig(model="reference", simulator="spec"), tmp_path / "o",
                          agent_factory=reference_agent, simulator=SpecSimulator(), concurrency=2)
    assert len(result.trajectories) == len(units) >= 1 and not result.errors
    assert all(t["success"] and t["verified"] for t in result.trajectories), [
        (t["id"], t["first_divergence_json"], t["check_json"]) for t in result.trajectories]


@pytest.mark.embedded_llm
def test_embedded_smollm2_rolls_out_three_tasks(tmp_path: Path) -> None:
    """The real embedded model through the whole loop (JSON-schema fallback); any success rate is an answer."""
    from synth.llm import open_client

    catalog = Catalog(tmp_path / "c")
    units = plan_units(catalog, ["library"])[0][:3]
    config = RolloutConfig(model="smollm2-135m", max_steps=3)
    with open_client("smollm2-135m", timeout=180.0) as client:
        result = run_rollouts(catalog, units, config, tmp_path / "o", concurrency=1,
                              agent_factory=lambda u, h: ModelAgent(client, max_tokens=96))
    assert len(result.trajectories) == 3 and not result.errors
    for t in result.trajectories:
        assert t["usage"]["calls"] >= 1 and t["usage"]["tokens_out"] > 0
        if t["end"] != "agent_failed":
            assert_openai_messages(t["messages"]) if t["end"] == "final" else None
    report = build_report(result.trajectories, model="smollm2-135m", simulator=None)
    print(f"smollm2-135m: success rate {report['success_rate']} on {report['trajectories']} tasks, "
          f"ends {report['ends']}, {report['malformed_calls']} malformed calls, tokens {report['tokens_in']} in / "
          f"{report['tokens_out']} out")


def test_bad_rollout_input_is_one_line(tmp_path: Path) -> None:
    for args, says in ((["--model", "reference", "--out", str(tmp_path)], "--env ID (repeatable) or --all"),
                       (["--model", "reference", "--env", "nope", "--out", str(tmp_path)], "nope"),
                       (["--model", "reference", "--env", "bank", "--task", "nope", "--out", str(tmp_path)],
                        "no task 'nope'"),
                       (["--model", "no-such-model", "--env", "bank", "--out", str(tmp_path)], "unknown model")):
        done = cli("rollout", *args, "--catalog", str(tmp_path / "c"))
        assert done.returncode == 1 and done.stderr.count("\n") == 1 and says in done.stderr, (args, done.stderr)


def test_an_llm_simulator_over_http_is_verified_step_by_step(tmp_path: Path, llm_server) -> None:
    """A model simulator (plain prompt, real HTTP) right on the first call and wrong on the second."""
    from serving import make
    from synth.simulation import LLMSim

    catalog = Catalog(tmp_path / "c")
    (unit,) = plan_units(catalog, ["library"], "library-return-and-lost")[0]
    with make("library", task=unit.task_id, catalog=catalog) as env:  # the truth of the first call
        env.reset()
        observation, _, _, _, info = env.step({"name": "return_book", "arguments": {"loan_id": "loan-1"}})
    right = {"feedback": json.dumps(observation), "config_changes": [
        {"type": op["op"], "path": ".".join(op["path"]), "value": op.get("value")} for op in info["delta"]]}
    llm_server.script(right, {"feedback": "ok", "config_changes": []})
    simulator = LLMSim("gpt-4o-mini", "plain", client=llm_server.client("gpt-4o-mini"))
    result = run_rollouts(catalog, [unit], RolloutConfig(model="reference", simulator="gpt-4o-mini", sim_mode="plain"),
                          tmp_path / "o", agent_factory=reference_agent, simulator=simulator, concurrency=1)
    (t,) = result.trajectories
    assert [s["sim"]["verified"] for s in t["steps"]] == [True, False]
    assert json.loads(t["first_divergence_json"]) == {"step": 1, "tool": "declare_book_lost", "what": "observation and state differ"}
    assert t["messages"][5]["content"] == "ok"  # the agent was shown the simulator's answer
    assert t["sim_usage"]["calls"] == 2 and t["sim_usage"]["tokens_in"] == 20 and t["cost_usd"] > 0
    report = build_report(result.trajectories, model="reference", simulator="gpt-4o-mini")
    assert report["verified_yield"] == 0.0 and report["step_verified_rate"] == 0.5


@pytest.mark.parametrize("solution", [[{"name": "borrow_book", "arguments": {"member_id": "M003", "book_id": "B006"}}],
                                      []], ids=["refused-call", "no-call"])
def test_reference_agent_on_refusal_tasks(tmp_path: Path, solution: list[dict[str, Any]]) -> None:
    """Policy forbids the request (M003 owes a fine): the gold trajectory changes nothing and ends with a message."""
    from catalog.tasks import Task
    from serving import make
    from synth.rollout import EnvSteps, ReferenceAgent, Unit, run_episode

    task = Task(id="refuse-borrow", instruction="Alan Turing (M003) wants to borrow The Selfish Gene right now.",
                state="default", check="def check(initial, final):\n    return final == initial\n",
                solution=solution, refusal=True)
    unit = Unit("library", task.id, task.state, task.instruction, len(solution))
    with make("library", task=task, catalog=Catalog(tmp_path / "c"), terminate_on_success=False) as env:
        t = run_episode(env, ReferenceAgent(task.solution or [], refusal=True), unit, EnvSteps(env), env_doc="library",
                        env_kind="sql", seed=0, max_steps=5).model_dump()
    assert t["success"] and t["end"] == "final" and [s["outcome"] for s in t["steps"]] == ["failure"] * len(solution)
    with make("library", task=task, catalog=Catalog(tmp_path / "c"), terminate_on_success=False) as env:
        cut = run_episode(env, ReferenceAgent(task.solution or [], refusal=True), unit, EnvSteps(env),
                          env_doc="library", env_kind="sql", seed=0, max_steps=len(solution)).model_dump()
    assert cut["end"] == "max_steps" and cut["reward"] == 0.0 and not cut["success"]  # cut off before declining
    assert_openai_messages(t["messages"])


def test_the_plot_of_a_large_rollout_aggregates_past_twenty_groups(tmp_path: Path) -> None:
    from synth.rollout.report import MAX_BARS, _plot, env_panel, length_panel

    by_env = {f"env-{i:03d}-abcdef": {"trajectories": 3, "successes": i % 4, "success_rate": (i % 4) / 3}
              for i in range(210)}
    by_length = {str(n): {"trajectories": 5, "successes": n % 5, "success_rate": (n % 5) / 5} for n in range(1, 31)}
    envs, lengths = env_panel(by_env), length_panel(by_length)
    assert len(envs.labels) <= MAX_BARS and sum(envs.heights) == 210 and envs.ylabel == "envs"
    assert envs.heights[0] == 53 and envs.heights[9] == 52  # success 0 and success 1 (0/3 and 3/3)
    assert len(lengths.labels) <= MAX_BARS and lengths.labels[0] == "1-2" and lengths.heights[0] == 30.0
    assert lengths.counts == [10] * 15
    few = env_panel(dict(list(by_env.items())[:MAX_BARS]))
    assert len(few.labels) == MAX_BARS and few.labels[1] == "env-001-abcdef"  # a bar per env up to 20
    report = {"trajectories": 630, "by_env": by_env, "by_solution_length": by_length, "model": "m", "simulator": None}
    assert _plot(report, tmp_path) == ["rollouts.png"] and (tmp_path / "rollouts.png").stat().st_size > 0
