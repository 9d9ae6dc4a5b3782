"""The on-disk catalog: atomic writes, a broken folder never breaks listing, the index is a cache."""

import json
import os

import pytest

from catalog.models import EnvManifest
from catalog.store import Catalog, CatalogError
from catalog.tasks import Task

ENV_SOURCE = '''
from sqlmodel import Field
from catalog.envkit import Env, fail, ok, table_base, tool

Table = table_base()


class Note(Table, table=True):
    __tablename__ = "notes"
    id: str = Field(primary_key=True)
    text: str


class NotesEnv(Env):
    tables = (Note,)

    @tool(kind="write")
    def edit(self, note_id: str, text: str) -> dict:
        """Edit a note.

        Args:
            note_id: The note.
            text: New text.
        """
        note = self.get(Note, note_id)
        if note is None:
            return fail(f"Note {note_id} not found")
        note.text = text
        return ok()
'''
STATE = {"notes": {"n1": {"id": "n1", "text": "hello"}}}
TASK = Task(id="t1", instruction="Say bye.", state="s1", check="def check(initial, final):\n    return final['notes']['n1']['text'] == 'bye'\n")


def _manifest(env_id="notes"):
    return EnvManifest(id=env_id, name="Notes", kind="sql", entry="NotesEnv")


def test_written_env_lists_runs_and_has_a_hash(tmp_path):
    catalog = Catalog(tmp_path)
    handle = catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE}, [TASK])
    assert handle.manifest.states == ["s1"] and handle.manifest.content_hash.startswith("sha256:")
    summaries, problems = catalog.list()
    assert problems == [] and "notes" in [s.id for s in summaries]
    runtime = catalog.get("notes").runtime(trusted=True)  # the test wrote it
    runtime.reset(catalog.get("notes").state("s1"))
    result = runtime.call({"name": "edit", "arguments": {"note_id": "n1", "text": "bye"}}, snapshot=True)
    assert catalog.get("notes").tasks()[0].evaluate(STATE, result.state) is True
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_existing_env_is_not_overwritten_unless_asked(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    with pytest.raises(CatalogError, match="already exists"):
        catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    catalog.write_env(_manifest(), ENV_SOURCE, {"s2": STATE}, replace=True)
    assert catalog.get("notes").state_names() == ["s2"]


def test_reference_ids_are_reserved(tmp_path):
    with pytest.raises(CatalogError, match="reference env"):
        Catalog(tmp_path).write_env(_manifest("library"), ENV_SOURCE, {"s1": STATE})


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    catalog = Catalog(tmp_path)
    with pytest.raises(TypeError):
        catalog.write_env(_manifest(), ENV_SOURCE, {"s1": {"notes": {"n1": {"id": "n1", "text": object()}}}})
    assert list(tmp_path.iterdir()) == [] or all(p.name == "index.sqlite" for p in tmp_path.iterdir())
    assert "notes" not in [s.id for s in catalog.list()[0]]


@pytest.mark.parametrize("damage, reason", [
    (lambda d: (d / "env.json").unlink(), "no env.json"),
    (lambda d: (d / "env.json").write_text("{not json"), "env.json is invalid"),
    (lambda d: (d / "env.json").write_text(json.dumps({"id": "notes"})), "env.json is invalid"),
    (lambda d: (d / "env.py").unlink(), "env.py is missing"),
    (lambda d: (d / "states" / "s1.json").unlink(), "states listed in env.json are missing"),
])
def test_broken_folders_are_reported_and_skipped(tmp_path, damage, reason):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    catalog.write_env(_manifest("other"), ENV_SOURCE, {"s1": STATE})
    catalog.list()  # index both
    damage(tmp_path / "notes")
    summaries, problems = catalog.list()
    assert [s.id for s in summaries if not s.reference] == ["other"]
    assert len(problems) == 1 and reason in problems[0].reason
    with pytest.raises(CatalogError, match="broken"):
        catalog.get("notes")


def test_folder_name_must_match_the_manifest_id(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    os.rename(tmp_path / "notes", tmp_path / "renamed")
    _, problems = catalog.list()
    assert "folder is 'renamed'" in problems[0].reason


def test_the_index_is_a_cache_rebuilt_when_corrupt_or_stale(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    (tmp_path / "index.sqlite").write_bytes(b"garbage, not a database" * 100)
    assert "notes" in [s.id for s in catalog.list()[0]]
    manifest = json.loads((tmp_path / "notes" / "env.json").read_text())
    manifest["name"] = "Renamed notes"
    (tmp_path / "notes" / "env.json").write_text(json.dumps(manifest))
    os.utime(tmp_path / "notes" / "env.json", ns=(1, 1))
    assert [s.name for s in catalog.list()[0] if s.id == "notes"] == ["Renamed notes"]


def test_remove_deletes_user_envs_only(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), ENV_SOURCE, {"s1": STATE})
    catalog.remove("notes")
    assert "notes" not in [s.id for s in catalog.list()[0]]
    with pytest.raises(CatalogError, match="cannot be removed"):
        catalog.remove("library")


def test_unknown_env_and_state_list_what_exists(tmp_path):
    catalog = Catalog(tmp_path)
    with pytest.raises(CatalogError, match="Known: bank, clinic, library, store"):
        catalog.get("nope")
    with pytest.raises(CatalogError, match="Available: default, overdue, quiet"):
        catalog.get("library").state("nope")


def test_listing_never_imports_env_code(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(_manifest(), "raise SystemExit('imported!')\n", {"s1": STATE})
    assert "notes" in [s.id for s in catalog.list()[0]]


def test_bad_checks_are_rejected_when_tasks_are_read():
    with pytest.raises(ValueError, match="check must define"):
        Task(id="t", instruction="x", state="s", check="def other(a, b):\n    return True\n")
    task = Task(id="t", instruction="x", state="s", check="def check(initial, final):\n    return 1\n")
    with pytest.raises(Exception, match="returned int, not bool"):
        task.evaluate({}, {})
