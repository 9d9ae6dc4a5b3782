"""What a worker's frames may say: each frame kind as a typed model, checked where it enters the supervisor.

sandbox/frames.py turns bytes into a JSON object; this module turns that object into values the
rest of envforge may trust (a call's `StepResult`, in its own wire form, checked strictly; tool
descriptors, a state that is a JSON object, nothing nested deeper than `MAX_DEPTH`). A worker runs
env code, so its frames are untrusted input: anything else raises `WireError`, which the pool turns
into that one job's `protocol: ...` result.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError, field_validator

from catalog.models import StepResult, ToolDescriptor

__all__ = ["MAX_DEPTH", "WireError", "ReadyFrame", "CallFrame", "TaskFrame", "DoneFrame", "parse", "too_deep", "claims_a_kind"]

MAX_DEPTH = 200  # nesting a frame's values may have: callers walk them recursively (json.dumps, diffs, codecs)


class WireError(ValueError):
    """A frame that parsed as JSON but is not a frame this protocol has."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    job: StrictInt
    instance: StrictInt | None = None  # the job's instance on a dense worker (checked by the pool)


class ReadyFrame(_Frame):
    """The env loaded and reset: its initial state (if asked) and its tools (if asked).

    `template`: the state is the one every reset to this named state gives in this worker
    (catalog/state/rewind.py); sent once, then left out (`state` None) for jobs that say the
    supervisor holds it (`Job.known_initial`).
    """

    ready: Literal[True]
    state: dict[str, Any] | None = None
    tools: list[ToolDescriptor] | None = None
    template: StrictBool = False


class CallFrame(StepResult):
    """One action's result: the step's wire form (catalog.models.StepResult) tagged with the job.

    The worker's event for the call (`crash`, `memory`) is the step's `info["event"]`, as text.
    `same_state`: the call changed nothing (no delta, no hidden delta), so the state after it,
    left out, is the one before it; `patch`: the state after is the one before with these
    subtrees replaced (catalog/state/patches.py). Both only in jobs with `Job.share_states`.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    job: StrictInt
    instance: StrictInt | None = None
    same_state: StrictBool = False
    patch: list[dict[str, Any]] | None = None

    @field_validator("info")
    @classmethod
    def _event_is_text(cls, info: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(info.get("event", ""), str):
            raise ValueError("the event must be text")
        return info

    def step(self) -> StepResult:
        """The step itself (already validated: nothing is checked again)."""
        return StepResult.model_construct(self.model_fields_set - {"job", "instance", "same_state", "patch"},
                                          observation=self.observation,
                                          delta=self.delta, outcome=self.outcome, state=self.state, info=self.info)


class TaskFrame(_Frame):
    """A task's check on the initial state and after its solution (sandbox/_worker.py `_run_task`)."""

    task: StrictStr
    initial: StrictBool | None = None
    final: StrictBool | None = None
    error: StrictStr | None = None
    solution_failed: dict[str, Any] | None = None


class DoneFrame(_Frame):
    """The job ended; `recycle` says why the worker must not serve another."""

    done: Literal[True]
    event: StrictStr | None = None
    recycle: StrictStr | None = None
    fatal: StrictBool = False


Frame = ReadyFrame | CallFrame | TaskFrame | DoneFrame
_KINDS: dict[str, tuple[str, type[BaseModel]]] = {"ready": ("ready", ReadyFrame), "task": ("task", TaskFrame),
                                               "done": ("done", DoneFrame), "outcome": ("call", CallFrame)}


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True if `value` nests lists/dicts deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def claims_a_kind(frame: dict[str, Any]) -> bool:
    """True if the frame has the marker key of one of the kinds (ready, task, done, call)."""
    return any(key in frame for key in _KINDS)


def parse(frame: dict[str, Any], openings: int | None = None) -> Frame:
    """The frame as its typed model; WireError naming the first thing wrong.

    `openings`, the `[` and `{` bytes of the frame's JSON text (sandbox.frames.FrameReader), bound
    how deep it can nest: at most `MAX_DEPTH` of them, and the walk of `too_deep` is not needed.
    """
    claimed = next((key for key in _KINDS if key in frame), None)
    if claimed is None:
        raise WireError("unknown frame")
    name, model = _KINDS[claimed]
    if (openings is None or openings > MAX_DEPTH) and too_deep(frame):
        raise WireError(f"malformed {name} frame (nested deeper than {MAX_DEPTH})")
    try:
        return model.model_validate(frame)  # type: ignore[return-value]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "frame"
        raise WireError(f"malformed {name} frame ({where}: {first['msg']})") from None
