"""`bench export|import` and `audit-sim` as a user runs them (reference envs, the spec simulator)."""

import json
import shutil

import pytest

from tests.test_cli import run


@pytest.fixture(scope="module")
def catalog(synthesized_catalog, tmp_path_factory):
    """Eight synthesized envs beside the reference ones (enough to fill small quotas), copied: `bench import` writes."""
    return shutil.copytree(synthesized_catalog, tmp_path_factory.mktemp("catalog") / "c", symlinks=True)


def test_export_audit_failures_and_import_round_trip(tmp_path, catalog):
    samples = tmp_path / "bench.jsonl"
    out = run("bench", "export", "--n", "40", "--out", str(samples), "--json", catalog=catalog)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["quotas_met"] and sum(b["found"] for b in report["buckets"].values()) == 40
    assert sum(1 for _ in samples.open()) == 40

    audit_dir = tmp_path / "audit"
    out = run("audit-sim", "--model", "spec", "--bench", str(samples), "--out", str(audit_dir), "--json",
              catalog=catalog)
    assert out.returncode == 0, out.stderr
    audit = json.loads(out.stdout)
    for key in ("model", "mode", "samples", "fm", "cm_strict", "cm_compat", "by_delta", "tokens_in", "tokens_out",
                "cost_usd"):
        assert key in audit
    assert audit["samples"] == 40 and audit["by_delta"]["0"]["samples"] > 0

    again = run("audit-sim", "--model", "spec", "--bench", str(samples), "--out", str(audit_dir), "--json",
                catalog=catalog)
    assert json.loads(again.stdout)["samples"] == 40  # resumed: nothing asked twice, same report
    assert sum(1 for _ in (audit_dir / "results.jsonl").open()) == 40

    hard = tmp_path / "hard.jsonl"
    out = run("bench", "export", "--from-audit", str(audit_dir), "--failures", "--out", str(hard), catalog=catalog)
    assert out.returncode == 0, out.stderr
    wrong = sum(1 for line in (audit_dir / "results.jsonl").open() if not (json.loads(line)["fm"]
                                                                        and json.loads(line)["cm_strict"]))
    assert sum(1 for _ in hard.open()) == wrong

    theirs = tmp_path / "bench.json"
    out = run("bench", "export", "--n", "20", "--format", "envsimbench", "--out", str(theirs), catalog=catalog)
    assert out.returncode == 0, out.stderr
    data = json.loads(theirs.read_text())
    assert {"task_info", "step_detail", "env_code"} <= data[0].keys()
    data.append({"task_info": {}, "step_detail": {"action": {"name": "x"}}})  # an unusable sample
    theirs.write_text(json.dumps(data))
    out = run("bench", "import", str(theirs), "--json", catalog=catalog)
    summary = json.loads(out.stdout)
    assert out.returncode == 0 and summary["usable"] == 20 and summary["unusable"] == 1


def test_split_by_env_writes_disjoint_files(tmp_path, catalog):
    samples = tmp_path / "s.jsonl"
    out = run("bench", "export", "--n", "20", "--split-by", "env", "--out", str(samples), catalog=catalog)
    assert out.returncode == 0, out.stderr
    envs = []
    for part in ("s.train.jsonl", "s.test.jsonl"):
        envs.append({json.loads(line)["env_id"] for line in (tmp_path / part).open()})
    assert envs[0] and envs[1] and not envs[0] & envs[1]


def test_audit_with_an_unreachable_endpoint_says_how_to_start_one(tmp_path, catalog):
    samples = tmp_path / "s.jsonl"
    run("bench", "export", "--n", "10", "--out", str(samples), catalog=catalog)
    out = run("audit-sim", "--model", "local-4b", "--bench", str(samples), "--out", str(tmp_path / "a"),
              catalog=catalog)
    assert out.returncode == 1
    assert "8013" in out.stderr and ("vllm" in out.stderr.lower() or "llamafactory" in out.stderr)


def test_audit_on_a_fresh_catalog_exports_the_default_samples_first(tmp_path):
    out = run("audit-sim", "--model", "spec", "--limit", "12", "--json", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    said = out.stderr.strip().splitlines()  # the one line, then progress lines if the export took long enough
    assert "exporting the default set" in said[0] and all(line.startswith(("bench export", "audit-sim"))
                                                          for line in said[1:]), said
    bench = tmp_path / ".bench" / "samples.jsonl"
    assert bench.is_file() and len(bench.read_text().splitlines()) > 100  # the reference envs alone fill 207 of 400
    assert json.loads(out.stdout)["samples"] == 12
    again = run("audit-sim", "--model", "spec", "--limit", "12", "--json", catalog=tmp_path)
    assert again.returncode == 0 and "exporting" not in again.stderr  # exported once, then reused
