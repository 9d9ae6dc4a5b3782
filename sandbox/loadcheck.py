"""The import command's load check, in the sandbox.

The module's code (module level included) runs only in a sandbox worker, and every config must
load and snapshot there. Imports the sandbox would refuse are named first, with the flag that
allows an installed one for this env (`--allow-module NAME`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from catalog.importing.importer import ImportProblem
from catalog.models import EnvManifest, ToolDescriptor
from catalog.store import runtime_options
from sandbox._worker import PRUNED
from sandbox.allowlist import check_imports
from sandbox.pool import DEFAULT_TIMEOUT, Job, SandboxPool

__all__ = ["sandbox_load_check"]


def _refused_imports(folder: Path, manifest: EnvManifest) -> None:
    never = sorted(set(manifest.allow_modules) & set(PRUNED))
    if never:
        raise ImportProblem(f"--allow-module {never[0]}: the sandbox never allows it (it gives processes, sockets or "
                            "native calls)")
    problems = check_imports(folder, manifest.allow_modules)
    if problems:
        names = sorted({p.split()[1].split(".")[0] for p in problems if p.startswith("import ")})
        hint = f" (installed modules can be allowed for this env: --allow-module {' --allow-module '.join(names)})" \
            if names else ""
        raise ImportProblem(f"{manifest.name} cannot run in the sandbox: it imports what the sandbox does not "
                            f"allow: {'; '.join(problems)}{hint}")


def sandbox_load_check(folder: Path, manifest: EnvManifest, states: dict[str, dict[str, Any]], *,
                       pool: SandboxPool | None = None) -> list[ToolDescriptor]:
    """Load `folder` in a sandbox worker and reset it with every state; its tool descriptors.

    `pool` reuses a running sandbox (its fork server) for several imports; by default one is
    started for this check.
    """
    _refused_imports(folder, manifest)
    tools: list[dict[str, Any]] | None = None
    options = runtime_options(manifest)
    name = manifest.name
    with contextlib.nullcontext(pool) if pool is not None else \
            SandboxPool(1, timeout=DEFAULT_TIMEOUT, load_timeout=20.0) as running:
        for state_name, config in states.items():
            job = Job(str(folder), "class", [], entry=manifest.entry, init=options["init"],
                      failure_exceptions=options["failure_exceptions"], convention=options["convention"],
                      failure=options["failure"], strict_args=options["strict_args"],
                      allow_modules=list(manifest.allow_modules), state=config, snapshot=True,
                      describe=tools is None)
            result = running.run(job)
            if result.event:
                event = result.event.removeprefix("crash: ")
                if result.event.startswith("forbidden: import"):
                    raise ImportProblem(f"{name} cannot run in the sandbox: {result.event} "
                                        "(sandbox/allowlist.py lists what env code may import; --allow-module "
                                        "NAME allows an installed one for this env)")
                if "EnvLoadError" in event or "allowed module" in event:
                    raise ImportProblem(f"{name} does not load (in the sandbox): {event.removeprefix('EnvLoadError: ')}")
                raise ImportProblem(f"Config {state_name!r} does not load into {name} (in the sandbox): {event}")
            if tools is None:
                tools = result.tools or []
    try:
        return [ToolDescriptor.model_validate(t) for t in tools or []]
    except ValueError as exc:  # worker output is untrusted
        raise ImportProblem(f"{name}: the sandbox returned unusable tool descriptors ({exc})") from None
