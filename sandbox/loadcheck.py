"""The import command's load check, in the sandbox.

The module's code (module level included) runs only in a sandbox worker, and every config must
load and snapshot there. Imports the sandbox would refuse are named first, with what would make
them work: `--allow-module NAME` for an installed module the sandbox can allow, the install for
one that is missing, and no flag for what it never allows (processes, sockets, native calls:
an unused `import subprocess` needs none, sandbox/allowlist.py's stand-ins take it).
"""

from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path
from typing import Any

from catalog.importing.importer import ImportProblem
from catalog.models import EnvManifest, ToolDescriptor
from catalog.store import runtime_options
from sandbox.allowlist import STUBBED_IMPORTS, check_imports, never_allowed
from sandbox.pool import DEFAULT_TIMEOUT, Job, SandboxPool

__all__ = ["sandbox_load_check", "import_hint"]


def import_hint(names: list[str]) -> str:
    """What makes refused imports work, as a parenthesis to append (empty if nothing can).

    `--allow-module` is offered only for a module it would allow: installed, and not one the
    sandbox never gives; a missing one gets its install, a never-allowed one is said to be so.
    """
    tops = sorted({name.split(".")[0] for name in names})
    never = [top for top in tops if never_allowed(top)]
    allowable = [top for top in tops if top not in never and _installed(top)]
    missing = [top for top in tops if top not in never and top not in allowable]
    parts = []
    if allowable:
        parts.append("installed modules can be allowed for this env: --allow-module "
                     + " --allow-module ".join(allowable))
    if missing:
        parts.append(f"not installed: pip install {' '.join(missing)}, then --allow-module "
                     + " --allow-module ".join(missing))
    if never:
        parts.append(f"the sandbox never allows {', '.join(n for n in names if n.split('.')[0] in never)} "
                     "(processes, sockets or native calls; no flag changes that)")
    return f" ({'; '.join(parts)})" if parts else ""


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _refused_imports(folder: Path, manifest: EnvManifest) -> None:
    never = sorted(name for name in manifest.allow_modules if never_allowed(name))
    if never:
        unneeded = " (an import of it needs no flag: env code may import it, a use is refused at the call)" \
            if never[0] in STUBBED_IMPORTS else ""
        raise ImportProblem(f"--allow-module {never[0]}: the sandbox never allows it (it gives processes, sockets or "
                            f"native calls){unneeded}")
    problems = check_imports(folder, manifest.allow_modules)
    if problems:
        names = [p.split()[1] for p in problems if p.startswith("import ")]
        raise ImportProblem(f"{manifest.name} cannot run in the sandbox: it imports what the sandbox does not "
                            f"allow: {'; '.join(problems)}{import_hint(names)}")


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
                    refused = result.event.removeprefix("forbidden: import").split()[:1]
                    raise ImportProblem(f"{name} cannot run in the sandbox: {result.event}"
                                        f"{import_hint(refused) or ' (sandbox/allowlist.py lists what env code may import)'}")
                if "EnvLoadError" in event or "allowed module" in event:
                    raise ImportProblem(f"{name} does not load (in the sandbox): {event.removeprefix('EnvLoadError: ')}")
                raise ImportProblem(f"Config {state_name!r} does not load into {name} (in the sandbox): {event}")
            if tools is None:
                tools = result.tools or []
    try:
        return [ToolDescriptor.model_validate(t) for t in tools or []]
    except ValueError as exc:  # worker output is untrusted
        raise ImportProblem(f"{name}: the sandbox returned unusable tool descriptors ({exc})") from None
