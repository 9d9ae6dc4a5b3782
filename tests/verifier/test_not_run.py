"""Checks that ran nothing: on an env whose every job the sandbox refuses, no check passes vacuously.

The fixture (tests/fixtures/refused) imports `yaml`, installed but not allowed in the sandbox for
it, so every job is refused before its first call. Before, verify passed ten execution checks on
it with no call run and a completeness run of 0 steps exited 0.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli
from verifier.gate.checks import CheckResult
from verifier.gate.report import GateReport, render_gate_report

REFUSED = Path(__file__).resolve().parents[1] / "fixtures" / "refused"
EXECUTION = ["failure_changes_nothing", "writes_inside_write_set", "read_tools_write_nothing", "deterministic",
             "every_guard_reachable", "read_tools_keep_hidden_state", "no_interpreter_wide_change",
             "errors_signalled_as_failures"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> str:
    catalog = tmp_path_factory.mktemp("catalog")
    shutil.copytree(REFUSED, catalog / "refused")
    return str(catalog)


def test_checks_that_ran_no_call_are_not_run_and_fail_the_gate(root: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("yaml")
    status = cli.main(["verify", "refused", "--catalog", root, "--examples", "10", "--json"])
    report = GateReport.model_validate(json.loads(capsys.readouterr().out))
    assert status == 5 and not report.passed
    assert report.not_run == [*EXECUTION, "hidden_writes"]
    for check in report.checks:
        if check.name in EXECUTION:
            assert not check.ok and check.detail.startswith("not run: no call ran in ")
            assert "(the sandbox: forbidden: import yaml (env.py:7))" in check.detail
    assert {"failure_changes_nothing", "deterministic"} <= set(report.critical_failures)
    # the score (the manifest's quality score) counts them as failed: 6 of 16 scored checks passed, not 13
    scored = [c for c in report.checks if not c.informational]
    assert len(scored) == 16 and report.score == round(6 / 16, 4)
    assert not any(c.ok for c in report.checks if c.not_run)
    text = render_gate_report(report)
    assert text.splitlines()[0].endswith("; 8 checks not run (scored as failed)")
    assert "  FAIL deterministic: not run: no call ran" in text


def test_a_report_claiming_a_check_that_ran_nothing_passed_reads_as_failed() -> None:
    claimed = CheckResult.model_validate({"name": "deterministic", "ok": True, "not_run": True, "detail": "not run"})
    assert claimed.ok is False and claimed.not_run
    assert CheckResult("deterministic", True).not_run is False


def test_completeness_of_0_steps_exits_non_zero_with_one_line(root: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("yaml")
    status = cli.main(["constraints", "--completeness", "--env", "refused", "--catalog", root])
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.startswith("envforge:")]
    assert status == 1 and len(err) == 1
    assert err[0] == ("envforge: constraints --completeness measured nothing for refused: no call ran, the sandbox "
                      "refused every job (forbidden: import yaml (env.py:7))")
    assert "refused           0" in captured.out  # the table still says what was measured
