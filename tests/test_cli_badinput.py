"""Bad input as a user meets it: one clear line on stderr, exit status 1, no traceback, nothing lost."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from catalog.search.vectors import DedupFilter
from catalog.store import REFERENCE_DIR, Catalog
from tests.test_cli import ROOT, run

BOOKSHOP = ROOT / "tests" / "fixtures" / "external" / "bookshop" / "bookshop_env.py"


def assert_one_line(out: subprocess.CompletedProcess, *needles: str) -> None:
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envforge: "), out.stderr
    for needle in needles:
        assert needle in lines[0]


def copy_reference(env_id: str, catalog: Path, new_id: str) -> Path:
    """A user env made from a shipped one (its env.json id is the folder name)."""
    folder = catalog / new_id
    shutil.copytree(REFERENCE_DIR / env_id, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((folder / "env.json").read_text(encoding="utf-8"))
    (folder / "env.json").write_text(json.dumps({**manifest, "id": new_id}), encoding="utf-8")
    return folder


def user_envs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


WRITERS = [["import", str(BOOKSHOP)], ["synthesize", "--n", "1"], ["bench", "export", "--n", "4"]]


@pytest.mark.parametrize("args", [["catalog", "list"], *WRITERS], ids=["list", "import", "synthesize", "export"])
def test_a_catalog_that_is_a_file(tmp_path, args):
    path = tmp_path / "catalog.txt"
    path.write_text("not a folder\n")
    assert_one_line(run(*args, catalog=path), "is a file, not a folder")
    assert path.read_text() == "not a folder\n"


def test_a_catalog_from_the_environment_that_is_a_file(tmp_path):
    path = tmp_path / "catalog.txt"
    path.write_text("not a folder\n")
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "catalog", "list"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, env={**os.environ, "ENVFORGE_CATALOG": str(path)})
    assert_one_line(out, str(path), "$ENVFORGE_CATALOG")


@pytest.fixture
def read_only_catalog(tmp_path):
    """A catalog folder holding one env that nobody can write in, root included (chmod does not stop root)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    copy_reference("store", folder, "shop")
    undo = ["chmod", "755", str(folder)]
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
        undo = ["chattr", "-i", str(folder)]
    else:
        made = subprocess.run(["chmod", "555", str(folder)], capture_output=True)
    try:
        with tempfile.TemporaryFile(dir=folder):
            writable = True
    except OSError:
        writable = False
    try:
        if made.returncode != 0 or writable:
            pytest.skip(f"cannot make a folder read-only here ({made.stderr.decode().strip() or 'still writable'})")
        yield folder
    finally:
        subprocess.run(undo, capture_output=True)


def test_a_read_only_catalog_lists_but_refuses_writers(read_only_catalog):
    """Listing needs no write (the SQLite index is only a cache), so it just works; writers stop at once."""
    listed = run("catalog", "list", "--json", catalog=read_only_catalog)
    assert listed.returncode == 0, listed.stderr
    assert "shop" in [env["id"] for env in json.loads(listed.stdout)]
    for args in WRITERS:
        assert_one_line(run(*args, catalog=read_only_catalog), "is not writable")
    assert sorted(p.name for p in read_only_catalog.iterdir()) == ["shop"]


def test_constraints_on_an_env_that_does_not_parse(tmp_path):
    folder = copy_reference("library", tmp_path, "lib-broken")
    with (folder / "env.py").open("a") as source:
        source.write("\ndef broken(:\n")
    assert_one_line(run("constraints", "lib-broken", catalog=tmp_path), "lib-broken", "does not parse", "line ")


@pytest.mark.parametrize("args, needle", [
    (["verify", "store", "--examples", "0"], "--examples: must be at least 1, got 0"),
    (["verify", "store", "--examples", "-5"], "--examples: must be at least 1, got -5"),
    (["verify", "store", "--workers", "0"], "--workers: must be at least 1"),
    (["verify", "store", "--timeout", "0"], "--timeout: must be more than 0"),
    (["verify", "store", "--timeout", "nan"], "--timeout: must be more than 0"),
    (["verify", "store", "--gate", "1.5"], "--gate: must be from 0 to 1"),
    (["verify", "--mutants", "0"], "--mutants: must be at least 1"),
    (["audit-sim", "--model", "spec", "--limit", "-1"], "--limit: must be at least 1, got -1"),
    (["audit-sim", "--model", "spec", "--limit", "0"], "--limit: must be at least 1, got 0"),
    (["synthesize", "--n", "-3"], "--n: must be at least 1"),
    (["synthesize", "--n", "2", "--workers", "0"], "--workers: must be at least 1"),
    (["bench", "export", "--n", "0"], "--n: must be at least 1"),
    (["bench", "export", "--n", "4", "--test-fraction", "2"], "--test-fraction: must be from 0 to 1"),
    (["catalog", "search", "books", "--k", "0"], "--k: must be at least 1"),
    (["models", "--timeout", "-1"], "--timeout: must be more than 0"),
    (["verify", "store", "--examples", "many"], "expected a whole number, got 'many'"),
    (["no-such-command"], "invalid choice"),
])
def test_invalid_numbers_and_usage_are_one_line_exit_1(tmp_path, args, needle):
    assert_one_line(run(*args, catalog=tmp_path), needle)


def test_verify_all_reports_broken_folders_as_failed(tmp_path):
    (tmp_path / "half-written").mkdir()
    (copy_reference("store", tmp_path, "bad-json") / "env.json").write_text("{", encoding="utf-8")
    (copy_reference("store", tmp_path, "no-code") / "env.py").unlink()
    (copy_reference("library", tmp_path, "no-parse") / "env.py").write_text("def broken(:\n", encoding="utf-8")
    out = run("verify", "--all", "--no-reference", "--examples", "5", "--json", catalog=tmp_path)
    assert out.returncode == 5, out.stderr
    reports = {r["env"]: r for r in json.loads(out.stdout)}
    assert set(reports) == {"half-written", "bad-json", "no-code", "no-parse"}
    assert not any(r["passed"] for r in reports.values())
    details = {env: [c["detail"] for c in r["checks"] if not c["ok"]][0] for env, r in reports.items()}
    assert "no env.json" in details["half-written"] and "env.json is invalid" in details["bad-json"]
    assert "env.py is missing" in details["no-code"] and "does not parse" in details["no-parse"]
    listed = run("catalog", "list", "--json", catalog=tmp_path)  # unchanged: warns of 3, lists no-parse (no code read)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 5 and listed.stderr.count("warning") == 3


def synthesize(catalog: Path, seed: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "synthesize", "--n", "1", "--workers", "1", "--seed",
                             str(seed), "--catalog", str(catalog), "--json"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> tuple[dict, str]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return json.loads(out), err


@pytest.mark.slow
def test_synthesize_never_replaces_what_it_did_not_write(tmp_path):
    """Two runs at once with one seed into a catalog holding a hand-edited env under the seed's first id.

    One test, since runs are slow: it covers the same seed again (the run that waits meets the
    other's env), a hand-edited env, and the lock.
    """
    from synth.generators import ProceduralGenerator
    from synth.mining import domain_order

    edited_id = ProceduralGenerator(domain_order(4)).topic(0, 4)[0]["env_id"]  # what slot 0 of seed 4 proposes
    folder = copy_reference("store", tmp_path, edited_id)
    edited = (folder / "env.py").read_text() + "# a reviewer's note\n"
    (folder / "env.py").write_text(edited)

    (a, err_a), (b, err_b) = (finish(p) for p in [synthesize(tmp_path, seed=4), synthesize(tmp_path, seed=4)])
    assert ["waiting for the catalog" in err for err in (err_a, err_b)].count(True) == 1  # the lock, said
    assert a["registered"] == b["registered"] == 1
    assert sorted([a["existing"], b["existing"]]) == [1, 2]  # the run that waited also met the other's env
    for report, err in ((a, err_a), (b, err_b)):
        reasons = {s["env_id"]: s["reason"] for s in report["skipped_existing"]}
        assert "edited by hand" in reasons[edited_id] and "kept" in reasons[edited_id]
        assert "the catalog already had, not replaced" in err and edited_id in err
    assert (folder / "env.py").read_text() == edited

    written = {e["env_id"]: report["run_id"] for report in (a, b) for e in report["envs"]}
    assert len(written) == 2 and sorted([*written, edited_id]) == user_envs(tmp_path)  # each once, as reported
    catalog = Catalog(tmp_path, include_reference=False)
    for env_id, run_id in written.items():
        assert catalog.get(env_id).manifest.provenance.source.startswith(f"run {run_id} ")
    dedup = DedupFilter(threshold=0.85)
    for summary in catalog.list()[0]:
        assert dedup.accept(summary.id, summary.topic).accepted, summary.topic


USER_FACING = [
    "catalog.store.CatalogError", "catalog.state._sqlstate.StateError", "catalog.runtime.EnvLoadError",
    "catalog.tasks.CheckError", "catalog.calls.CallFileError", "catalog.importing.conventions.ConventionError",
    "catalog.search.embeddings.EmbedderUnavailable", "sandbox.isolation.IsolationUnavailable",
    "verifier.audit.run.AuditError", "verifier.replay.ReplayError", "verifier.samples.export.CompositionError",
    "synth.llm.errors.LLMError", "synth.llm.errors.UnknownModel", "synth.run.RunError",
    "synth.procedural.blueprint.BlueprintError", "cli.UserError",
]


@pytest.mark.parametrize("dotted", USER_FACING)
def test_user_facing_errors_share_one_base(dotted):
    import importlib

    from catalog.errors import EnvforgeError

    module, name = dotted.rsplit(".", 1)
    assert issubclass(getattr(importlib.import_module(module), name), EnvforgeError)


def test_main_prints_any_envforge_error_as_one_line(monkeypatch, capsys):
    """An error a user can fix, raised deep in a command (here an unreachable endpoint), is one line, exit 1."""
    import cli
    import cli.commands.models
    from synth.llm import EndpointUnreachable

    def unreachable(args):
        raise EndpointUnreachable("local-4b did not answer at http://127.0.0.1:8013/v1\nstart it with: make serve")

    monkeypatch.setattr(cli.commands.models, "cmd_models", unreachable)
    assert cli.main(["models", "--no-probe"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("envforge: local-4b did not answer") and "make serve" in err[0]


# --- checks before work: models, output folders (issue 24, class 7) ---------------------------------------------
def run_env(*args: str, catalog: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`run` with the environment changed (keys removed, a registry override)."""
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args, "--catalog", str(catalog)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, env=env)


def closed_port() -> int:
    """A port nothing listens on: connecting is refused at once (no timeout to wait out)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def no_models(tmp_path_factory) -> dict[str, str]:
    """An environment without OPENAI_API_KEY whose registry adds `dead` (a closed port) and `keyed` (its key unset)."""
    registry = tmp_path_factory.mktemp("models") / "models.toml"
    registry.write_text(f'[models.dead]\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\nmodel = "dead"\n\n'
                        '[models.keyed]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "keyed"\n'
                        'api_key_env = "ENVFORGE_TEST_UNSET_KEY"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ENVFORGE_TEST_UNSET_KEY")}
    return {**env, "ENVFORGE_MODELS": str(registry)}


def written(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


PREFLIGHT = [
    (["synthesize", "--n", "1", "--backend", "llm", "--model", "gpt-4o-mini"], "set OPENAI_API_KEY"),
    (["synthesize", "--n", "1", "--judge-model", "dead"], "dead did not answer"),
    (["synthesize", "--n", "1", "--backend", "llm", "--model", "keyed"], "set ENVFORGE_TEST_UNSET_KEY"),
    (["rollout", "--model", "gpt-4o-mini", "--env", "library", "--out", "{tmp}/r"], "set OPENAI_API_KEY"),
    (["rollout", "--model", "reference", "--simulator", "dead", "--env", "library", "--out", "{tmp}/r"],
     "dead did not answer"),
    (["audit-sim", "--model", "dead"], "dead did not answer"),  # an empty catalog: before the default export
    (["audit-sim", "--model", "dead", "--property-based"], "dead did not answer"),
]


@pytest.mark.parametrize("args, needle", PREFLIGHT, ids=[" ".join(a[:1] + a[-3:-2]) + f"-{i}"
                                                         for i, (a, _) in enumerate(PREFLIGHT)])
def test_models_are_checked_before_any_work(tmp_path, no_models, args, needle):
    catalog = tmp_path / "catalog"
    out = run_env(*[a.format(tmp=tmp_path) for a in args], catalog=catalog, env=no_models)
    assert_one_line(out, needle, "nothing was run or written")
    assert written(catalog) == [] and not (tmp_path / "r").exists()


@pytest.mark.parametrize("where", ["a-file", "a-file/below"])
def test_synthesize_report_into_a_file_stops_before_registering(tmp_path, where):
    (tmp_path / "a-file").write_text("mine\n")
    out = run("synthesize", "--n", "1", "--report", str(tmp_path / where), catalog=tmp_path / "catalog")
    assert_one_line(out, "--report", "is a file, not a folder")
    assert written(tmp_path / "catalog") == [] and (tmp_path / "a-file").read_text() == "mine\n"


def test_rollout_out_into_a_file_stops_before_work(tmp_path):
    (tmp_path / "a-file").write_text("mine\n")
    out = run("rollout", "--model", "reference", "--env", "library", "--out", str(tmp_path / "a-file"),
              catalog=tmp_path / "catalog")
    assert_one_line(out, "--out", "is a file, not a folder")
    assert (tmp_path / "a-file").read_text() == "mine\n"


def test_preflight_against_the_scripted_server():
    """The real check on the real openai-compatible endpoint: a live server passes, a closed port and a 401 do not."""
    from synth.llm import EndpointUnreachable, ModelSpec
    from synth.llm.preflight import preflight
    from tests.llm_server import ScriptedServer

    with ScriptedServer(models=["sim"]) as server:
        preflight([ModelSpec(name="live", base_url=server.base_url, model="sim"), None])
        assert server.chat_requests == []  # one cheap GET, no completion paid for
    with pytest.raises(EndpointUnreachable, match="closed did not answer"):
        preflight([ModelSpec(name="closed", base_url=f"http://127.0.0.1:{closed_port()}/v1", model="x")], timeout=2)


def test_rollout_resume_sets_garbage_aside_and_loses_nothing(tmp_path):
    out_dir, catalog = tmp_path / "r", tmp_path / "catalog"
    args = ("rollout", "--model", "reference", "--env", "library", "--out", str(out_dir), "--json")
    first = run(*args, catalog=catalog)
    assert first.returncode == 0, first.stderr
    path = out_dir / "trajectories.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 2
    path.write_text("\n".join([lines[0], "garbage {", *lines[2:], '{"no": "id"}']) + "\n", encoding="utf-8")
    again = run(*args, catalog=catalog)
    assert again.returncode == 0, again.stderr
    assert "set aside 2 unreadable line(s)" in again.stderr and "Traceback" not in again.stderr
    assert (out_dir / "trajectories.rejected.jsonl").read_text(encoding="utf-8") == 'garbage {\n{"no": "id"}\n'
    resumed = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(t["id"] for t in resumed) == sorted(json.loads(line)["id"] for line in lines)  # each once
    assert resumed[:len(lines) - 1] == [json.loads(line) for line in [lines[0], *lines[2:]]]  # kept as written
    assert json.loads(again.stdout)["trajectories"] == len(lines)


def test_outputs_have_the_umask_mode(tmp_path):
    """Renamed-into-place outputs and env folders look like any file the user makes (not mkstemp's 0600/0700)."""
    from catalog.bench.envsimbench import write_jsonl
    from catalog.runs.files import atomic_write

    shop = Catalog(tmp_path / "source").get("store")
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a.json", "{}\n")
        write_jsonl([], tmp_path / "samples.jsonl")
        states = {p.stem: json.loads(p.read_text()) for p in (shop.path / "states").glob("*.json")}
        Catalog(tmp_path / "catalog", include_reference=False).write_env(
            shop.manifest.model_copy(update={"id": "shop"}), (shop.path / "env.py").read_text(), states, shop.tasks())
        os.umask(0o077)
        atomic_write(tmp_path / "private.json", "{}\n")
    finally:
        os.umask(old)
    assert {name: (tmp_path / name).stat().st_mode & 0o777 for name in ("a.json", "samples.jsonl", "private.json")} \
        == {"a.json": 0o644, "samples.jsonl": 0o644, "private.json": 0o600}
    folder = tmp_path / "catalog" / "shop"
    assert folder.stat().st_mode & 0o777 == 0o755 and (folder / "env.json").stat().st_mode & 0o777 == 0o644
