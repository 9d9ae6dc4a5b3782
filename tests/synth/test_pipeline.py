"""The synthesis pipeline end to end on the procedural backend: real graph, sandbox, catalog."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalog.store import Catalog
from sandbox.pool import SandboxPool
from synth.run import RunConfig, RunError, synthesize
from verifier.gate.run import verify_env

ROOT = Path(__file__).resolve().parents[2]


def _user_envs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def test_small_run_registers_verified_envs_with_a_report(tmp_path):
    report = synthesize(RunConfig(n=3, catalog=str(tmp_path), workers=1, seed=11), progress=False)
    assert report.registered == 3 == len(_user_envs(tmp_path))
    for key in ("run_id", "requested", "proposed", "deduplicated", "rejected", "registered", "yield", "tokens_in",
                "tokens_out", "cost_usd", "wall_s", "stages"):
        assert key in report.model_dump(mode="json")
    assert report.yield_ == round(3 / report.proposed, 4)
    assert set(report.stages) >= {"mine", "dedup", "plan", "code", "static_check", "execute", "gate", "register"}
    run_dir = tmp_path / ".runs" / report.run_id
    for name in ("report.json", "report.md", "distributions.png", "stages.png", "realism.png"):
        assert (run_dir / name).stat().st_size > 0
    realism = report.model_dump(mode="json")["realism"]
    assert realism["envs"] == 3 and realism["value_constraint_violations"] == 0
    assert realism["unnatural_parameters"] == 0 and realism["solution_calls"]["max"] <= 10
    written = (run_dir / "report.json").read_text(encoding="utf-8")
    assert written == json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"
    assert list(json.loads(written)) == [  # report.json's keys, in order, as before the report was typed
        "run_id", "backend", "model", "mode", "seed", "requested", "proposed", "deduplicated", "existing", "rejected",
        "failed", "registered", "yield", "tokens_in", "tokens_out", "cost_usd", "cost_per_registered_env_usd", "wall_s",
        "stages", "rejections", "rejection_checks", "skipped_existing", "envs", "distinct_schemas", "distributions",
        "judge", "mining", "realism", "shortfall", "sessions_wall_s", "plots", "catalog", "executor"]
    catalog = Catalog(tmp_path)
    with SandboxPool(workers=1) as pool:
        for env_id in _user_envs(tmp_path):
            handle = catalog.get(env_id)
            assert (handle.path / "plan.json").is_file()
            assert handle.manifest.provenance.backend == "synth:procedural"
            assert handle.tasks()
            verdict = verify_env(handle, pool, examples=25, effort=0.3)
            assert verdict.passed, verdict
            # one quality score: the gate at another effort (as `verify gate` runs it) gives the manifest's verdicts
            quality = handle.manifest.quality
            assert quality is not None and quality.score == verdict.score
            assert quality.checks == {c.name: c.ok for c in verdict.checks}


def test_same_seed_same_envs(tmp_path):
    first = synthesize(RunConfig(n=2, catalog=str(tmp_path / "a"), workers=1, seed=3), progress=False)
    second = synthesize(RunConfig(n=2, catalog=str(tmp_path / "b"), workers=1, seed=3), progress=False)
    assert first.registered == second.registered == 2
    ids = _user_envs(tmp_path / "a")
    assert ids == _user_envs(tmp_path / "b")
    for env_id in ids:
        for name in ("env.py", "tasks.jsonl", "plan.json", "states/default.json"):
            assert (tmp_path / "a" / env_id / name).read_bytes() == (tmp_path / "b" / env_id / name).read_bytes()


def test_resume_of_unknown_run_is_a_clear_error(tmp_path):
    with pytest.raises(RunError, match="no run 'run-nope'"):
        synthesize(RunConfig(n=1, catalog=str(tmp_path)), resume="run-nope", progress=False)


@pytest.mark.slow
def test_sigkill_midway_then_resume_registers_exactly_n_without_duplicates(tmp_path):
    """Killed with envs registered and others in flight; each synthesized env costs seconds, so n stays small.

    n = 3, killed once one env is registered: the resume still has slots to finish (1 or 2) and one it must not redo.
    """
    n, killed_at = 3, 1
    command = [sys.executable, "cli.py", "synthesize", "--n", str(n), "--catalog", str(tmp_path), "--json"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None and len(_user_envs(tmp_path)) < killed_at:
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)  # the whole group: driver, workers, sandboxes, like a crash
    process.wait()
    killed_with = len(_user_envs(tmp_path))
    assert killed_at <= killed_with < n
    run_id = next((tmp_path / ".runs").iterdir()).name
    done = subprocess.run([sys.executable, "cli.py", "synthesize", "--resume", run_id, "--catalog", str(tmp_path),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.stdout.startswith("{"), done.stderr
    report = json.loads(done.stdout)
    assert done.returncode == 0, (done.stderr, {k: report[k] for k in ("requested", "proposed", "registered",
                                                                       "rejected", "failed", "rejections")})
    assert report["registered"] == n
    envs = _user_envs(tmp_path)
    assert len(envs) == n
    with sqlite3.connect(tmp_path / ".runs" / run_id / "run.sqlite") as db:
        registered = [row[0] for row in db.execute("SELECT env_id FROM slots WHERE status = 'registered'")]
    assert sorted(registered) == envs  # each registered slot is one env folder, none twice


@pytest.mark.slow
def test_ctrl_c_exits_130_with_the_resume_command_and_resume_completes(tmp_path):
    n = 2  # interrupted after the first env: the resume registers the second and keeps the first
    process = subprocess.Popen([sys.executable, "cli.py", "synthesize", "--n", str(n), "--workers", "1", "--catalog",
                                str(tmp_path)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None and len(_user_envs(tmp_path)) < 1:
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert "--resume run-" in err
    run_id = err.split("--resume ", 1)[1].split()[0]
    done = subprocess.run([sys.executable, "cli.py", "synthesize", "--resume", run_id, "--catalog", str(tmp_path),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["registered"] == n == len(_user_envs(tmp_path))


def test_a_slot_rewrites_only_the_env_it_wrote_and_never_a_hand_edit(tmp_path):
    """The register step's guard: resume may redo its own write; other writers' and edited envs are kept."""
    from catalog.models import Provenance
    from synth.nodes import _taken

    store = Catalog("/nonexistent-envforge-catalog").get("store")
    manifest = store.manifest.model_copy(update={"id": "shop", "provenance": Provenance(
        backend="synth:procedural", source="run run-a slot 3")})
    catalog = Catalog(tmp_path)
    slot = {"env_id": "shop", "run_id": "run-a", "slot": 3}
    assert _taken(catalog, slot) == ""  # nothing there yet
    handle = catalog.write_env(manifest, store.source(), {name: store.state(name) for name in store.state_names()})
    assert _taken(catalog, slot) == ""  # its own, unedited: a resumed register step rewrites it
    assert "written by run run-a slot 3" in _taken(catalog, {**slot, "run_id": "run-b"})
    assert "written by run run-a slot 3" in _taken(catalog, {**slot, "slot": 4})
    with (handle.path / "env.py").open("a") as source:
        source.write("# reviewed\n")
    assert "edited by hand" in _taken(catalog, slot)
    (handle.path / "env.json").write_text("{")
    assert "does not read" in _taken(catalog, slot)
