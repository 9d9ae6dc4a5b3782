"""Manifest upkeep: the content hash of an env folder, refreshing `env.json`, and how its env runs.

`runtime_options` is the one reading of how a manifest says its env runs calls (init, failure
convention, whether ill-typed arguments are refused: `strict_args`), for runtimes, sandbox jobs
and benchmark items alike.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from catalog.models import EnvManifest
from catalog.runtime import load_module, runtime_for

__all__ = ["content_hash", "refresh_manifest", "runtime_options"]


def runtime_options(manifest: EnvManifest) -> dict[str, Any]:
    """What `runtime_for` needs from a manifest besides kind and entry (also sent to sandbox workers).

    Every runtime, sandbox job and benchmark item (catalog.bench.items.env_context) takes these
    from here, so an env treats a call the same way wherever it runs or is simulated.
    """
    return {"init": manifest.init, "failure_exceptions": list(manifest.failure_exceptions),
            "convention": manifest.convention, "strict_args": manifest.strict_args,
            "failure": manifest.failure.model_dump() if manifest.failure else None}


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
    runtime = runtime_for(module, manifest.kind, manifest.entry, **runtime_options(manifest))
    fresh = manifest.model_copy(update={
        "tools": list(runtime.tools.values()),
        "states": sorted(p.stem for p in (folder / "states").glob("*.json")),
        "content_hash": content_hash(folder),
    })
    if write:
        text = json.dumps(fresh.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        (folder / "env.json").write_text(text, encoding="utf-8")
    return fresh
