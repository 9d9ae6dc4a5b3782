"""The import command's load check, in the sandbox.

The module's code (module level included) runs only in a sandbox worker, and every config must
load and snapshot there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog.importer import ImportProblem
from catalog.models import ToolDescriptor
from verifier.sandbox import DEFAULT_TIMEOUT, Job, SandboxPool

__all__ = ["sandbox_load_check"]


def sandbox_load_check(folder: Path, entry: str, failure_exceptions: list[str],
                       states: dict[str, dict[str, Any]]) -> list[ToolDescriptor]:
    """Load `folder` in a sandbox worker and reset it with every state; its tool descriptors."""
    tools: list[dict[str, Any]] | None = None
    with SandboxPool(1, timeout=DEFAULT_TIMEOUT, load_timeout=20.0) as pool:
        for name, config in states.items():
            job = Job(str(folder), "class", [], entry=entry, failure_exceptions=failure_exceptions, state=config,
                      snapshot=True, describe=tools is None)
            result = pool.run(job)
            if result.event:
                event = result.event.removeprefix("crash: ")
                if result.event.startswith("forbidden: import"):
                    raise ImportProblem(f"{entry} cannot run in the sandbox: {result.event} "
                                        "(verifier/allowlist.py lists what env code may import)")
                raise ImportProblem(f"Config {name!r} does not load into {entry} (in the sandbox): {event}")
            if tools is None:
                tools = result.tools or []
    try:
        return [ToolDescriptor.model_validate(t) for t in tools or []]
    except ValueError as exc:  # worker output is untrusted
        raise ImportProblem(f"{entry}: the sandbox returned unusable tool descriptors ({exc})") from None
