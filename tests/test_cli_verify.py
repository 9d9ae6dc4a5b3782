"""`verify` as actions (gate, mutants, write-plan), and the forms before them still parsing the same."""

import json
import shutil

import pytest

from catalog.store import REFERENCE_DIR
from cli import build_parser
from cli.commands.verify import cmd_verify_gate, cmd_verify_mutants, cmd_verify_write_plan
from tests.test_cli import run

FIELDS = ("env_id", "all", "no_reference", "json", "examples", "seed", "gate", "workers", "timeout", "count", "env")


def parsed(*argv: str) -> dict:
    args = vars(build_parser().parse_args(["verify", *argv]))
    return {key: args.get(key) for key in ("handler", "verify_command", *FIELDS)}


@pytest.mark.parametrize("old, new", [
    (["store"], ["gate", "store"]),
    (["store", "--json", "--examples", "40", "--gate", "0.9", "--seed", "3"],
     ["gate", "store", "--json", "--examples", "40", "--gate", "0.9", "--seed", "3"]),
    (["--all", "--no-reference", "--workers", "1", "--timeout", "2"],
     ["gate", "--all", "--no-reference", "--workers", "1", "--timeout", "2"]),
    (["--json", "--catalog", "/tmp/x", "bank"], ["gate", "bank", "--json", "--catalog", "/tmp/x"]),
])
def test_the_old_gate_form_parses_as_verify_gate(old, new):
    before, after = parsed(*old), parsed(*new)
    assert before["handler"] is cmd_verify_gate and before["verify_command"] == "gate"
    assert {k: before[k] for k in FIELDS if k not in ("count", "env")} == \
        {k: after[k] for k in FIELDS if k not in ("count", "env")}


@pytest.mark.parametrize("old, new", [
    (["--mutants", "200", "--json"], ["mutants", "200", "--json"]),
    (["--mutants", "6", "--env", "store"], ["mutants", "6", "--env", "store"]),
    (["store", "--mutants", "6"], ["mutants", "6", "--env", "store"]),  # the env as ENV_ID
    (["--mutants", "9", "--examples", "120", "--seed", "2"], ["mutants", "9", "--seed", "2"]),  # capped at 40
])
def test_the_old_mutants_form_parses_as_verify_mutants(old, new):
    before, after = parsed(*old), parsed(*new)
    assert before["handler"] is after["handler"] is cmd_verify_mutants
    assert {k: before[k] for k in ("count", "env", "json", "examples", "seed", "workers", "timeout")} == \
        {k: after[k] for k in ("count", "env", "json", "examples", "seed", "workers", "timeout")}
    assert after["examples"] == 40


def test_the_old_write_plan_form_parses_as_verify_write_plan():
    before, after = parsed("bank", "--write-plan"), parsed("write-plan", "bank")
    assert before["handler"] is after["handler"] is cmd_verify_write_plan and before["env_id"] == after["env_id"] == "bank"


def test_defaults_come_from_the_gate_settings():
    from sandbox.pool import DEFAULT_TIMEOUT
    from verifier.gate.settings import GATE, MUTATION, VERIFY

    gate, mutants = parsed("gate", "bank"), parsed("mutants", "5")
    assert (gate["gate"], gate["examples"], gate["timeout"]) == (GATE, VERIFY.examples, DEFAULT_TIMEOUT)
    assert (mutants["examples"], mutants["timeout"]) == (MUTATION.examples, DEFAULT_TIMEOUT)


def test_help_lists_the_actions_and_every_registered_check():
    from verifier.gate.checks import CHECKS

    out = run("verify", "--help")
    assert out.returncode == 0, out.stderr
    assert all(action in out.stdout for action in ("gate", "mutants", "write-plan"))
    assert all(name in out.stdout for name in CHECKS) and "informational" in out.stdout


def test_verify_gate_all_counts_an_unreadable_folder_as_failed(tmp_path):
    (tmp_path / "half-written").mkdir()
    for argv in (["verify", "gate", "--all", "--no-reference", "--json"], ["verify", "--all", "--no-reference", "--json"]):
        out = run(*argv, catalog=tmp_path)
        assert out.returncode == 5, out.stderr
        (report,) = json.loads(out.stdout)
        assert report["env"] == "half-written" and report["critical_failures"] == ["env_folder_reads"]


def test_verify_write_plan_writes_the_plan(tmp_path):
    shutil.copytree(REFERENCE_DIR / "bank", tmp_path / "mybank")
    (tmp_path / "mybank" / "plan.json").unlink()
    data = json.loads((tmp_path / "mybank" / "env.json").read_text())
    (tmp_path / "mybank" / "env.json").write_text(json.dumps(dict(data, id="mybank")))
    out = run("verify", "write-plan", "mybank", catalog=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Wrote" in out.stdout and json.loads((tmp_path / "mybank" / "plan.json").read_text())["env_id"] == "mybank"


@pytest.mark.parametrize("argv, needle", [
    (["verify"], "name one env (python cli.py verify gate library) or pass --all"),
    (["verify", "mutants", "0"], "argument N: must be at least 1, got 0"),
    (["verify", "write-plan"], "the following arguments are required: ENV_ID"),
    (["verify", "--write-plan"], "name one env: python cli.py verify write-plan ENV_ID"),
])
def test_bad_verify_input_is_one_line(tmp_path, argv, needle):
    out = run(*argv, catalog=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr and needle in out.stderr, out.stderr
