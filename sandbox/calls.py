"""Run call sequences through the sandbox, as the `CallRunner` that constraints.completeness takes."""

from __future__ import annotations

from typing import Any

from catalog.models import Action, StepResult
from catalog.store import EnvHandle
from sandbox.pool import Job, JobResult, SandboxPool

__all__ = ["SandboxCallRunner"]


class SandboxCallRunner:
    """Runs actions for a catalog env in a sandbox pool, with the state after every call."""

    def __init__(self, handle: EnvHandle, pool: SandboxPool) -> None:
        self.handle, self.pool = handle, pool
        self.events: list[str] = []

    def job(self, state_name: str, actions: list[Action]) -> JobResult:
        """The actions from `state_name`, with the state after each (read-only: states are shared between results)."""
        job = Job.for_env(self.handle, [a.model_dump() for a in actions], state_name=state_name, snapshot=True)
        job.share_states = True
        result = self.pool.run(job)
        if result.event:
            self.events.append(result.event)
        return result

    def __call__(self, state_name: str, state: dict[str, Any], actions: list[Action]) -> tuple[dict[str, Any], list[StepResult]]:
        """The states with a class env's hidden attributes too: the spec simulator is handed what the runtime has."""
        job = Job.for_env(self.handle, [a.model_dump() for a in actions], state_name=state_name, snapshot=True)
        job.hidden = self.handle.manifest.kind == "class"
        result = self.pool.run(job)
        if result.event:
            self.events.append(result.event)
        return result.initial_state or state, result.calls
