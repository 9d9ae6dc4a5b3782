"""The data model shared by every part of envforge: manifests, actions, steps and strata.

Manifest-like records (written to disk, read by other tools) are pydantic models that forbid
unknown fields, so a typo in a hand-edited `env.json` is an error instead of a silent default.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from catalog.bench.strata import delta_band
from catalog.jsonmodel import JsonModel
from catalog.names import MAX_NAME, NAME_PATTERN, check_env_id, check_state_name
from catalog.state.delta import DeltaOp

__all__ = [
    "ToolKind",
    "EnvKind",
    "ToolDescriptor",
    "Provenance",
    "FailureConvention",
    "Convention",
    "Quality",
    "EnvManifest",
    "Action",
    "Outcome",
    "StepResult",
    "Strata",
]


class ToolKind(enum.StrEnum):
    """Whether a tool may change state."""

    READ = "read"
    WRITE = "write"


EnvKind = Literal["sql", "class"]
Convention = Literal["class", "tool_classes", "toolkit", "functions"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolDescriptor(_Strict):
    """What a caller needs to know about one tool, without importing its code."""

    name: str
    kind: ToolKind | None = Field(None, description="Declared kind; None for class-based envs (inferred later).")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}, "required": []})

    def openai_schema(self) -> dict[str, Any]:
        """Return the OpenAI function-calling form of this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class Provenance(_Strict):
    """Where an environment came from and what producing it cost."""

    backend: str = "hand-written"
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    source: str | None = Field(default=None, description="Original path or URL for imported envs.")


class FailureConvention(_Strict):
    """How an env signals that a tool refused (a failure), as opposed to succeeding or crashing.

    Inferred from the env's syntax tree at import, or declared there (`--failure-exception`,
    `--error-prefix`). `error_keys` are keys whose presence in a returned dict means failure
    (`success` means: failure when it is False).
    """

    exceptions: list[str] = Field(default_factory=list, description="Exception type names raised to refuse.")
    error_prefixes: list[str] = Field(default_factory=list, description="A str result starting with one is a failure.")
    error_keys: list[str] = Field(default_factory=list, description="Keys of a returned dict that mean failure.")


class Quality(_Strict):
    """The quality gate's verdict: overall score and per-check results."""

    score: float
    checks: dict[str, Any] = Field(default_factory=dict)


class EnvManifest(_Strict):
    """`env.json`: everything about an environment that listing and searching need."""

    id: str = Field(max_length=MAX_NAME, pattern=rf"^{NAME_PATTERN}$")
    name: str
    kind: EnvKind
    entry: str = Field(description="Name of the Env subclass (sql) or the environment class (class) in env.py.")
    topic: str = ""
    description: str = ""
    rules: list[str] = Field(default_factory=list)
    tools: list[ToolDescriptor] = Field(default_factory=list)
    states: list[str] = Field(default_factory=list, description="Names of the initial states under states/.")
    init: Literal["auto", "constructor", "envscaler", "setattr", "load_scenario"] = Field(
        "auto",
        description="How a class-based env loads its init config: constructor (cls(config)), envscaler "
        "(cls(config), then every key set as an attribute, as EnvScaler's loader does), setattr (cls(), then one "
        "attribute per key), load_scenario (cls(), then _load_scenario(config)); auto picks from the class.",
    )
    failure_exceptions: list[str] = Field(
        default_factory=list,
        description="Exception type names that this env raises to signal a rule violation (a failure, not a crash).",
    )
    convention: Convention = Field(
        "class", description="How the code is organised (class envs only): class (state in attributes), tool_classes "
        "(one class per tool with invoke(data, ...) and get_info()), toolkit (decorated methods over a pydantic db), "
        "functions (module-level functions over a module-level dict).")
    failure: FailureConvention | None = Field(
        None, description="How the env signals failure (imported envs); None: the defaults (ToolError, error dicts).")
    allow_modules: list[str] = Field(
        default_factory=list, description="Installed third-party modules this env may import in the sandbox.")
    strict_args: bool = Field(
        True, description="Ill-typed calls are invalid and do not run (True), or run as Python runs them (imported).")
    provenance: Provenance = Field(default_factory=Provenance)
    quality: Quality | None = None
    content_hash: str = ""

    @field_validator("id")
    @classmethod
    def _id_is_name(cls, value: str) -> str:
        return check_env_id(value)

    @field_validator("states")
    @classmethod
    def _states_are_names(cls, value: list[str]) -> list[str]:
        for name in value:
            check_state_name(name)  # each is joined into states/<name>.json
        return value

    def tool(self, name: str) -> ToolDescriptor:
        """Return the descriptor of tool `name`; raises KeyError listing the available tools."""
        for descriptor in self.tools:
            if descriptor.name == name:
                return descriptor
        raise KeyError(f"Unknown tool {name!r} in env {self.id!r}. Available: {', '.join(t.name for t in self.tools)}")


class Action(_Strict):
    """A tool call: `{name, arguments}`."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Outcome(enum.StrEnum):
    """How a call ended. Only `success` and `failure` are behaviours of a correct env."""

    SUCCESS = "success"
    FAILURE = "failure"  # the tool refused: a rule (guard) fired
    CRASH = "crash"  # an uncaught exception: a bug in the env
    INVALID = "invalid"  # the action itself is malformed: unknown tool, bad arguments


class StepResult(JsonModel):
    """The result of executing one action, the same value in-process, from a sandbox worker and on disk.

    Its wire form is `model_dump(mode="json")` (read back by `model_validate`): the body of a
    sandbox call frame (sandbox/wire.py), and what serving, replay and trajectories carry.

    Attributes:
        observation: The tool's return value as canonical JSON data (what the agent sees).
        delta: The state change, computed from change tracking (cost follows |Δ|).
        outcome: success / failure / crash / invalid.
        state: The full state after the call, only when the caller asked for it.
        info: Diagnostics kept out of the observation (exception type, traceback, the sandbox's `event`).

    """

    model_config = ConfigDict(extra="forbid")

    observation: Any = None
    delta: list[DeltaOp] = Field(default_factory=list)
    outcome: Annotated[Outcome, Field(strict=False)]  # its value as text on the wire, even in strict frames
    state: dict[str, Any] | None = None
    info: dict[str, Any] = Field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """True unless the tool completed successfully."""
        return self.outcome is not Outcome.SUCCESS

    @property
    def event(self) -> str | None:
        """What the sandbox reported about this call (`crash`, `memory`, ...), None for a normal call."""
        event = self.info.get("event")
        return event if isinstance(event, str) else None


class Strata(_Strict):
    """The strata a sample belongs to (EnvSimBench's, with |Δ| banded by `catalog.bench.strata`).

    A sample itself is `catalog.bench.items.BenchItem` (the step plus the env context a simulator needs).
    """

    outcome: Literal["success", "failure"]
    delta_band: Literal["0", "1-2", "3-6", "7-12", "13+"]
    delta_size: int
    arg_count: int

    @classmethod
    def of(cls, outcome: Outcome, delta_size: int, arg_count: int) -> Strata:
        """Classify one step; crashes and invalid actions count as failures."""
        label: Literal["success", "failure"] = "success" if outcome is Outcome.SUCCESS else "failure"
        return cls(outcome=label, delta_band=delta_band(delta_size), delta_size=delta_size, arg_count=arg_count)  # type: ignore[arg-type]
