"""`verify gate` on the large-state fixture (tests/fixtures/bigstate), at a small size: verdict and progress line.

The 5 MB measurement is bench/bigstate.py; this is the same env and generator, a few dozen users.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "bigstate"
sys.path.insert(0, str(FIXTURE))

import make_state  # noqa: E402


def cli(*args: str, catalog: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args, "--catalog", str(catalog)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bigstate")
    config = folder / "store.json"
    config.write_text(json.dumps(make_state.state(30, seed=0)))
    out = cli("import", str(FIXTURE / "retail_store.py"), "--config", str(config), "--id", "retail",
              catalog=folder / "catalog")
    assert out.returncode == 0, out.stderr
    return folder / "catalog"


def test_the_generator_is_seeded_and_sized() -> None:
    assert make_state.state(5, seed=3) == make_state.state(5, seed=3) != make_state.state(5, seed=4)
    size = len(json.dumps(make_state.state_of_size(300_000)))
    assert 200_000 < size < 400_000


def test_verify_prints_progress_without_a_terminal_and_passes(catalog: Path) -> None:
    out = cli("verify", "gate", "retail", "--examples", "15", "--json", catalog=catalog)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["passed"] is True
    failed = {c["name"] for c in report["checks"] if not c["ok"]}
    assert failed <= {"every_guard_reachable"}, failed
    lines = out.stderr.splitlines()
    assert lines[0].startswith("verifying retail ...")
    assert any(line.startswith("verify gate retail: ") and "checks (100%) in " in line for line in lines), lines
