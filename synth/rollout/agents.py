"""Agents: what answers each turn of an episode. A model through the official openai client, or the reference.

- `ModelAgent`: a registry model. With native tool calling (the registry's `tool_calls`) the
  env's tools go in `tools=`; otherwise the JSON-schema fallback asks for one object
  `{"tool", "arguments", "message"}` under a schema with one alternative per tool (its name, its
  own parameters schema) plus `final` (the server enforces it where it can, envforge validates
  and re-asks otherwise), and the conversation is sent as plain chat (tool calls as the
  assistant's JSON, results as user turns).
  Either way the trajectory records native OpenAI messages, so SFT data has one format.
- `ReferenceAgent`: follows the task's reference solution, one call per turn, then ends with a
  final message: gold trajectories with no model, and the smoke test of the whole loop. Calls
  that fail by design (refusal tasks) and empty solutions are followed like any other.

`rollout --model` takes a named agent of `AGENTS` (a catalog.registry.Registry: today
`reference`) or else a registry model.

A turn's tool calls come back parsed: arguments that are not a JSON object carry the problem
(`ToolCall.error`), which the episode hands back to the model as the tool's answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from catalog.models import Action
from catalog.registry import Registry
from catalog.store import EnvHandle
from synth.llm import CallRecord, LLMClient, MalformedOutput, RepetitionError

__all__ = ["AGENTS", "FINAL", "Agent", "AgentFailed", "ModelAgent", "NamedAgent", "ReferenceAgent", "ToolCall", "Turn",
           "agent_help", "fallback_schema", "plain_chat", "reference_agent", "system_prompt"]

FINAL = "final"
Message = dict[str, Any]


class AgentFailed(RuntimeError):
    """The model's reply could not be used even after a re-ask: the episode ends (recorded, not retried)."""

    def __init__(self, message: str, record: CallRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


@dataclass
class ToolCall:
    """One call of a turn: `arguments` parsed, or `error` saying why they could not be."""

    id: str
    name: str
    arguments_text: str
    arguments: dict[str, Any] | None
    error: str | None = None


@dataclass
class Turn:
    """One assistant turn: its OpenAI message, its calls (none: the final answer) and the model call's record."""

    message: Message
    calls: list[ToolCall] = field(default_factory=list)
    record: CallRecord | None = None


class Agent(Protocol):
    """Anything that answers a turn given the conversation so far and the tools."""

    name: str

    def act(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], *, seed: int) -> Turn: ...


def system_prompt(env_doc: str) -> str:
    """The system message: the env as an agent would see it, and how to end (kept short for small models)."""
    return (f"You are an assistant operating this system:\n{env_doc}\n"
            "Use the tools to do what the user asks, following the rules. When you are done (or the rules "
            "forbid the request), reply with a short final message and no tool call.")


def parse_call(call_id: str, name: str, text: str) -> ToolCall:
    """A tool call with its arguments parsed; a problem is kept in `error`, never raised."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolCall(call_id, name, text, None, f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})")
    if not isinstance(value, dict):
        return ToolCall(call_id, name, text, None, f"the arguments must be a JSON object, got {type(value).__name__}")
    return ToolCall(call_id, name, text, value)


def _call_message(calls: Sequence[tuple[str, str, str]], content: str = "") -> Message:
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": text}} for cid, name, text in calls]}


class ReferenceAgent:
    """Follows a task's reference solution, one call per turn, then says it is done (or, for a refusal, declines)."""

    name = "reference"

    def __init__(self, solution: Sequence[Action], *, refusal: bool = False) -> None:
        self.solution = list(solution)
        self.refusal = refusal or not self.solution
        self.made = 0

    def act(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], *, seed: int) -> Turn:
        if self.made < len(self.solution):
            action = self.solution[self.made]
            self.made += 1
            call_id = f"call_{self.made}"
            text = json.dumps(action.arguments, ensure_ascii=False, sort_keys=True)
            return Turn(_call_message([(call_id, action.name, text)]), [ToolCall(call_id, action.name, text,
                                                                                   dict(action.arguments))])
        content = "I cannot do that: the rules of this system do not allow it." if self.refusal else "Done."
        return Turn({"role": "assistant", "content": content})


class TaskUnit(Protocol):
    """What a named agent needs of a rollout unit (synth.rollout.episode.Unit): which task it is."""

    @property
    def task_id(self) -> str: ...


NamedAgentFactory = Callable[[Any, EnvHandle], Agent]  # (a unit with a task_id, its env) -> the agent


@dataclass(frozen=True)
class NamedAgent:
    """An agent that needs no model: its name (a `--model` choice), a line of help, its factory per unit."""

    name: str
    summary: str
    factory: NamedAgentFactory


AGENTS: Registry[NamedAgent] = Registry("agent")


def agent_help() -> str:
    """The named agents `rollout --model` accepts, for its help."""
    return "; ".join(f"`{a.name}` ({a.summary})" for a in AGENTS.values())


def reference_agent(unit: TaskUnit, handle: EnvHandle) -> Agent:
    """The agent of `--model reference`: the unit's task's reference solution (none: an empty one)."""
    task = next(t for t in handle.tasks() if t.id == unit.task_id)
    return ReferenceAgent(task.solution or [], refusal=task.refusal)


AGENTS.add("reference", NamedAgent("reference", "follows each task's reference solution: gold trajectories, no model",
                                   reference_agent))


def fallback_schema(tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The JSON-schema fallback's reply: one tool with arguments fitting its own schema, or `final` with a message.

    One alternative per tool (its name a `const`, its arguments its parameters schema, no extra
    keys), so a server that enforces the schema by grammar (llama.cpp) lets a small model write
    only well-formed calls.
    """
    def turn(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "required": ["tool", "arguments", "message"],
                "properties": {"tool": {"const": name}, "arguments": arguments, "message": {"type": "string"}}}

    options = []
    for tool in tools:
        fn = tool.get("function", tool)
        params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("additionalProperties", False)
        options.append(turn(fn["name"], params))
    options.append(turn(FINAL, {"type": "object", "properties": {}, "additionalProperties": False}))
    return {"anyOf": options}


def _tool_lines(tools: Sequence[dict[str, Any]]) -> str:
    lines = []
    for tool in tools:
        fn = tool.get("function", tool)
        params = fn.get("parameters", {}).get("properties", {})
        args = ", ".join(f"{p}: {spec.get('type', 'any')}" for p, spec in params.items())
        lines.append(f"- {fn['name']}({args}): {fn.get('description', '').splitlines()[0] if fn.get('description') else ''}")
    return "\n".join(lines)


def plain_chat(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> list[Message]:
    """The conversation for an endpoint without tool calling.

    Tools are listed in the system message, calls become the assistant's JSON, results user turns.
    """
    out: list[Message] = []
    names: dict[str, str] = {}
    for message in messages:
        role = message["role"]
        if role == "system":
            out.append({"role": "system", "content": f"{message['content']}\nTools:\n{_tool_lines(tools)}\n"
                        f"Reply with JSON: {{\"tool\": NAME or \"{FINAL}\", \"arguments\": {{...}}, \"message\": "
                        "TEXT}."})
        elif role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                fn = call["function"]
                names[call["id"]] = fn["name"]
                out.append({"role": "assistant", "content": json.dumps(
                    {"tool": fn["name"], "arguments": _loose(fn["arguments"]), "message": message.get("content", "")})})
        elif role == "assistant":
            out.append({"role": "assistant", "content": json.dumps(
                {"tool": FINAL, "arguments": {}, "message": message.get("content", "")})})
        elif role == "tool":
            out.append({"role": "user", "content": f"Result of {names.get(message['tool_call_id'], 'the tool')}: "
                                                   f"{message['content']}"})
        else:
            out.append({"role": role, "content": message["content"]})
    return out


def _loose(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class ModelAgent:
    """A registry model as the agent: native tool calls where the registry says so, else the JSON fallback."""

    def __init__(self, client: LLMClient, *, native: bool | None = None, max_tokens: int | None = None) -> None:
        self.client = client
        self.name = client.spec.name
        self.native = client.spec.tool_calls if native is None else native
        self.max_tokens = max_tokens
        self._turn = 0

    def act(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], *, seed: int) -> Turn:
        self._turn += 1
        if self.native:
            return self._native(messages, tools, seed)
        return self._fallback(messages, tools, seed)

    def _native(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], seed: int) -> Turn:
        try:
            message, record = self.client.complete_tools(messages, tools, max_tokens=self.max_tokens, seed=seed)
        except RepetitionError as exc:
            raise AgentFailed(str(exc), exc.record) from exc
        calls = [parse_call(c["id"], c["function"]["name"], c["function"]["arguments"])
                 for c in message.get("tool_calls", [])]
        return Turn(message, calls, record)

    def _fallback(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], seed: int) -> Turn:
        try:
            value, record = self.client.complete_json(plain_chat(messages, tools), fallback_schema(tools),
                                                      stage="agent", name="turn", max_tokens=self.max_tokens,
                                                      seed=seed)
        except (MalformedOutput, RepetitionError) as exc:
            raise AgentFailed(str(exc), exc.record) from exc
        if value["tool"] == FINAL:
            return Turn({"role": "assistant", "content": value["message"]}, [], record)
        call_id = f"call_{self._turn}"
        text = json.dumps(value["arguments"], ensure_ascii=False)
        return Turn(_call_message([(call_id, value["tool"], text)], value["message"]),
                    [ToolCall(call_id, value["tool"], text, value["arguments"])], record)
