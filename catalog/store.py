"""The on-disk catalog: one folder per environment, a SQLite index, atomic writes.

    <root>/<env_id>/env.json      manifest (EnvManifest)
    <root>/<env_id>/env.py        the environment module
    <root>/<env_id>/states/*.json initial states
    <root>/<env_id>/tasks.jsonl   tasks with checks
    <root>/index.sqlite           one row per env, re-read when the folder's files change

Listing reads manifests only and never imports env.py. An env folder is written under a
hidden temporary name and renamed into place, so a crash never leaves half an environment; a
folder that is nevertheless broken (hand edits, disk errors) is reported and skipped. The
reference environments shipped in the package are always listed, with no set-up step.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from catalog.errors import EnvforgeError
from catalog.jsonmodel import JsonModel
from catalog.manifest import content_hash, runtime_options
from catalog.models import EnvManifest
from catalog.names import REFERENCE_IDS, BadName, check_env_id, check_state_name, is_name
from catalog.runs.files import as_normal_dir
from catalog.runtime import ClassRuntime, SqlRuntime, load_module, runtime_for
from catalog.state.jsonable import to_jsonable
from catalog.tasks import Task

__all__ = ["Catalog", "EnvHandle", "runtime_options", "EnvProblem", "EnvSummary", "CatalogError", "EnvExists", "UntrustedCode",
           "REFERENCE_DIR", "default_root", "read_env"]

REFERENCE_DIR = Path(__file__).parent / "reference"
ENV_VAR = "ENVFORGE_CATALOG"


class CatalogError(LookupError, EnvforgeError):
    """A catalog operation cannot be done (unknown env, broken env, id clash)."""


class EnvExists(CatalogError):
    """The id is taken and the writer did not ask to replace; callers name their own way to ask."""

    def __init__(self, env_id: str, root: Path) -> None:
        super().__init__(f"Env {env_id!r} already exists in {root} (pass replace=True to overwrite)")
        self.env_id, self.root = env_id, root


def default_root() -> Path:
    """`$ENVFORGE_CATALOG`, else `envforge-catalog/` in the current directory."""
    return Path(os.environ.get(ENV_VAR) or "envforge-catalog")


@dataclass(frozen=True)
class EnvProblem:
    """A folder that looks like an env but cannot be used, and why."""

    path: Path
    reason: str


class EnvSummary(JsonModel):
    """What `catalog list` shows of one env; `model_dump(mode="json")` is its `catalog list --json` entry."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    kind: str
    topic: str
    tools: int
    states: int
    reference: bool
    path: str


class UntrustedCode(CatalogError):
    """Running this env's code in-process was asked for without vouching for it."""


class EnvHandle:
    """One environment folder: its manifest, states, tasks, and a way to run it."""

    def __init__(self, path: Path, manifest: EnvManifest, reference: bool = False) -> None:
        self.path = path
        self.manifest = manifest
        self.reference = reference

    @property
    def id(self) -> str:
        return self.manifest.id

    def state_names(self) -> list[str]:
        """The states on disk whose names are names (a file like `..x.json` is never offered)."""
        return sorted(p.stem for p in (self.path / "states").glob("*.json") if is_name(p.stem))

    def default_state(self) -> str:
        """The state a run starts from when none is named: `default` if the env has one, else its first.

        "First" is the manifest's order (the order the author or the import gave the states).
        """
        names = self.manifest.states or self.state_names()
        if not names:
            raise CatalogError(f"env {self.id!r} has no initial states")
        return "default" if "default" in names else names[0]

    def state(self, name: str) -> dict[str, Any]:
        """Load initial state `name`; raises CatalogError listing the available ones.

        `name` may come from a client: it is checked as a name, and the file is opened without
        following a symlink, so no other file on the host is ever read through it.
        """
        try:
            check_state_name(name)
        except BadName as exc:
            raise CatalogError(str(exc)) from exc
        path = self.path / "states" / f"{name}.json"
        if not path.is_file() or path.is_symlink():
            raise CatalogError(f"Env {self.id!r} has no state {name!r}. Available: {', '.join(self.state_names())}")
        try:
            return json.loads(read_regular(path))
        except OSError as exc:
            raise CatalogError(f"State file {path} cannot be read: {exc.strerror or exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CatalogError(f"State file {path} is not valid JSON: {exc}") from exc

    def tasks(self) -> list[Task]:
        path = self.path / "tasks.jsonl"
        if not path.is_file():
            return []
        tasks = []
        for number, line in enumerate(read_regular(path).splitlines(), 1):
            if line.strip():
                try:
                    tasks.append(Task.model_validate_json(line))
                except ValidationError as exc:
                    raise CatalogError(f"{path}:{number}: invalid task: {exc}") from exc
        return tasks

    def source(self) -> str:
        return read_regular(self.path / "env.py")

    def runtime(self, *, trusted: bool = False) -> SqlRuntime | ClassRuntime:
        """Import env.py and build its runtime in THIS process.

        That runs the env's code with every right of the caller, so it is refused unless the env is
        a shipped reference env or the caller vouches for the code (`trusted=True`). Everything
        else runs in the sandbox: `sandbox.session.open_runtime(handle)`.
        """
        if not (self.reference or trusted):
            raise UntrustedCode(f"env {self.id!r} is not a shipped reference env: its code runs only in the sandbox "
                                "(sandbox.session.open_runtime), or pass trusted=True for code you vouch for")
        module = load_module(self.path / "env.py", f"envforge_env_{self.id.replace('-', '_').replace('.', '_')}")
        m = self.manifest
        return runtime_for(module, m.kind, m.entry, **runtime_options(m))

    def summary(self) -> EnvSummary:
        m = self.manifest
        return EnvSummary(id=m.id, name=m.name, kind=m.kind, topic=m.topic, tools=len(m.tools), states=len(m.states),
                          reference=self.reference, path=str(self.path))

    def edited(self) -> bool:
        """True if the files no longer match the content hash written with them (edited by hand since)."""
        return self.manifest.content_hash != content_hash(self.path)


def read_env(path: Path, reference: bool = False) -> EnvHandle:
    """Read and validate one env folder's manifest; raises CatalogError saying what is wrong.

    The folder is untrusted: a symlink anywhere in it makes it broken (its target could be any
    host file, read here or shipped into the sandbox), and every name in it must be a name.
    """
    manifest_path = path / "env.json"
    if not manifest_path.is_file() and not path.is_symlink():
        raise CatalogError("no env.json (partial or foreign folder)")
    link = find_symlink(path)
    if link is not None:
        raise CatalogError(f"{link} is a symlink: env folders hold regular files only")
    try:
        manifest = EnvManifest.model_validate_json(read_regular(manifest_path))
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0:3]
        raise CatalogError(f"env.json is invalid: {' '.join(first)}") from exc
    if manifest.id != path.name:
        raise CatalogError(f"env.json says id {manifest.id!r} but the folder is {path.name!r}")
    if not (path / "env.py").is_file():
        raise CatalogError("env.py is missing")
    missing = [s for s in manifest.states if not (path / "states" / f"{s}.json").is_file()]
    if missing:
        raise CatalogError(f"states listed in env.json are missing: {missing}")
    _check_task_names(path / "tasks.jsonl")
    return EnvHandle(path, manifest, reference)


def read_regular(path: Path) -> str:
    """The text of `path`, refusing a symlink at the last step (O_NOFOLLOW: ELOOP instead of its target)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, encoding="utf-8") as handle:
        return handle.read()


def find_symlink(folder: Path) -> str | None:
    """The first symlink in `folder` (itself included), relative to its parent; None if there is none."""
    if folder.is_symlink():
        return folder.name
    for current, dirs, files in os.walk(folder):  # followlinks=False: a linked folder is listed, not entered
        for name in sorted(dirs + files):
            full = Path(current) / name
            if full.is_symlink():
                return str(full.relative_to(folder.parent))
    return None


def _check_task_names(path: Path) -> None:
    """Every task's id and state in tasks.jsonl is a name (a state is joined into states/<name>.json)."""
    if not path.is_file():
        return
    for number, line in enumerate(read_regular(path).splitlines(), 1):
        try:
            record = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue  # tasks() reports it with the rest of the line's problems
        if not isinstance(record, dict):
            continue
        for key in ("id", "state"):
            value = record.get(key)
            if value is not None and not is_name(value):
                raise CatalogError(f"tasks.jsonl:{number}: {key} {str(value)[:60]!r} is not a name (no '/', no '..')")


class Catalog:
    """The reference envs plus one catalog folder (created on first write)."""

    def __init__(self, root: Path | str | None = None, *, include_reference: bool = True) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.include_reference = include_reference

    def check_root(self, *, write: bool = False) -> None:
        """Raise CatalogError if the root is not a folder, or (`write`) cannot be created or written.

        Writers call it first, so a bad `--catalog` is one clear error instead of a failure deep
        inside mkdir or SQLite. Writability is tried, not read from the mode bits: chmod does not
        stop root, and read-only mounts or immutable folders stop everyone.
        """
        if self.root.exists() and not self.root.is_dir():
            raise CatalogError(f"the catalog {self.root} is a file, not a folder (--catalog DIR or ${ENV_VAR})")
        if not write:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as exc:
            raise CatalogError(f"the catalog {self.root} is not writable ({exc.strerror or exc})") from exc

    @contextlib.contextmanager
    def lock(self, holder: str) -> Iterator[None]:
        """Hold the catalog's writer lock (`<root>/.lock`), waiting with a message if another writer has it.

        Synthesis runs take it for their whole run, so a second run into the same catalog starts
        after the first: its dedup index and its id checks then see every env the first registered.
        """
        self.check_root(write=True)
        with open(self.root / ".lock", "a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                other = handle.read().strip() or "another process"
                sys.stderr.write(f"envforge: waiting for the catalog {self.root}: {other} is writing to it\n")
                sys.stderr.flush()
                fcntl.flock(handle, fcntl.LOCK_EX)
            handle.truncate(0)
            handle.write(f"{holder} (pid {os.getpid()})\n")
            handle.flush()
            try:
                yield
            finally:
                handle.truncate(0)
                fcntl.flock(handle, fcntl.LOCK_UN)

    # --- reading ------------------------------------------------------------------------
    def _reference(self) -> tuple[list[EnvHandle], list[EnvProblem]]:
        handles, problems = [], []
        if self.include_reference:
            for folder in (REFERENCE_DIR / name for name in REFERENCE_IDS):
                try:
                    handles.append(read_env(folder, reference=True))
                except CatalogError as exc:
                    problems.append(EnvProblem(folder, str(exc)))
        return handles, problems

    def list(self) -> tuple[list[EnvSummary], list[EnvProblem]]:
        """Summaries of all usable envs (reference first) and the problems of broken folders."""
        handles, problems = self._reference()
        summaries = [h.summary() for h in handles]
        reference_ids = {s.id for s in summaries}
        if self.root.is_dir():
            user, user_problems = self._index().refresh(self.root)
            problems.extend(user_problems)
            for summary in user:
                if summary.id in reference_ids:
                    problems.append(EnvProblem(Path(summary.path), f"id {summary.id!r} clashes with a reference env"))
                else:
                    summaries.append(summary)
        return summaries, problems

    def get(self, env_id: str) -> EnvHandle:
        """Return env `env_id`; raises CatalogError (a bad name, broken env, or unknown with the known ids).

        `env_id` may come from a client: it is checked as a name first, and reference status comes
        from the shipped list (REFERENCE_IDS), never from a path that happens to exist.
        """
        try:
            check_env_id(env_id)
        except BadName as exc:
            raise CatalogError(str(exc)) from exc
        if self.include_reference and env_id in REFERENCE_IDS:
            return self._read_or_raise(REFERENCE_DIR / env_id, reference=True)
        folder = self.root / env_id
        if folder.is_dir() and not env_id.startswith("."):
            return self._read_or_raise(folder, reference=False)
        known = ", ".join(s.id for s in self.list()[0]) or "none"
        raise CatalogError(f"Unknown env {env_id!r}. Known: {known}")

    @staticmethod
    def _read_or_raise(folder: Path, reference: bool) -> EnvHandle:
        try:
            return read_env(folder, reference)
        except CatalogError as exc:
            raise CatalogError(f"Env folder {folder} is broken: {exc}") from exc

    def _index(self) -> CatalogIndex:
        return CatalogIndex(self.root / "index.sqlite")

    # --- writing ------------------------------------------------------------------------
    def write_env(self, manifest: EnvManifest, env_source: str, states: dict[str, dict[str, Any]],
                  tasks: Iterable[Task] = (), *, replace: bool = False,
                  extra_files: dict[str, str] | None = None) -> EnvHandle:
        """Write a complete env atomically; the manifest's states and content_hash are filled in.

        `extra_files` are helper modules env.py imports (relative path -> text), e.g. for
        imported envs. States keep their key order: a class env iterates its dicts, and code that
        returns a record as it is shows its keys, in the order they were stored.

        Raises CatalogError if the id is a reference env's, or exists and `replace` is False.
        """
        try:
            check_env_id(manifest.id)
            for name in states:
                check_state_name(name)
        except BadName as exc:
            raise CatalogError(str(exc)) from exc
        if manifest.id in REFERENCE_IDS:
            raise CatalogError(f"Env id {manifest.id!r} is taken by a reference env")
        target = self.root / manifest.id
        if target.exists() and not replace:
            raise EnvExists(manifest.id, self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        staging = as_normal_dir(Path(tempfile.mkdtemp(prefix=f".tmp-{manifest.id}-", dir=self.root)))  # not 0700
        try:
            (staging / "states").mkdir()
            (staging / "env.py").write_text(env_source, encoding="utf-8")
            for relative, text in sorted((extra_files or {}).items()):
                target_file = (staging / relative).resolve()
                if staging.resolve() not in target_file.parents:
                    raise CatalogError(f"extra file {relative!r} would land outside the env folder")
                target_file.parent.mkdir(parents=True, exist_ok=True)
                target_file.write_text(text, encoding="utf-8")
            for name, state in sorted(states.items()):
                _write_json(staging / "states" / f"{name}.json", to_jsonable(state), sort_keys=False)
            lines = [t.model_dump_json(exclude_none=True) for t in tasks]
            (staging / "tasks.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            final = manifest.model_copy(update={"states": sorted(states), "content_hash": content_hash(staging)})
            _write_json(staging / "env.json", final.model_dump(mode="json"))
            _fsync_tree(staging)
            if target.exists():
                trash = self.root / f".trash-{manifest.id}-{os.getpid()}"
                os.rename(target, trash)
                os.rename(staging, target)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        handle = read_env(target)
        self._index().upsert(handle.summary(), _stamp(target))
        return handle

    def remove(self, env_id: str) -> None:
        """Delete a user env (reference envs cannot be removed)."""
        handle = self.get(env_id)
        if handle.reference:
            raise CatalogError(f"Env {env_id!r} is a reference env and cannot be removed")
        trash = self.root / f".trash-{env_id}-{os.getpid()}"
        os.rename(handle.path, trash)
        shutil.rmtree(trash, ignore_errors=True)
        self._index().delete(env_id)


def _write_json(path: Path, data: Any, *, sort_keys: bool = True) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=sort_keys, ensure_ascii=False) + "\n", encoding="utf-8")


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())


def _stamp(folder: Path) -> str:
    """A cheap change marker of an env folder: mtimes of env.json, the folder, states/ and tasks.jsonl.

    Adding, removing or renaming files changes a folder's mtime, so a deleted env.py or state
    file invalidates the cached row; editing env.json changes its own mtime.
    """
    stamps = []
    for path in (folder / "env.json", folder, folder / "states", folder / "tasks.jsonl"):
        try:
            stamps.append(str(path.lstat().st_mtime_ns))
        except OSError:
            stamps.append("-")
    return ":".join(stamps)


class CatalogIndex:
    """SQLite index of a catalog folder: a cache of manifest summaries keyed by a folder stamp."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path)
        connection.execute(
            "CREATE TABLE IF NOT EXISTS envs (id TEXT PRIMARY KEY, name TEXT, kind TEXT, topic TEXT, tools INTEGER,"
            " states INTEGER, path TEXT, stamp TEXT)"
        )
        return connection

    def upsert(self, summary: EnvSummary, stamp: str) -> None:
        with self._connect() as connection:
            self._put(connection, summary, stamp)

    @staticmethod
    def _put(connection: sqlite3.Connection, s: EnvSummary, stamp: str) -> None:
        connection.execute("INSERT OR REPLACE INTO envs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (s.id, s.name, s.kind, s.topic, s.tools, s.states, s.path, stamp))

    def delete(self, env_id: str) -> None:
        with self._connect() as connection:
            connection.execute("DELETE FROM envs WHERE id = ?", (env_id,))

    def _open(self) -> tuple[sqlite3.Connection, dict[str, Any]]:
        """The index and its rows; a corrupt index is only a cache, so it is rebuilt from the manifests."""
        try:
            connection = self._connect()
            return connection, {r[0]: r for r in connection.execute("SELECT * FROM envs")}
        except sqlite3.DatabaseError:
            self.path.unlink(missing_ok=True)
            return self._connect(), {}

    def refresh(self, root: Path) -> tuple[list[EnvSummary], list[EnvProblem]]:
        """Bring the index in line with the folders (re-reading changed manifests only).

        A catalog the index cannot be written in (a read-only folder) is listed from its
        manifests, uncached: listing needs no write.
        """
        try:
            connection, rows = self._open()
        except (sqlite3.Error, OSError):
            summaries, problems, _ = _scan(root, {})
            return summaries, problems
        summaries, problems, fresh = _scan(root, rows)
        try:
            with connection:
                for summary, stamp in fresh:
                    self._put(connection, summary, stamp)
                for stale in set(rows) - {s.id for s in summaries}:
                    connection.execute("DELETE FROM envs WHERE id = ?", (stale,))
        except sqlite3.Error:
            pass  # a read-only index: the listing is right, it is only not cached
        finally:
            connection.close()
        return summaries, problems


def _scan(root: Path, rows: dict[str, Any]) -> tuple[list[EnvSummary], list[EnvProblem], list[tuple[EnvSummary, str]]]:
    """Every env folder's summary (from `rows` when its stamp is unchanged), the broken folders, and what to cache."""
    summaries: list[EnvSummary] = []
    problems: list[EnvProblem] = []
    fresh: list[tuple[EnvSummary, str]] = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        folder = Path(entry.path)
        stamp = _stamp(folder)
        row = rows.get(entry.name)
        if row is not None and row[7] == stamp:
            summaries.append(EnvSummary(id=row[0], name=row[1], kind=row[2], topic=row[3], tools=row[4], states=row[5],
                                        reference=False, path=row[6]))
            continue
        try:
            summary = read_env(folder).summary()
        except CatalogError as exc:
            problems.append(EnvProblem(folder, str(exc)))
            continue
        fresh.append((summary, stamp))
        summaries.append(summary)
    return summaries, problems, fresh
