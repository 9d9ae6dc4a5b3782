"""audit-sim, bench export and rollout on a local Ray cluster: the same results as the local executor, and no
unit lost or recorded twice when a run is interrupted or a worker dies.

Every Ray path joins the session's 2-CPU cluster (`ray_cluster`); the commands run in-process
(`cli.main`), so their wiring (recipes, the catalog root) is what is tested.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import cli
from catalog.bench.envsimbench import read_jsonl
from catalog.store import Catalog
from executors import ExecutorSpec
from synth.llm import LLMClient, ModelSpec
from synth.rollout import (
    TRAJECTORIES_FILE,
    ModelAgentFactory,
    RolloutConfig,
    plan_units,
    reference_agent,
    run_rollouts,
)
from synth.simulation import make_simulator
from tests.llm_server import Reply
from tests.synth._ray_units import CannotBuild, DiesOnce
from verifier.audit.run import RESULTS_FILE, AuditAborted, run_audit

RAY = ExecutorSpec("ray")
TIMINGS = {"latency_s", "seconds_per_sample", "wall_seconds", "wall_seconds_per_sample", "sessions", "plots"}


def _run(*argv: str, capsys: pytest.CaptureFixture[str]) -> Any:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return json.loads(out.out)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _export_report(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if "seconds" not in k and k != "written"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with `local.jsonl`, exported by the local executor (what every test here reads), and its report."""
    root = tmp_path_factory.mktemp("bench")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["bench", "export", "--n", "40", "--catalog", str(root / "catalog"),
                         "--out", str(root / "local.jsonl"), "--json"])
    assert code in (0, 1)
    (root / "local-report.json").write_text(out.getvalue(), encoding="utf-8")
    return root


def test_export_and_spec_audit_match_the_local_executor(bench, ray_cluster, capsys):
    catalog = str(bench / "catalog")
    exported = {"local": ([i.id for i in read_jsonl(bench / "local.jsonl")[0]],
                          _export_report(json.loads((bench / "local-report.json").read_text(encoding="utf-8"))))}
    report = _run("bench", "export", "--n", "40", "--catalog", catalog, "--out", str(bench / "ray.jsonl"),
                  "--executor", "ray", "--json", capsys=capsys)
    items, problems = read_jsonl(bench / "ray.jsonl")
    assert not problems and len(items) >= 30
    exported["ray"] = ([i.id for i in items], _export_report(report))
    assert exported["ray"] == exported["local"]  # the same items in the same order, the same report

    reports = {kind: _run("audit-sim", "--model", "spec", "--bench", str(bench / "local.jsonl"), "--catalog", catalog,
                          "--out", str(bench / f"audit-{kind}"), "--executor", kind, "--json", capsys=capsys)
               for kind in ("local", "ray")}
    local, ray = ({k: v for k, v in r.items() if k not in TIMINGS} for r in (reports["local"], reports["ray"]))
    assert ray == local and local["samples"] == len(exported["local"][0]) and local["verified"] > 0
    assert len(_lines(bench / "audit-ray" / RESULTS_FILE)) == local["samples"]


def test_interrupted_and_killed_ray_audits_lose_and_duplicate_nothing(bench, ray_cluster, tmp_path):
    items, _ = read_jsonl(bench / "local.jsonl")
    spec = make_simulator("spec")
    seen: list[int] = []

    def interrupt(done: int, total: int, record: dict[str, Any] | None) -> None:
        seen.append(done)
        if record is not None and len(seen) > 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_audit(items, spec, tmp_path / "a", workers=2, progress=interrupt, executor=RAY, plots=False)
    first = [r["id"] for r in _lines(tmp_path / "a" / RESULTS_FILE)]
    assert 8 <= len(first) < len(items) and len(set(first)) == len(first)
    # The resumed run's first answer kills its worker: Ray restarts it and the unit runs again.
    marker = tmp_path / "died"
    report = run_audit(items, DiesOnce(str(marker)), tmp_path / "a", workers=2, executor=RAY, plots=False)
    ids = [r["id"] for r in _lines(tmp_path / "a" / RESULTS_FILE)]
    assert marker.exists() and sorted(ids) == sorted(i.id for i in items)  # every item once, none twice
    assert report.samples == len(items) and report.errors == 0 and report.sessions == 2


def test_a_worker_that_cannot_build_its_simulator_stops_the_audit_in_one_line(bench, ray_cluster, tmp_path):
    items, _ = read_jsonl(bench / "local.jsonl")
    with pytest.raises(AuditAborted) as aborted:  # not one miss per sample: nothing was asked
        run_audit(items, CannotBuild(), tmp_path / "a", executor=RAY, plots=False)
    message = str(aborted.value)
    assert "\n" not in message and "cannot build its simulator" in message and "rerun to resume" in message
    assert (tmp_path / "a" / RESULTS_FILE).read_text() == ""


def test_an_llm_audit_on_ray_reaches_the_drivers_endpoint(bench, ray_cluster, llm_server, tmp_path, monkeypatch,
                                                          capsys):
    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.scripted]\nbase_url = "{llm_server.base_url}"\nmodel = "test-model"\n'
                        "json_schema = true\ncontext_window = 32768\n", encoding="utf-8")
    monkeypatch.setenv("ENVFORGE_MODELS", str(registry))  # the driver's only: workers get the resolved entry
    llm_server.script(lambda request: {"feedback": "{}", "config_changes": []})
    report = _run("audit-sim", "--model", "scripted", "--bench", str(bench / "local.jsonl"), "--limit", "4",
                  "--catalog", str(tmp_path / "c"), "--out", str(tmp_path / "a"), "--executor", "ray", "--json",
                  capsys=capsys)
    records = _lines(tmp_path / "a" / RESULTS_FILE)
    assert report["samples"] == 4 and report["errors"] == 0 and report["model"] == "scripted"
    assert len(records) == 4 and {r["model"] for r in records} == {"scripted"}
    assert len(llm_server.chat_requests) == 4  # asked by the actors, over HTTP, once per sample


def test_property_audit_refuses_ray_in_one_line(tmp_path, capsys):
    code = cli.main(["audit-sim", "--model", "spec", "--property-based", "--executor", "ray", "--catalog",
                     str(tmp_path / "c"), "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "--property-based runs on this machine only" in err


def _untimed(value: Any) -> Any:
    """`value` without its timings (every `*seconds` key, `started_at`)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if "seconds" not in k and k != "started_at"}
    return [_untimed(v) for v in value] if isinstance(value, list) else value


def _trajectories(out: Path) -> dict[str, Any]:
    lines = _lines(out / TRAJECTORIES_FILE)
    assert len({t["id"] for t in lines}) == len(lines)  # no unit written twice
    return {t["id"]: _untimed(t) for t in lines}


def test_rollouts_on_ray_equal_local_and_resume_without_duplicates(ray_cluster, tmp_path, capsys):
    catalog = str(tmp_path / "c")
    for kind in ("local", "ray"):
        summary = _run("rollout", "--model", "reference", "--all", "--simulator", "spec", "--catalog", catalog,
                       "--out", str(tmp_path / kind), "--executor", kind, "--json", capsys=capsys)
        assert summary["trajectories"] == summary["verified"] == 15
    assert _trajectories(tmp_path / "ray") == _trajectories(tmp_path / "local")

    units, _ = plan_units(Catalog(catalog), None)
    config = RolloutConfig(model="reference")

    def interrupt(done: int, total: int, trajectory: Any) -> None:
        if trajectory is not None and done >= 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_rollouts(Catalog(catalog), units, config, tmp_path / "r", agent_factory=reference_agent, progress=interrupt,
                     executor=RAY)
    assert 5 <= len(_trajectories(tmp_path / "r")) < len(units)
    again = run_rollouts(Catalog(catalog), units, config, tmp_path / "r", agent_factory=reference_agent, executor=RAY)
    assert sorted(_trajectories(tmp_path / "r")) == sorted(u.id for u in units) and not again.errors


def test_a_model_agent_on_ray_reaches_the_drivers_endpoint(ray_cluster, llm_server, tmp_path):
    llm_server.script(Reply(content=None, tool_calls=[("search_books", {"query": "calvino", "available_only": True})]),
                      Reply(content=None, tool_calls=[("borrow_book", {"member_id": "M002", "book_id": "B010"})]),
                      "Grace now has Invisible Cities.")
    catalog = Catalog(tmp_path / "c")
    units, _ = plan_units(catalog, ["library"], "library-borrow-calvino")
    model = ModelSpec(name="scripted", base_url=llm_server.base_url, model="test-model", tool_calls=True)
    factory = ModelAgentFactory.of(LLMClient(model, timeout=10.0), max_tokens=64)
    result = run_rollouts(catalog, units, RolloutConfig(model="scripted"), tmp_path / "o", agent_factory=factory,
                          concurrency=1, executor=RAY)
    assert not result.errors
    (t,) = result.trajectories
    assert t["success"] and t["end"] == "final" and t["usage"]["calls"] == 3
    assert len(llm_server.chat_requests) == 3
