"""Hybrid rollouts (`rollout --simulator ... --trust AUDIT_DIR`): the simulator answers only where its audit earned it.

One export of real samples from the library env (sandboxed search and re-execution) is shared by
the module; audits run the real audit runner on it, with the spec simulator and with a model
simulator over real HTTP (the scripted server of tests/llm_server.py answering with the spec's
truth, except where a test plants a wrong answer).
"""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog.bench.items import BenchItem
from catalog.models import Action
from catalog.store import Catalog
from constraints.simulate import SpecSimulator, item_spec
from serving import make
from synth.rollout import (
    RolloutConfig,
    TrustSettings,
    bench_template,
    build_report,
    json_summary,
    plan_units,
    reference_agent,
    run_rollouts,
)
from synth.rollout.hybrid import DROPPED, HybridStateError, HybridSteps, HybridToolEnv, RunTrust
from tests.llm_server import ScriptedServer
from verifier.audit.run import run_audit
from verifier.audit.trust import TrustError, TrustPolicy, TrustTable, stratum_of
from verifier.samples.compositions import Composition
from verifier.samples.export import env_doc, export_samples

ROOT = Path(__file__).resolve().parents[2]
ENV = "library"
# Cells the library's tasks reach, each with samples enough for min_samples=2 (borrow_book writes have none).
COMPOSITION = {"failure": 8, "no_change_args1": 8, "simple_1": 8, "simple_2": 8, "medium_3": 5, "medium_4": 5}
POLICY = TrustPolicy(min_cm=0.9, min_samples=2, spot_check=0.5)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return Catalog(tmp_path_factory.mktemp("hybrid") / "catalog")


@pytest.fixture(scope="module")
def samples(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> list[BenchItem]:
    path = tmp_path_factory.mktemp("composition") / "c.json"
    path.write_text(json.dumps(COMPOSITION))
    return export_samples(catalog, Composition.from_file(path), seed=7, workers=2, env_ids=[ENV]).items


@pytest.fixture(scope="module")
def spec_audit(samples: list[BenchItem], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit-spec")
    run_audit(samples, SpecSimulator(), out, plots=False)
    return out


@pytest.fixture(scope="module")
def executed(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every library task rolled out with every call executed: the rewards a hybrid run must give."""
    units, _ = plan_units(catalog, [ENV])
    result = run_rollouts(catalog, units, RolloutConfig(model="reference"), tmp_path_factory.mktemp("executed"),
                          agent_factory=reference_agent, concurrency=1)
    return {t["id"]: t for t in result.trajectories}


def hybrid(catalog: Catalog, audit: Path, out: Path, simulator: Any, policy: TrustPolicy = POLICY,
           sim_mode: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    units, _ = plan_units(catalog, [ENV])
    table = TrustTable.load(audit, catalog, simulator=simulator.name, mode=simulator.mode)
    config = RolloutConfig(model="reference", simulator=simulator.name, sim_mode=sim_mode,
                           trust=TrustSettings(audit=str(audit), policy=policy))
    result = run_rollouts(catalog, units, config, out, agent_factory=reference_agent, simulator=simulator,
                          concurrency=1, trust=table)
    assert not result.errors
    return result.trajectories, build_report(result.trajectories, model="reference", simulator=simulator.name,
                                             trust=table.summary(policy))


def test_spec_hybrid_rewards_equal_a_fully_executed_run(catalog, spec_audit, executed, tmp_path):
    trajectories, report = hybrid(catalog, spec_audit, tmp_path / "h", SpecSimulator())
    h = report["hybrid"]
    assert {t["id"]: t["reward"] for t in trajectories} == {i: t["reward"] for i, t in executed.items()}
    assert all(t["reward"] == 1.0 for t in trajectories)
    steps = [s for t in trajectories for s in t["steps"]]
    alone = [s for s in steps if not s["sim"]["executed"]]
    assert alone and all(s["sim"]["trust"] == "trusted" and s["sim"]["answered_by"] == "simulator" for s in alone)
    untrusted = [s for s in steps if s["sim"]["trust"].startswith("untrusted")]
    assert {s["name"] for s in untrusted} >= {"borrow_book"}  # its write cell was never audited
    assert all(not s["sim"]["simulated"] and s["sim"]["executed"] for s in untrusted)
    assert h["executed_steps"] + h["simulated_steps"] == h["steps"] == len(steps)
    assert 0 < h["executed_share"] < 1 and h["trusted_verified_share"] == 1.0 and h["spot_checks"] >= 1
    assert h["dropped"] == [] and report["verified"] == len(trajectories)
    print(f"spec hybrid: {h['cells_trusted']}/{h['cells_audited']} cells trusted, executed share "
          f"{h['executed_share']}, spot checks verified {h['spot_checks_verified']}/{h['spot_checks']}, rewards "
          f"identical {sum(t['reward'] == executed[t['id']]['reward'] for t in trajectories)}/{len(trajectories)}")
    assert json_summary(report).model_dump(mode="json")["executed_share"] == h["executed_share"]
    # a simulated step's state went on from the prediction: the next executed step saw it (same outcomes)
    for t in trajectories:
        assert [s["outcome"] for s in t["steps"]] == [s["outcome"] for s in executed[t["id"]]["steps"]]


def test_every_trusted_step_checked_is_verified_and_the_share_follows_the_seed(catalog, spec_audit, tmp_path):
    policy = POLICY.model_copy(update={"spot_check": 1.0})
    trajectories, report = hybrid(catalog, spec_audit, tmp_path / "all", SpecSimulator(), policy)
    h = report["hybrid"]
    trusted = [s for t in trajectories for s in t["steps"] if s["sim"]["trust"] == "spot-check"]
    assert h["simulated_steps"] == 0 and h["spot_checks"] == len(trusted) > 0 and h["trusted_verified_share"] == 1.0
    table = TrustTable.load(spec_audit, catalog, simulator="spec", mode="spec")
    picks = [RunTrust(table, POLICY.model_copy(update={"spot_check": 0.1}), seed).spot_checked("u", i)
             for seed in (0, 1) for i in range(400)]
    assert picks[:400] == [RunTrust(table, POLICY.model_copy(update={"spot_check": 0.1}), 0).spot_checked("u", i)
                           for i in range(400)]  # same seed, same steps
    assert picks[:400] != picks[400:] and 20 <= sum(picks[:400]) <= 60  # about a tenth, another seed others


class Scripted:
    """The spec's truth in the plain prompt's answer format, except for tools told to answer wrong (no change)."""

    def __init__(self, catalog: Catalog) -> None:
        handle = catalog.get(ENV)
        self.template = bench_template(handle.id, handle.manifest, handle.source(),
                                       env_doc(handle))
        self.wrong: set[str] = set()
        self.asked: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        system, user = (m["content"] for m in request["body"]["messages"][:2])
        state = json.loads(re.search(r"## Current state\n```json\n(.*?)\n```\n\n## Answer", system, re.S).group(1))
        name, arguments = re.fullmatch(r"(\w+)\((.*)\)", user, re.S).groups()
        self.asked.append(name)
        item = self.template.model_copy(update={"state": state, "next_state": state,
                                                "action": Action(name=name, arguments=json.loads(arguments))})
        truth = SpecSimulator().predict(item)
        changes = [] if name in self.wrong else [
            {"type": op["op"], "path": ".".join(op["path"]), "value": op.get("value")} for op in truth.delta or []]
        return {"feedback": json.dumps(truth.observation), "config_changes": changes}


def test_a_bad_simulator_is_trusted_only_where_its_audit_was_good_and_a_spot_check_drops_a_planted_cell(
        catalog, samples, tmp_path):
    from synth.simulation import LLMSim

    with ScriptedServer() as server:
        script = Scripted(catalog)
        server.script(script)
        simulator = LLMSim("gpt-4o-mini", "plain", client=server.client("gpt-4o-mini"))
        script.wrong = {"pay_fine"}  # bad during the audit: its write cells earn no trust
        run_audit(samples, simulator, tmp_path / "audit", plots=False)
        table = TrustTable.load(tmp_path / "audit", catalog, simulator="gpt-4o-mini", mode="plain")
        assert table.verdict(ENV, "pay_fine", "write 1-2", POLICY)[1].startswith("untrusted: strict CM 0.00")
        assert table.verdict(ENV, "return_book", "write 3-6", POLICY) == (True, "trusted")
        script.wrong = {"return_book"}  # and planted to go bad after the audit
        policy = POLICY.model_copy(update={"spot_check": 1.0})
        trajectories, report = hybrid(catalog, tmp_path / "audit", tmp_path / "h", simulator, policy, "plain")
        # one run's trust shared by its episodes: the first drops the cell, the next executes it
        trust = RunTrust(table, policy, 0)
        first, later = (return_book(catalog, simulator, trust, f"library/{n}") for n in ("a", "b"))
    steps = [s for t in trajectories for s in t["steps"]]
    pay = [s for s in steps if s["name"] == "pay_fine"]
    assert pay and all(not s["sim"]["simulated"] and s["sim"]["trust"].startswith("untrusted: strict CM") for s in pay)
    (planted,) = [s for s in steps if s["sim"]["cell"] == "return_book/write 3-6"]
    assert planted["sim"]["trust"] == DROPPED and not planted["sim"]["verified"]
    assert planted["sim"]["answered_by"] == "env" and json.loads(planted["sim"]["predicted_delta_json"]) == []
    (t,) = [t for t in trajectories if planted in t["steps"]]
    h = report["hybrid"]
    assert h["dropped"] == [{"cell": f"{ENV}: return_book/write 3-6", "trajectory": t["id"], "step": planted["index"]}]
    assert h["trusted_verified_share"] < 1.0 and all(t["reward"] == 1.0 for t in trajectories)
    print(f"bad scripted simulator: {h['cells_trusted']}/{h['cells_audited']} cells trusted, executed share "
          f"{h['executed_share']}, spot checks verified {h['spot_checks_verified']}/{h['spot_checks']}, dropped "
          f"{[d['cell'] for d in h['dropped']]}, untrusted {h['untrusted_reasons']}")
    assert first.sim.trust == DROPPED and trust.dropped == {f"{ENV}: return_book/write 3-6": "library/a step 0"}
    assert later.sim.trust == "untrusted: a spot check failed (library/a step 0)" and not later.sim.simulated
    assert later.outcome == "success" and later.delta  # executed: the real return


def return_book(catalog: Catalog, simulator: Any, trust: RunTrust, episode: str) -> Any:
    """One hybrid episode's first call, `return_book` on the return-and-lost task's state, under the run's `trust`."""
    with make(ENV, task="library-return-and-lost", catalog=catalog, terminate_on_success=False) as env:
        env.reset()
        handle = env.handle
        template = bench_template(handle.id, handle.manifest, handle.source(),
                                  env_doc(handle))
        steps = HybridSteps(env, simulator, template, item_spec(template), trust, episode)
        return steps.answer(Action(name="return_book", arguments={"loan_id": "loan-1"}))


def test_a_resumed_run_keeps_the_cells_dropped_on_file(catalog, spec_audit):
    line = {"id": "library/t", "env": ENV, "steps": [{"index": 3, "sim": {"trust": DROPPED, "cell": "pay_fine/read"}}]}
    dropped = RunTrust.dropped_in([line])
    table = TrustTable.load(spec_audit, catalog, simulator="spec", mode="spec")
    trust = RunTrust(table, POLICY, 0, dropped)
    assert dropped == {"library: pay_fine/read": "library/t step 3"}
    assert trust.verdict(ENV, "pay_fine", "read") == (False, "untrusted: a spot check failed (library/t step 3)")
    travelled = pickle.loads(pickle.dumps(trust))  # what a Ray actor gets
    assert travelled.dropped == trust.dropped and travelled.verdict(ENV, "pay_fine", "read") == trust.verdict(
        ENV, "pay_fine", "read") and travelled.spot_checked("u", 3) == trust.spot_checked("u", 3)


def _rewrite(audit: Path, out: Path, change: Callable[[dict[str, Any]], Any]) -> Path:
    out.mkdir()
    (out / "audit.json").write_text((audit / "audit.json").read_text())
    lines = [json.loads(line) for line in (audit / "results.jsonl").read_text().splitlines()]
    (out / "results.jsonl").write_text("".join(json.dumps(change(r)) + "\n" for r in lines))
    return out


def test_hostile_and_foreign_audit_folders_are_one_line(catalog, spec_audit, tmp_path):
    def load(folder: Path, simulator: str = "spec") -> str:
        with pytest.raises(TrustError) as caught:
            TrustTable.load(folder, catalog, simulator=simulator, mode=simulator)
        assert "\n" not in str(caught.value)
        return str(caught.value)

    assert "not an audit-sim folder" in load(tmp_path / "missing")
    assert "an audit of 'spec' (spec), not of the simulator 'gpt-4o'" in load(spec_audit, "gpt-4o")

    def bad_item(r: dict[str, Any]) -> dict[str, Any]:
        return {**r, "item": {**r["item"], "state": "not a state"}}

    assert "line 1 is not an audit record (item.state" in load(_rewrite(spec_audit, tmp_path / "bad", bad_item))

    def elsewhere(r: dict[str, Any]) -> dict[str, Any]:
        return {**r, "item": {**r["item"], "env_id": "../../etc/passwd" if r["id"] < "8" else "no-such-env"}}

    assert "no audited sample matches this catalog's envs: env not in the catalog" in load(
        _rewrite(spec_audit, tmp_path / "foreign", elsewhere))
    edited = _rewrite(spec_audit, tmp_path / "edited", lambda r: {**r, "item": {**r["item"], "env_code": "# other\n"}})
    assert "env code differs from the catalog's" in load(edited)
    # a record of a tool the env lacks gives no trust; the rest still count
    one_off = _rewrite(spec_audit, tmp_path / "tool", lambda r: {**r, "item": {**r["item"], "action": {
        "name": "drop_tables", "arguments": {}}}} if r["id"] < "4" else r)
    table = TrustTable.load(one_off, catalog, simulator="spec", mode="spec")
    assert table.foreign["tool not in the env"] >= 1 and table.cells and all(t != "drop_tables" for _e, t, _s in table.cells)


def test_stratum_names_follow_the_ladder():
    assert [stratum_of("success", n) for n in (0, 2, 3, 7, 13)] == ["read", "write 1-2", "write 3-6", "write 7-12",
                                                                  "write 13+"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_cli_hybrid_json_and_bad_input(catalog, spec_audit, executed, tmp_path):
    done = cli("rollout", "--model", "reference", "--env", ENV, "--simulator", "spec", "--trust", str(spec_audit),
               "--min-samples", "2", "--spot-check", "0.5", "--out", str(tmp_path / "o"), "--json",
               "--catalog", str(catalog.root))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert 0 < summary["executed_share"] < 1 and summary["trusted_verified_share"] == 1.0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["hybrid"]["executed_share"] == summary["executed_share"]
    assert "## Hybrid: trust where the audit earned it" in (tmp_path / "o" / "report.md").read_text()
    lines = [json.loads(line) for line in (tmp_path / "o" / "trajectories.jsonl").read_text().splitlines()]
    assert {t["id"]: t["reward"] for t in lines} == {i: t["reward"] for i, t in executed.items()}
    for args, says in ((["--trust", str(spec_audit)], "--trust needs --simulator"),
                       (["--simulator", "spec", "--trust", str(tmp_path)], "not an audit-sim folder"),
                       (["--simulator", "spec", "--trust", str(spec_audit), "--spot-check", "2"],
                        "--spot-check: must be from 0 to 1")):
        bad = cli("rollout", "--model", "reference", "--env", ENV, *args, "--out", str(tmp_path / "b"),
                  "--catalog", str(catalog.root))
        assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and says in bad.stderr, (args, bad.stderr)


def test_the_gym_style_hybrid_env_catches_up_before_the_check(catalog, spec_audit):
    """HybridToolEnv: serving's reset / step / evaluate, a trusted call answered by the spec alone."""
    table = TrustTable.load(spec_audit, catalog, simulator="spec", mode="spec")
    trust = RunTrust(table, POLICY.model_copy(update={"spot_check": 0.0}), 0)
    task = catalog.get(ENV).tasks()[1]  # return-and-lost: return_book (a trusted cell), then declare_book_lost
    assert [a.name for a in task.solution] == ["return_book", "declare_book_lost"]
    with HybridToolEnv(make(ENV, task=task.id, catalog=catalog, terminate_on_success=False), SpecSimulator(),
                       trust) as env:
        for _episode in range(2):
            env.reset(seed=3)
            initial = env.env.state()
            infos = [env.step(action.model_dump())[4] for action in task.solution]
            assert [i["sim"]["executed"] for i in infos] == [False, True]  # the second executed on the loaded state
            assert infos[0]["sim"]["trust"] == "trusted" and infos[1]["sim"]["trust"] == "untrusted: not audited"
            assert env.evaluate() == (1.0, {**env.evaluate()[1], "passed": True}) and env.state() != initial
        assert env.episodes == 2
        bad = {"id": "c1", "type": "function", "function": {"name": "return_book", "arguments": "[1]"}}
        observation, reward, _, _, info = env.step(bad)
        assert info["outcome"] == "invalid" and reward == 0.0 and "Bad arguments" in observation["error"]


class GarbageState:
    """The spec's answers, but every predicted delta also adds a book that is not a row."""

    name, mode = "spec", "spec"

    def predict(self, item: BenchItem) -> Any:
        answer = SpecSimulator().predict(item)
        answer.delta = [*(answer.delta or []), {"op": "add", "path": ["books", "B999"], "value": "not a row"}]
        return answer


def test_a_predicted_state_the_env_refuses_ends_the_episode_in_one_line_and_drops_the_cell(catalog, spec_audit):
    trust = RunTrust(TrustTable.load(spec_audit, catalog, simulator="spec", mode="spec"),
                     POLICY.model_copy(update={"spot_check": 0.0}), 0)
    with make(ENV, task="library-return-and-lost", catalog=catalog, terminate_on_success=False) as env:
        env.reset()
        handle = env.handle
        template = bench_template(handle.id, handle.manifest, handle.source(),
                                  env_doc(handle))
        steps = HybridSteps(env, GarbageState(), template, item_spec(template), trust, "library/garbage")
        assert not steps.answer(Action(name="return_book", arguments={"loan_id": "loan-1"})).sim.executed
        with pytest.raises(HybridStateError, match="predicted at step 0 .return_book/write 3-6. does not load") as e:
            steps.answer(Action(name="declare_book_lost", arguments={"loan_id": "loan-2"}))
    assert "\n" not in str(e.value) and trust.dropped == {f"{ENV}: return_book/write 3-6": "library/garbage step 0"}
