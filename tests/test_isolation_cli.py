"""Untrusted env code through the user's commands: `catalog run` and `import` run it only in the
OS sandbox, a host without namespaces is refused with the fix named, and the Python API refuses
to run non-reference code in-process unless the caller vouches for it."""

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from catalog.runtime import SqlRuntime
from catalog.store import Catalog, UntrustedCode
from sandbox.session import SandboxRuntime, open_runtime

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"


def run(*args, catalog, env=None):
    command = [sys.executable, str(ROOT / "cli.py"), *args, "--catalog", str(catalog)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=180,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def catalog(tmp_path):
    shutil.copytree(HOSTILE, tmp_path / "hostile")
    return tmp_path


def one_line(text):
    lines = [line for line in text.strip().splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


@pytest.mark.parametrize("tool, event", [("write_outside", "forbidden: write to /tmp/envforge-sandbox-escape.txt"),
                                         ("fork", "forbidden: os.fork"), ("spawn", "forbidden: os.system")])
def test_catalog_run_contains_hostile_calls(catalog, tool, event):
    Path("/tmp/envforge-sandbox-escape.txt").unlink(missing_ok=True)
    out = run("catalog", "run", "hostile", tool, catalog=catalog)
    assert out.returncode == 3, out.stderr
    assert event in out.stdout and "outcome: crash" in out.stdout
    assert not Path("/tmp/envforge-sandbox-escape.txt").exists()
    fine = run("catalog", "run", "hostile", "fine", "--args", '{"n": 4}', "--json", catalog=catalog)
    assert fine.returncode == 0 and '"counter": 4' in fine.stdout


def hostile_module(tmp_path, module_level):
    source = tmp_path / "evil_env.py"
    source.write_text("import random\n" + module_level + "\n\nclass Evil:\n    def ping(self):\n"
                      "        return {'ok': True}\n")
    return source


@pytest.mark.parametrize("module_level, expected", [
    ("open('{marker}', 'w').write('escaped')", "forbidden: write to"),
    ("random._os.system('touch {marker}')", "forbidden: os.system"),
    ("while True:\n    pass", "timeout"),
])
def test_import_runs_module_level_code_only_in_the_sandbox(tmp_path, module_level, expected):
    marker = f"/tmp/envforge-import-escape-{uuid.uuid4().hex}"
    catalog = tmp_path / "catalog"
    out = run("import", str(hostile_module(tmp_path, module_level.format(marker=marker))), catalog=catalog)
    assert out.returncode == 1, out.stdout
    assert expected in one_line(out.stderr)
    assert not Path(marker).exists()
    if catalog.exists():  # nothing registered, no load-check folder left behind
        assert not [p for p in catalog.iterdir() if not p.name.startswith(".") or p.name.startswith(".import-check")]


def test_a_host_without_namespaces_is_refused_with_the_fix_unless_the_user_opts_out(catalog):
    no_bwrap = {"ENVFORGE_BWRAP": "/bin/false"}
    refused = run("catalog", "run", "hostile", "fine", catalog=catalog, env=no_bwrap)
    assert refused.returncode == 1
    line = one_line(refused.stderr)
    assert "cannot isolate env code" in line and "--unsafe-no-isolation" in line
    allowed = run("catalog", "run", "hostile", "fine", "--unsafe-no-isolation", catalog=catalog, env=no_bwrap)
    assert allowed.returncode == 0 and "outcome: success" in allowed.stdout
    assert "without the OS sandbox" in allowed.stderr
    # The same host still runs the shipped reference envs, which are trusted and run in-process.
    reference = run("catalog", "run", "library", "get_member", "--args", '{"member_id": "M001"}', catalog=catalog,
                    env=no_bwrap)
    assert reference.returncode == 0


def test_the_python_api_refuses_untrusted_code_in_process(catalog):
    handle = Catalog(catalog).get("hostile")
    with pytest.raises(UntrustedCode, match="sandbox"):
        handle.runtime()
    runtime = open_runtime(handle)
    assert isinstance(runtime, SandboxRuntime)
    assert isinstance(open_runtime(Catalog(catalog).get("library")), SqlRuntime)  # reference envs: in-process
    with runtime:
        runtime.reset({})
        assert runtime.call({"name": "fine", "arguments": {"n": 2}}).observation == {"counter": 2}
        # A violation ends the worker; the session replays its calls on a new one and goes on.
        assert runtime.call({"name": "fork", "arguments": {}}).info["event"] == "forbidden: os.fork"
        assert runtime.call({"name": "fine", "arguments": {"n": 3}}).observation == {"counter": 5}
        assert runtime.snapshot() == {"counter": 5}
