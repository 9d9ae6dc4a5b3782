"""Names stay names: env ids, state names and task ids that are paths are refused at every entry point.

The attack (issue 24, class 2): an env id with `..` reached a folder outside the catalog that was then
taken for a shipped reference env and run in-process; a state name with `..` read any *.json on the
host; a symlink in an env folder shipped its target into the sandbox. Each test below plants a canary
env outside the catalog whose env.py writes a file when imported, and a secret JSON file whose content
must never come back.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from catalog.importing.importer import ImportProblem, import_env
from catalog.names import MAX_NAME, REFERENCE_IDS, BadName, check_env_id, check_state_name, check_task_id
from catalog.store import REFERENCE_DIR, Catalog, CatalogError
from sandbox.forkserver import EnvHasSymlink, env_files
from serving import make
from tests.test_cli import ROOT, run
from tests.test_cli_badinput import assert_one_line

SECRET = "canary-secret-7f3a9c"
BAD_NAMES = ["..", "../x", "a/b", "/etc/passwd", "a\x00b", "", "x" * (MAX_NAME + 1), ".hidden", "a\n", "-x", "a b"]


def copy_env(source: Path, folder: Path, env_id: str) -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((folder / "env.json").read_text(encoding="utf-8"))
    (folder / "env.json").write_text(json.dumps({**manifest, "id": env_id}), encoding="utf-8")
    return folder


def skipped(out: subprocess.CompletedProcess) -> dict[str, str]:
    """`catalog list`'s broken folders, one line each on stderr: folder name -> reason."""
    found = {}
    for line in out.stderr.splitlines():
        assert line.startswith("warning: skipped "), out.stderr
        path, reason = line.removeprefix("warning: skipped ").split(": ", 1)
        found[Path(path).name] = reason
    return found


class Attack:
    """The layout: a catalog with one user env, an evil env beside it, a secret JSON file."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.catalog_dir = base / "catalog"
        self.catalog = Catalog(self.catalog_dir)
        self.user = copy_env(REFERENCE_DIR / "library", self.catalog_dir / "mylib", "mylib")
        self.canary = base / "ran.txt"
        evil = copy_env(REFERENCE_DIR / "library", base / "evil", "evil")
        source = (evil / "env.py").read_text(encoding="utf-8")
        hook = f"import pathlib; pathlib.Path({str(self.canary)!r}).write_text('ran')\n"
        (evil / "env.py").write_text(source.replace("from __future__ import annotations\n",
                                                    "from __future__ import annotations\n" + hook, 1))
        self.secret = base / "secret.json"
        self.secret.write_text(json.dumps({"books": {"SECRET": SECRET}}), encoding="utf-8")
        # `..` ids that reach the evil folder from the reference folder and from the catalog root
        self.evil_ids = [os.path.relpath(evil, REFERENCE_DIR), "../evil", str(evil)]
        # a state name that reaches the secret from the user env's and from the reference env's states/
        self.user_state = os.path.relpath(base / "secret", self.user / "states")
        self.ref_state = os.path.relpath(base / "secret", REFERENCE_DIR / "library" / "states")

    def untouched(self, *outputs: str) -> None:
        assert not self.canary.exists(), "the evil env's code ran on the host"
        for output in outputs:
            assert SECRET not in output


@pytest.fixture(scope="module")
def attack(tmp_path_factory):
    return Attack(tmp_path_factory.mktemp("names"))


# --- the validator -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", BAD_NAMES)
def test_the_validator_refuses_paths_in_one_line(bad):
    for check in (check_env_id, check_state_name, check_task_id):
        with pytest.raises(BadName) as caught:
            check(bad)
        assert "\n" not in str(caught.value) and "a name is" in str(caught.value)


def test_the_validator_keeps_real_names():
    for good in ("library", "bank-pay-rent", "a.b_c-1", "x" * MAX_NAME, *REFERENCE_IDS):
        assert check_env_id(good) == check_state_name(good) == check_task_id(good) == good
    with pytest.raises(BadName):
        check_env_id(None)


# --- Python API ----------------------------------------------------------------------------------
def test_catalog_get_and_make_refuse_path_ids(attack):
    for evil_id in attack.evil_ids:
        with pytest.raises(CatalogError, match="invalid env id"):
            attack.catalog.get(evil_id)
        with pytest.raises(CatalogError, match="invalid env id"):
            make(evil_id, catalog=attack.catalog)
    attack.untouched()


def test_reference_status_comes_from_the_shipped_list(attack):
    assert attack.catalog.get("library").reference and not attack.catalog.get("mylib").reference
    assert sorted(s.id for s in attack.catalog.list()[0] if s.reference) == sorted(REFERENCE_IDS)


def test_state_names_that_are_paths_are_refused(attack):
    handle = attack.catalog.get("mylib")
    for bad in (attack.user_state, "/abs", str(attack.base / "secret")):
        with pytest.raises(CatalogError, match="invalid state name") as caught:
            handle.state(bad)
        attack.untouched(str(caught.value))
    with pytest.raises(CatalogError, match="invalid state name"):
        make("library", state=attack.ref_state, catalog=attack.catalog)
    env = make("library", catalog=attack.catalog)
    with pytest.raises(CatalogError, match="invalid state name"):
        env.reset(options={"state": attack.ref_state})
    assert env.reset()[0]  # the same instance still works from a real state


# --- CLI -----------------------------------------------------------------------------------------
def test_cli_refuses_path_ids_and_state_names(attack, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"name": "search_books", "arguments": {"query": "x"}}) + "\n")
    evil = attack.evil_ids[0]
    cases = [("catalog", "run", evil, "search_books"), ("replay", evil, "--calls", str(calls)),
             ("serve", evil), ("rollout", "--model", "reference", "--env", evil, "--out", str(tmp_path / "out")),
             ("constraints", "--completeness", "--env", evil), ("constraints", evil), ("catalog", "show", evil),
             ("catalog", "run", "mylib", "search_books", "--args", '{"query": "x"}', "--state", attack.user_state),
             ("catalog", "run", "library", "search_books", "--args", '{"query": "x"}', "--state", attack.ref_state),
             ("serve", "mylib", "--state", attack.user_state)]
    for case in cases:
        out = run(*case, catalog=attack.catalog_dir)
        assert_one_line(out, "no state" if case[0] == "serve" and "--state" in case else "invalid")
        attack.untouched(out.stdout, out.stderr)
    assert not (tmp_path / "out").exists()


def test_import_with_a_path_id_is_one_line_and_writes_nothing(tmp_path):
    catalog = tmp_path / "catalog"
    bookshop = ROOT / "tests" / "fixtures" / "external" / "bookshop" / "bookshop_env.py"
    out = run("import", str(bookshop), "--id", "../x", catalog=catalog)
    assert_one_line(out, "invalid env id '../x'")
    assert not catalog.exists() and not (tmp_path / "x").exists()


# --- names read from files -----------------------------------------------------------------------
def test_bad_names_in_files_make_a_broken_env(attack, tmp_path):
    root = tmp_path / "catalog"
    tasks_env = copy_env(REFERENCE_DIR / "library", root / "badtasks", "badtasks")
    lines = (tasks_env / "tasks.jsonl").read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "state": os.path.relpath(attack.base / "secret",
                                                                             tasks_env / "states")})
    (tasks_env / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    manifest_env = copy_env(REFERENCE_DIR / "library", root / "badstates", "badstates")
    manifest = json.loads((manifest_env / "env.json").read_text())
    (manifest_env / "env.json").write_text(json.dumps({**manifest, "states": ["../../../secret"]}))
    out = run("catalog", "list", "--json", catalog=root)
    assert out.returncode == 0
    problems = skipped(out)
    assert "is not a name" in problems["badtasks"] and "invalid state name" in problems["badstates"]
    for env_id in ("badtasks", "badstates"):
        verify = run("verify", env_id, catalog=root)  # its progress line, then the one error line
        assert verify.returncode == 1 and "Traceback" not in verify.stderr
        assert [line for line in verify.stderr.splitlines() if line.startswith("envforge: ")] == \
            [verify.stderr.strip().splitlines()[-1]] and "is broken" in verify.stderr
        assert_one_line(run("catalog", "run", env_id, "search_books", catalog=root), "is broken")
    attack.untouched(out.stdout)


# --- symlinks ------------------------------------------------------------------------------------
def test_a_symlink_anywhere_in_an_env_folder_makes_it_broken(attack, tmp_path):
    root = tmp_path / "catalog"
    state_link = copy_env(REFERENCE_DIR / "library", root / "statelink", "statelink")
    (state_link / "states" / "default.json").unlink()
    (state_link / "states" / "default.json").symlink_to(attack.secret)
    module_link = copy_env(REFERENCE_DIR / "library", root / "modlink", "modlink")
    (module_link / "helper.py").symlink_to(attack.secret)
    (root / "folderlink").symlink_to(copy_env(REFERENCE_DIR / "library", tmp_path / "folderlink", "folderlink"))
    out = run("catalog", "list", "--json", catalog=root)
    problems = skipped(out)
    assert set(problems) == {"statelink", "modlink", "folderlink"}
    assert all("is a symlink" in reason for reason in problems.values()), problems
    for env_id in problems:
        one = run("catalog", "run", env_id, "search_books", "--args", '{"query": "x"}', catalog=root)
        assert_one_line(one, "is a symlink")
        attack.untouched(one.stdout, one.stderr)
    with pytest.raises(EnvHasSymlink, match="helper.py"):  # and the sandbox never ships a link's target
        env_files(module_link)
    attack.untouched(out.stdout)


def test_import_refuses_a_symlinked_module(attack, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (tmp_path / "real_helpers.py").write_text("RATE = 1\n")
    (package / "helpers.py").symlink_to(tmp_path / "real_helpers.py")
    bookshop = ROOT / "tests" / "fixtures" / "external" / "bookshop" / "bookshop_env.py"
    (package / "shop_env.py").write_text("from helpers import RATE\n" + bookshop.read_text())
    with pytest.raises(ImportProblem, match="helpers.py is a symlink"):
        import_env(package / "shop_env.py", Catalog(tmp_path / "catalog"))
    assert not (tmp_path / "catalog").exists() or not any((tmp_path / "catalog").iterdir())


# --- MCP over stdio and HTTP (the real SDK client) -----------------------------------------------
async def _reset_error(session: ClientSession, **arguments: str) -> str:
    result = await session.call_tool("reset", arguments)
    assert result.is_error
    return result.content[0].text


def test_mcp_stdio_reset_refuses_a_path_state(attack):
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=[str(ROOT / "cli.py"), "--catalog", str(attack.catalog_dir), "serve", "mylib"])

    async def go() -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            texts = [await _reset_error(session, state=bad) for bad in (attack.user_state, "/etc/passwd")]
            ok = await session.call_tool("reset", {})  # the session goes on from a real state
            assert not ok.is_error
            return texts

    texts = anyio.run(go)
    assert all("invalid state name" in text for text in texts), texts
    attack.untouched(*texts)


@pytest.fixture(scope="module")
def http_endpoint(attack, tmp_path_factory):
    from tests.serving.test_serving_mcp import serving_http

    with serving_http([sys.executable, str(ROOT / "cli.py"), "--catalog", str(attack.catalog_dir), "serve", "--all",
                       "--transport", "http"], tmp_path_factory.mktemp("serve") / "stderr.txt") as url:
        yield url


def test_mcp_http_query_and_reset_refuse_paths(attack, http_endpoint):
    from tests.serving.test_serving_mcp import _http_session

    async def refused(url: str) -> str:
        async with _http_session(url) as session:
            try:
                tools = await session.list_tools()
            except Exception as exc:  # noqa: BLE001 - the SDK raises the server's request error
                return str(exc)
            raise AssertionError(f"listed {len(tools.tools)} tools for {url}")

    async def go() -> list[str]:
        texts = [await refused(f"{http_endpoint}?env={attack.evil_ids[1]}"),
                 await refused(f"{http_endpoint}?env=mylib&state={attack.user_state}")]
        async with _http_session(http_endpoint) as session:
            texts.append(await _reset_error(session, env=attack.evil_ids[0]))
            texts.append(await _reset_error(session, env="library", state=attack.ref_state))
            assert not (await session.call_tool("reset", {"env": "mylib"})).is_error
        return texts

    texts = anyio.run(go)
    assert "unknown env" in texts[0] and "invalid state name" in texts[1], texts
    assert "unknown env" in texts[2] and "invalid state name" in texts[3], texts
    attack.untouched(*texts)


# --- Ray -----------------------------------------------------------------------------------------
def test_ray_pool_refuses_path_ids_and_states(attack, ray_cluster):
    from serving.ray_envs import EnvActorPool, InstanceError

    with pytest.raises(CatalogError, match="invalid env id"):
        EnvActorPool(attack.evil_ids[0], n=1, catalog=attack.catalog)
    with pytest.raises(CatalogError, match="invalid state name"):
        EnvActorPool("library", n=1, state=attack.ref_state, catalog=attack.catalog)
    with EnvActorPool("library", n=2, catalog=attack.catalog, actors=1) as pool:
        with pytest.raises((CatalogError, InstanceError), match="invalid state name") as caught:
            pool.reset(options=[{"state": attack.ref_state}, None])
        assert pool.reset_one(1)[0]  # the other instance, and the same one, keep working
        assert pool.reset_one(0)[0]
    attack.untouched(str(caught.value))
