"""`python cli.py replay` as a user runs it: a subprocess, the sandbox, exit statuses, JSON and text output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main
from tests.verifier.test_replay import CONFIG, DESK, SCRIPT, as_trajectory, direct_run

ROOT = Path(__file__).resolve().parents[1]


def run(*args, catalog):
    command = [sys.executable, str(ROOT / "cli.py"), *args, "--catalog", str(catalog)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def desk(tmp_path_factory):
    """The help-desk fixture imported with the CLI's import command (its module is loaded only in the sandbox)."""
    folder = tmp_path_factory.mktemp("cli-desk")
    (folder / "help_desk.py").write_text(DESK)
    (folder / "monday.json").write_text(json.dumps(CONFIG))
    assert main(["import", str(folder / "help_desk.py"), "--config", str(folder / "monday.json"),
                 "--catalog", str(folder / "cat")]) == 0
    return folder


def test_replay_of_a_trajectory_prints_each_step_as_the_class_does(desk):
    (desk / "trajectory.json").write_text(json.dumps({"messages": as_trajectory(SCRIPT)}))
    out = run("replay", "help-desk", "--calls", str(desk / "trajectory.json"), "--json", "--final-state",
              catalog=desk / "cat")
    assert out.returncode == 3, out.stderr  # one call crashes and two are invalid
    data = json.loads(out.stdout)
    assert data["env"] == "help-desk" and data["state"] == "monday"
    expected = direct_run(desk / "help_desk.py", SCRIPT)
    assert [s["index"] for s in data["steps"]] == list(range(len(SCRIPT)))
    for step, call, (raised, observation, _) in zip(data["steps"], SCRIPT, expected, strict=True):
        assert (step["name"], step["arguments"]) == (call["name"], call["arguments"])
        assert set(step) == {"index", "name", "arguments", "outcome", "observation", "delta", "info"}
        if not raised:
            assert step["observation"] == observation
    assert data["steps"][5]["outcome"] == "crash" and data["steps"][5]["info"]["exception"] == "KeyError"
    assert data["steps"][2]["delta"] == [{"op": "modify", "path": ["tickets", "T2", "agent"], "value": "ana"}]
    assert data["final_state"] == expected[-1][2]


def test_replay_text_output_from_a_state_file(desk, tmp_path, capsys):
    (tmp_path / "calls.jsonl").write_text('{"name": "open_ticket", "arguments": "{\\"title\\": \\"fan noise\\"}"}\n'
                                          '{"name": "queue", "arguments": {}}\n')
    (tmp_path / "state.json").write_text(json.dumps(dict(CONFIG, next_id=40)))
    status = main(["replay", "help-desk", "--calls", str(tmp_path / "calls.jsonl"), "--state",
                   str(tmp_path / "state.json"), "--catalog", str(desk / "cat")])  # the env still runs in the sandbox
    out = capsys.readouterr()
    assert status == 0, out.err
    lines = out.out.splitlines()
    assert lines[0] == f"env help-desk, state {tmp_path / 'state.json'}: 2 calls"
    assert lines[1] == '[0] open_ticket({"title": "fan noise"})  (line 1)'
    assert '  observation: {"success": true, "ticket_id": "T40"}' in lines
    assert '    modify ["next_id"] = 41' in lines and '  observation: ["T1", "T40"]' in lines
    assert lines[-1] == "2 calls: 2 success"


@pytest.mark.parametrize("content, extra, message", [
    ('{"name": "queue"}\n{"name": "queue", "arguments": {}\n', [], "calls.jsonl: line 2: not valid JSON"),
    ('[{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"type": "function"}]}]', [],
     "messages[1].tool_calls[0]: expected"),
    ('{"name": "queue"}\n', ["--state", "tuesday"], "has no state 'tuesday'. Available: monday"),
    (None, [], "No such file or directory"),
])
def test_bad_input_is_one_line_and_exit_1(desk, tmp_path, capsys, content, extra, message):
    if content is not None:
        (tmp_path / "calls.jsonl").write_text(content)
    status = main(["replay", "help-desk", "--calls", str(tmp_path / "calls.jsonl"), *extra, "--catalog", str(desk / "cat")])
    out = capsys.readouterr()
    assert status == 1 and out.out == ""
    assert out.err.startswith("envforge: ") and message in out.err and out.err.count("\n") == 1


def test_help_lists_replay(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    assert "OpenAI-messages trajectory" in capsys.readouterr().out
