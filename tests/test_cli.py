"""The CLI as a user runs it: a subprocess, exit statuses, JSON output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, catalog=None, env=None):
    command = [sys.executable, str(ROOT / "cli.py"), *args]
    if catalog is not None:
        command += ["--catalog", str(catalog)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0
    for command in ("synthesize", "audit-sim", "verify", "constraints", "bench", "catalog", "import", "models"):
        assert command in out.stdout


def test_catalog_list_json_has_the_reference_envs(tmp_path):
    out = run("catalog", "list", "--json", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    envs = json.loads(out.stdout)
    kinds = [e["kind"] for e in envs]
    assert kinds.count("sql") >= 3 and kinds.count("class") >= 1
    for env in envs:
        assert {"id", "name", "kind", "tools", "states"} <= env.keys()
        assert env["tools"] >= 6 and env["states"] >= 2


def test_catalog_run_executes_a_write_and_prints_its_delta(tmp_path):
    out = run("catalog", "run", "library", "borrow_book", "--args", '{"member_id": "M002", "book_id": "B010"}',
              "--json", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["outcome"] == "success" and result["state"] == "default"
    assert {"op": "modify", "path": ["books", "B010", "status"], "value": "on_loan"} in result["delta"]
    human = run("catalog", "run", "bank", "close_account", "--args", '{"account_id": "A002", "payout_account_id": "A001"}',
                catalog=tmp_path)
    assert human.returncode == 0 and "delta (9 ops)" in human.stdout


def test_catalog_run_on_the_class_env_and_a_rule_failure(tmp_path):
    out = run("catalog", "run", "store", "ship_order", "--args", '{"order_id": "O-404", "carrier": "UPS"}', "--json",
              catalog=tmp_path)
    assert out.returncode == 0
    result = json.loads(out.stdout)
    assert result["outcome"] == "failure" and result["delta"] == []


def test_catalog_show(tmp_path):
    out = run("catalog", "show", "clinic", catalog=tmp_path)
    assert out.returncode == 0 and "book_appointment(" in out.stdout and "Rules:" in out.stdout
    data = json.loads(run("catalog", "show", "store", "--json", catalog=tmp_path).stdout)
    assert data["kind"] == "class" and len(data["tasks"]) >= 3


@pytest.mark.parametrize("args, message", [
    (["catalog", "show", "atlantis"], "Unknown env 'atlantis'. Known: bank"),
    (["catalog", "run", "library", "get_member", "--args", "{oops"], "--args is not valid JSON"),
    (["catalog", "run", "library", "get_member", "--state", "nope"], "has no state 'nope'"),
])
def test_user_errors_are_one_line_without_traceback(tmp_path, args, message):
    out = run(*args, catalog=tmp_path)
    assert out.returncode == 1
    assert message in out.stderr and "Traceback" not in out.stderr


def test_an_invalid_call_exits_3(tmp_path):
    out = run("catalog", "run", "library", "get_member", "--args", "{}", catalog=tmp_path)
    assert out.returncode == 3 and "missing a required argument" in out.stdout


def test_synthesize_needs_n_or_resume_and_a_model_for_llm(tmp_path):
    out = run("synthesize", catalog=tmp_path)
    assert out.returncode == 1 and "give --n N" in out.stderr
    out = run("synthesize", "--n", "2", "--backend", "llm", catalog=tmp_path)
    assert out.returncode == 1 and "needs --model" in out.stderr
    out = run("synthesize", "--n", "2", "--model", "no-such-model", catalog=tmp_path)
    assert out.returncode == 1 and "unknown model 'no-such-model'" in out.stderr


def test_models_lists_the_registry_without_probing(tmp_path):
    out = run("models", "--json", "--no-probe", catalog=tmp_path)
    names = {row["name"] for row in json.loads(out.stdout)}
    assert out.returncode == 0 and {"gpt-4o-mini", "local-4b", "smollm2-135m"} <= names


def test_catalog_search_ranks_the_matching_env_first(tmp_path):
    out = run("catalog", "search", "members borrow and return books, fines for late returns", "--json",
              catalog=tmp_path)
    assert out.returncode == 0 and json.loads(out.stdout)[0]["id"] == "library"


def test_a_broken_env_folder_warns_but_listing_works(tmp_path):
    (tmp_path / "half-written").mkdir()
    out = run("catalog", "list", "--json", catalog=tmp_path)
    assert out.returncode == 0
    assert "skipped" in out.stderr and "half-written" in out.stderr
    assert len(json.loads(out.stdout)) == 4


def test_constraints_spec_and_completeness(tmp_path):
    out = run("constraints", "library", catalog=tmp_path)
    assert out.returncode == 0 and "guard L" in out.stdout and "effect L" in out.stdout
    spec = json.loads(run("constraints", "store", "--json", catalog=tmp_path).stdout)
    assert spec["tools"]["checkout"]["inferred_kind"] == "write"
    report = run("constraints", "--completeness", "--env", "store", "--json", catalog=tmp_path)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert {"steps", "exact", "abstained", "wrong", "guards_total", "guards_triggered", "failures_explained"} <= data.keys()
    assert data["wrong"] == 0
    said = report.stderr.splitlines()  # without a terminal too: the env measured, then the run's length
    assert said[0] == "measuring store ... [0/1 envs, 0s elapsed]" and said[-1].startswith(
        "constraints --completeness: 1/1 envs (100%) in "), said


# A planted simulator bug (as mutation testing plants bugs): the real completeness run executes the
# real env, and the spec-only simulator's observations of `get_product` come back altered.
_PLANTED_WRONG = """
import sys
import cli
from constraints.interpreter import Interpreter
real_run = Interpreter.run
def planted(self, tool, arguments):
    observation, outcome, delta = real_run(self, tool, arguments)
    return ({"planted": observation} if tool == "get_product" else observation), outcome, delta
Interpreter.run = planted
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("as_json", [True, False])
def test_completeness_exits_4_when_the_simulator_is_wrong(tmp_path, as_json):
    command = [sys.executable, "-c", _PLANTED_WRONG, "constraints", "--completeness", "--env", "store",
               *(["--json"] if as_json else []), "--catalog", str(tmp_path)]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 4, out.stderr
    if as_json:
        report = json.loads(out.stdout)  # the report is still printed in full
        assert report["wrong"] > 0 and report["wrong_examples"][0]["action"]["name"] == "get_product"
    else:
        assert "store" in out.stdout


def test_import_command(tmp_path):
    fixture = ROOT / "tests" / "fixtures" / "external" / "bookshop"
    out = run("import", str(fixture / "bookshop_env.py"), "--config", str(fixture / "shop_config.json"),
              "--id", "shop", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Imported BookshopSystem as shop" in out.stdout
    listed = json.loads(run("catalog", "list", "--json", catalog=tmp_path).stdout)
    assert "shop" in [e["id"] for e in listed]
    again = run("import", str(fixture / "bookshop_env.py"), "--id", "shop", catalog=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert "--replace" in again.stderr and "replace=True" not in again.stderr  # the CLI flag, not the keyword


def test_verify_command(tmp_path):
    out = run("verify", "store", "--json", "--examples", "40", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {"env", "score", "passed", "checks"} <= report.keys() and report["passed"] is True
    assert all({"name", "ok", "counterexample"} <= c.keys() for c in report["checks"])
    assert run("verify", catalog=tmp_path).returncode == 1
    mutants = run("verify", "--mutants", "6", "--env", "store", "--json", catalog=tmp_path)
    assert mutants.returncode == 0, mutants.stderr
    data = json.loads(mutants.stdout)
    assert {"mutants", "killed", "survived", "mutation_score", "false_alarms"} <= data.keys() and data["mutants"] == 6
