"""An unused import of a stubbed module does not block an env; a refused import never suggests a refused flag.

The fixture tests/fixtures/external/unused_imports is a real-looking file that imports `subprocess`
and `socket` at its top for a helper no tool calls: it imports, verifies and exports through the
CLI, every run in the sandbox. Using a stubbed module at the call is refused there: the hostile
tests in tests/sandbox/test_hostile.py (section 14) show each use refused in one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.importing.importer import ImportProblem, import_env
from catalog.store import Catalog
from sandbox.allowlist import NEVER_ALLOWED, STUBBED_IMPORTS, check_imports, never_allowed
from sandbox.loadcheck import import_hint, sandbox_load_check

ROOT = Path(__file__).resolve().parents[2]
DESK = ROOT / "tests" / "fixtures" / "external" / "unused_imports"


def cli(*args: str, catalog: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args, "--catalog", str(catalog)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    catalog = tmp_path_factory.mktemp("desk") / "catalog"
    out = cli("import", str(DESK / "ticket_desk.py"), "--config", str(DESK / "desk.json"), catalog=catalog)
    assert out.returncode == 0, out.stderr
    assert "Imported TicketDesk as ticket-desk" in out.stdout
    return catalog


def test_a_file_with_unused_stubbed_imports_verifies_in_the_sandbox(imported):
    out = cli("verify", "gate", "ticket-desk", "--json", "--examples", "30", catalog=imported)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["passed"] is True, [c for c in report["checks"] if not c["ok"]]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["initial_states_load"]["ok"] and checks["no_crash_on_typed_input"]["ok"]


def test_a_file_with_unused_stubbed_imports_exports_samples(imported, tmp_path):
    samples = tmp_path / "desk.jsonl"
    out = cli("bench", "export", "--env", "ticket-desk", "--n", "10", "--out", str(samples), catalog=imported)
    assert "wrote" in out.stdout and samples.is_file(), out.stderr
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    assert lines and {line["env_id"] for line in lines} == {"ticket-desk"}
    assert any(line["strata"]["delta_size"] > 0 for line in lines)  # writes ran, not only refusals


def test_the_static_check_passes_stubbed_modules_and_refuses_their_submodules(tmp_path):
    (tmp_path / "env.py").write_text("import subprocess, socket as s\nfrom ctypes import CDLL\nimport ctypes.util\n"
                                     "from multiprocessing.pool import ThreadPool\nimport os\n")
    assert check_imports(tmp_path) == ["import ctypes.util (env.py:3)", "import multiprocessing.pool (env.py:4)",
                                       "import os (env.py:5)"]
    assert set(STUBBED_IMPORTS) < NEVER_ALLOWED and never_allowed("ctypes.util") and not never_allowed("yaml")


def test_a_refused_import_never_suggests_a_flag_that_is_refused():
    assert import_hint(["yaml"]) == " (installed modules can be allowed for this env: --allow-module yaml)"
    never = import_hint(["ctypes.util", "urllib.request"])
    assert "--allow-module" not in never and "never allows ctypes.util, urllib.request" in never
    missing = import_hint(["definitely_not_installed_pkg"])
    assert "pip install definitely_not_installed_pkg" in missing
    both = import_hint(["yaml", "_socket"])
    assert "--allow-module yaml" in both and "--allow-module _socket" not in both


def test_import_says_what_is_refused_and_offers_no_refused_flag(tmp_path):
    module = tmp_path / "native.py"
    module.write_text("import ctypes.util\n\nclass Native:\n    def go(self):\n        return {}\n")
    with pytest.raises(ImportProblem) as refused:
        import_env(module, Catalog(tmp_path / "c"), check=sandbox_load_check)
    message = str(refused.value)
    assert "import ctypes.util (env.py:1)" in message and "never allows ctypes.util" in message
    assert "--allow-module" not in message and "\n" not in message
    plain = tmp_path / "plain.py"
    plain.write_text("import subprocess\n\nclass Plain:\n    def go(self):\n        return {}\n")
    with pytest.raises(ImportProblem, match=r"--allow-module subprocess: the sandbox never allows it .*an import of "
                                            r"it needs no flag"):
        import_env(plain, Catalog(tmp_path / "c"), check=sandbox_load_check, allow_modules=["subprocess"])
