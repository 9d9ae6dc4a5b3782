"""Real package layouts: parent `__init__.py`s the tools never need, and an entry that is a package's `__init__.py`.

The fixtures under tests/fixtures/external/layouts/ are the project's own, written in the public
layouts' style: `heavy_parent` as tau2-bench's (`src/pkg/domains/airline/tools.py`, whose top
package imports an LLM client that is not installed), `reexport` as tau-bench's (the entry is
`pkg/tools/__init__.py`, whose `ALL_TOOLS` the package's own `env.py` imports). Each is imported
with the documented command, which loads it in the sandbox, and then runs a call there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cli
from catalog.importing.importer import MARKER, import_env
from catalog.runtime import EnvLoadError, load_module
from catalog.store import Catalog

LAYOUTS = Path(__file__).resolve().parents[2] / "fixtures" / "external" / "layouts"
HEAVY = LAYOUTS / "heavy_parent"
TOOLS = HEAVY / "src" / "airpkg" / "domains" / "airline" / "tools.py"
REEXPORT = LAYOUTS / "reexport" / "retailpkg"
ABSENT = "heavyllm_client_absent"


def _json_out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, object]]:
    status = cli.main(argv)
    return status, json.loads(capsys.readouterr().out)


def test_a_parent_init_importing_an_uninstalled_client_is_left_out(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path / "catalog")
    status, report = _json_out(capsys, ["import", str(TOOLS), "--config", str(HEAVY / "data" / "db.json"),
                                        "--catalog", root, "--json"])
    assert status == 0, report
    folder = Path(root) / "airline-tools"
    # the top package and `environment/` import the client and the user simulator: copied as markers only
    for init in ("airpkg/__init__.py", "airpkg/environment/__init__.py"):
        assert (folder / init).read_text() == MARKER
    assert not (folder / "airpkg" / "agent").exists() and not (folder / "airpkg" / "user").exists()
    assert all(ABSENT not in path.read_text() for path in folder.rglob("*.py"))
    status, run = _json_out(capsys, ["catalog", "run", "airline-tools", "book_reservation", "--catalog", root,
                                     "--args", '{"user_id": "mia", "flight_number": "HAT001"}', "--json"])
    assert status == 0 and run["outcome"] == "success" and run["observation"] == "R1"
    assert [op["path"][:2] for op in run["delta"]] == [["flights", "HAT001"], ["reservations", "R1"]]  # type: ignore[attr-defined, index]
    status, full = _json_out(capsys, ["catalog", "run", "airline-tools", "book_reservation", "--catalog", root,
                                      "--args", '{"user_id": "mia", "flight_number": "HAT002"}', "--json"])
    assert status == 0 and full["outcome"] == "failure" and full["delta"] == []


def test_a_parent_init_the_tools_import_from_is_named_with_the_way_around(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(HEAVY, tmp_path / "repo")
    tools = tmp_path / "repo" / "src" / "airpkg" / "domains" / "airline" / "tools.py"
    tools.write_text(tools.read_text() + "\nfrom airpkg import UserSimulator  # noqa: E402\n")
    status = cli.main(["import", str(tools), "--catalog", str(tmp_path / "catalog")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1
    assert (f"airpkg/__init__.py: `{ABSENT}` is not installed (pip install {ABSENT}) (airpkg/__init__.py runs because "
            "airpkg/domains/airline/tools.py imports `UserSimulator` from it; import that from the module that "
            "defines it") in err[0]


def test_an_entry_that_is_a_package_init_is_the_package_its_env_imports(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path / "catalog")
    status, report = _json_out(capsys, ["import", str(REEXPORT / "tools" / "__init__.py"), "--config",
                                        str(REEXPORT / "data"), "--catalog", root, "--json"])
    assert status == 0, report
    folder = Path(root) / "retailpkg"
    # the package's own `env.py` imports ALL_TOOLS from its package path: the entry's code is there too
    assert (folder / "retailpkg" / "tools" / "__init__.py").read_text() == (folder / "env.py").read_text()
    assert "from retailpkg.tools import ALL_TOOLS" in (folder / "retailpkg" / "env.py").read_text()
    calls = tmp_path / "calls.jsonl"
    calls.write_text("".join(json.dumps({"name": "cancel_order", "arguments": {"order_id": order}}) + "\n"
                             for order in ("#W100", "#W101")))
    status, replayed = _json_out(capsys, ["replay", "retailpkg", "--calls", str(calls), "--catalog", root, "--json"])
    assert status == 0
    cancelled, refused = replayed["steps"]  # type: ignore[misc]
    assert cancelled["observation"] == "Order #W100 cancelled, 25.50 refunded"
    assert [op["path"] for op in cancelled["delta"]] == [["orders", "#W100", "status"], ["users", "ana", "balance"]]
    assert refused["outcome"] == "failure" and refused["delta"] == []


def test_an_init_entry_loads_once_as_its_package(tmp_path: Path) -> None:
    """Loaded under its package name, the entry's code runs once, for envforge and the package's own modules."""
    package = tmp_path / "src" / "countpkg"
    (package / "tools").mkdir(parents=True)
    (package / "__init__.py").write_text("from countpkg.shelf import count_load\nfrom countpkg.report import BOOKS\n")
    (package / "shelf.py").write_text("LOADS = []\n\n\ndef count_load():\n    LOADS.append(1)\n    return len(LOADS)\n")
    (package / "report.py").write_text("from countpkg.tools import BOOKS\n")
    (package / "tools" / "__init__.py").write_text(
        "from countpkg import count_load\n\nLOAD_NUMBER = count_load()\nBOOKS = {'b1': {'title': 'Dune'}}\n\n\n"
        "def find_book(book_id: str) -> dict:\n    return BOOKS[book_id]\n")
    handle = import_env(package / "tools" / "__init__.py", Catalog(tmp_path / "catalog")).handle
    module = load_module(handle.path / "env.py", "count_probe")
    assert module.__name__ == "countpkg.tools" and module.LOAD_NUMBER == 1  # a second copy would count 2


def test_a_package_place_that_is_not_the_folders_own_is_refused(tmp_path: Path) -> None:
    """env.py equal to `time/__init__.py`: `time` is a builtin module, so the package is not the folder's file."""
    code = "def now() -> int:\n    return 1\n"
    (tmp_path / "time").mkdir()
    (tmp_path / "time" / "__init__.py").write_text(code)
    (tmp_path / "env.py").write_text(code)
    with pytest.raises(EnvLoadError, match=r"time is not the env folder's package"):
        load_module(tmp_path / "env.py", "hostile_place")
