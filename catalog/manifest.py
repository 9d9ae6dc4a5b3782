"""Manifest upkeep: the content hash of an env folder and refreshing `env.json` from the code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from catalog.models import EnvManifest
from catalog.runtime import load_module, runtime_for

__all__ = ["content_hash", "refresh_manifest"]


def content_hash(folder: Path) -> str:
    """SHA-256 over the code (env.py and helper modules), the states, tasks.jsonl and plan.json.

    env.json is left out: it holds the hash.
    """
    digest = hashlib.sha256()
    code = sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
    parts = [*code, *sorted((folder / "states").glob("*.json")), folder / "tasks.jsonl", folder / "plan.json"]
    for path in parts:
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def refresh_manifest(folder: Path, *, write: bool = True, trusted: bool = False) -> EnvManifest:
    """Recompute tools (from the code), states (from states/) and the content hash of `env.json`.

    This imports env.py in this process, so it is refused for anything but the shipped reference
    envs unless the caller vouches for the code (`trusted=True`).
    """
    if not (trusted or Path(folder).resolve().is_relative_to(Path(__file__).resolve().parent / "reference")):
        raise PermissionError(f"{folder} is not a shipped reference env: pass trusted=True for code you vouch for")
    manifest = EnvManifest.model_validate_json((folder / "env.json").read_text(encoding="utf-8"))
    module = load_module(folder / "env.py", f"envforge_manifest_{folder.name.replace('-', '_')}")
    runtime = runtime_for(module, manifest.kind, manifest.entry, init=manifest.init,
                          failure_exceptions=manifest.failure_exceptions,
                          failure=manifest.failure, strict_args=manifest.strict_args)
    fresh = manifest.model_copy(update={
        "tools": list(runtime.tools.values()),
        "states": sorted(p.stem for p in (folder / "states").glob("*.json")),
        "content_hash": content_hash(folder),
    })
    if write:
        text = json.dumps(fresh.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        (folder / "env.json").write_text(text, encoding="utf-8")
    return fresh
