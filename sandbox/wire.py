"""What a worker's frames may say: each frame kind as a typed model, checked where it enters the supervisor.

sandbox/frames.py turns bytes into a JSON object; this module turns that object into values the
rest of envforge may trust (an `Outcome` value, delta ops of the shape `{op, path, value}`, tool
descriptors, a state that is a JSON object, nothing nested deeper than `MAX_DEPTH`). A worker runs
env code, so its frames are untrusted input: anything else raises `WireError`, which the pool turns
into that one job's `protocol: ...` result.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError, model_validator

from catalog.models import Outcome, ToolDescriptor
from catalog.state.delta import OpName

__all__ = ["MAX_DEPTH", "WireError", "ReadyFrame", "CallFrame", "TaskFrame", "DoneFrame", "parse", "too_deep", "claims_a_kind"]

MAX_DEPTH = 200  # nesting a frame's values may have: callers walk them recursively (json.dumps, diffs, codecs)


class WireError(ValueError):
    """A frame that parsed as JSON but is not a frame this protocol has."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    job: StrictInt


class WireDeltaOp(BaseModel):
    """One delta op as it travels: {op, path: [str, ...], value} (no value needed for delete)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    op: OpName
    path: list[StrictStr] = Field(min_length=1)
    value: Any = None

    @model_validator(mode="after")
    def _value_given(self) -> WireDeltaOp:
        if self.op != "delete" and "value" not in self.model_fields_set:
            raise ValueError(f"a {self.op} op needs a value")
        return self


class ReadyFrame(_Frame):
    """The env loaded and reset: its initial state (if asked) and its tools (if asked)."""

    ready: Literal[True]
    state: dict[str, Any] | None = None
    tools: list[ToolDescriptor] | None = None


class CallFrame(_Frame):
    """One action's result."""

    outcome: Annotated[Outcome, Field(strict=False)]  # its value as text, nothing else
    observation: Any = None
    delta: list[WireDeltaOp] = Field(default_factory=list)
    state: dict[str, Any] | None = None
    event: StrictStr | None = None
    info: dict[str, Any] = Field(default_factory=dict)


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
_KINDS: dict[str, tuple[str, type[_Frame]]] = {"ready": ("ready", ReadyFrame), "task": ("task", TaskFrame),
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


def parse(frame: dict[str, Any]) -> Frame:
    """The frame as its typed model; WireError naming the first thing wrong."""
    claimed = next((key for key in _KINDS if key in frame), None)
    if claimed is None:
        raise WireError("unknown frame")
    name, model = _KINDS[claimed]
    if too_deep(frame):
        raise WireError(f"malformed {name} frame (nested deeper than {MAX_DEPTH})")
    try:
        return model.model_validate(frame)  # type: ignore[return-value]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "frame"
        raise WireError(f"malformed {name} frame ({where}: {first['msg']})") from None
