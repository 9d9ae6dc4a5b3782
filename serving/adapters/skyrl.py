r"""A SkyRL-gym `BaseTextEnv` over a catalog env: tool calls parsed from the model's text as SkyRL's tool envs do.

    register()                                   # skyrl_gym id "envforge"
    env = skyrl_gym.make("envforge", env_config={"catalog": path}, extras={"env_id": "library", "task": id})
    prompt, info = env.init([])                  # [] -> the env's own prompt: tools, call format, instruction
    out = env.step("<tool><get_member>{\"member_id\": \"M001\"}</get_member></tool>")
    out = env.step("<solution>Done: the book is lent.</solution>")   # out["reward"]: the task's check

The action format is skyrl_gym's multi-tool env's (`SearchCodeEnv`): one call a turn as
`<tool><NAME>INPUT</NAME></tool>`, the episode ending at `<solution>...</solution>` or at
`max_turns`; the INPUT of an envforge tool is its arguments as a JSON object. The tool's result
(JSON) or the parse error comes back as a user message, as in skyrl_gym's envs. The reward is
0.0 on every turn but the last, whose reward is `ToolEnv.evaluate` with the solution's text as
the final answer (catalog.tasks.episode_passed: an episode stopped at `max_turns` scores 0.0).

`env_config` is the operator's (`catalog`, `trusted`, `max_turns`); `extras` come from the
dataset and are untrusted: `env_id` and `task` are names the catalog checks, `max_turns` a
bounded whole number.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
from skyrl_gym.envs.registration import register as _register
from skyrl_gym.envs.registration import registry

from catalog.store import Catalog
from serving.adapters._tools import AdapterError, result_text
from serving.gym import make

__all__ = ["EnvforgeTextEnv", "register", "parse_action", "system_prompt", "ENV_ID", "AdapterError"]

ENV_ID = "envforge"
MAX_TURNS = 1000
_TOOL = re.compile(r"<tool>(.*?)</tool>", re.DOTALL)
_CALL = re.compile(r"<(\w+)>(.*?)</\1>", re.DOTALL)
_SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.DOTALL)


def _setting(config: Any, key: str, default: Any = None) -> Any:
    """A key of a dict, an OmegaConf DictConfig or a dataclass config (what SkyRL passes as `env_config`)."""
    if config is None:
        return default
    if hasattr(config, "get"):
        return config.get(key, default)
    return getattr(config, key, default)


def _turns(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TURNS:
        raise AdapterError(f"{where} max_turns must be a whole number from 1 to {MAX_TURNS}, got {value!r}")
    return value


class EnvforgeTextEnv(BaseTextEnv):
    """One episode of a catalog env for SkyRL: `init` resets it, `step` runs one parsed tool call (see the module doc)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        if "env_id" not in extras:
            raise AdapterError("extras must name the env: {'env_id': ..., 'task': ...}")
        catalog = _setting(env_config, "catalog")
        self.max_turns = _turns(extras.get("max_turns", _setting(env_config, "max_turns", 10)), "extras'")
        self.env = make(extras["env_id"], catalog=catalog if isinstance(catalog, Catalog) else Catalog(catalog),
                        task=extras.get("task"), trusted=_setting(env_config, "trusted"), terminate_on_success=False)
        self.chat_history: ConversationType = []
        self._details: dict[str, Any] = {}

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Reset the env; an empty prompt becomes the env's own (tools, call format, the task's instruction)."""
        instruction, info = self.env.reset()
        self.turns, self.chat_history, self._details = 0, [], {}
        if not prompt:
            prompt = [{"role": "system", "content": system_prompt(info["tools"])},
                      {"role": "user", "content": instruction}]
        return prompt, {"env_id": info["env_id"], "task": info["task"], "state": info["state"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        self.chat_history.append({"role": "assistant", "content": action})
        solution = _SOLUTION.search(action)
        if solution is not None or self.turns >= self.max_turns:
            answer = solution.group(1).strip() if solution is not None else None
            reward, self._details = self.env.evaluate(answer, cut_off=solution is None)
            return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata=dict(self._details))
        metadata: dict[str, Any] = {"tool_name": None}
        try:
            name, arguments = parse_action(action)
            observation, _, _, _, info = self.env.step({"name": name, "arguments": arguments})
            content = result_text(observation)
            metadata.update(tool_name=name, outcome=info["outcome"], step=info["step"])
        except AdapterError as exc:  # the agent's mistake: SkyRL's envs answer it as the observation
            content = str(exc)
        message = {"role": "user", "content": content}
        self.chat_history.append(message)
        return BaseTextEnvStepOutput(observations=[message], reward=0.0, done=False, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        return {"passed": float(bool(self._details.get("passed"))), "steps": self.env.steps, "turns": self.turns}

    def close(self) -> None:
        self.env.close()


def parse_action(action: str) -> tuple[str, str]:
    """The (tool name, JSON arguments text) of the first `<tool><NAME>INPUT</NAME></tool>` in `action`."""
    block = _TOOL.search(action)
    if block is None:
        raise AdapterError("No <tool>...</tool> block found: call a tool as <tool><NAME>{json arguments}</NAME></tool>"
                           " or answer with <solution>...</solution>")
    call = _CALL.search(block.group(1).strip())
    if call is None:
        raise AdapterError("No valid inner tool tag found inside <tool> block: <tool><NAME>{...}</NAME></tool>")
    return call.group(1), call.group(2).strip() or "{}"


def system_prompt(tools: list[dict[str, Any]]) -> str:
    """The tools and the call format, for a dataset that brings no prompt of its own."""
    listed = "\n".join(json.dumps(t["function"], ensure_ascii=False, sort_keys=True) for t in tools)
    return ("You can use these tools:\n" + listed + "\n\nCall one tool per turn as "
            "<tool><NAME>{\"argument\": value}</NAME></tool>; the result comes back as the next message. "
            "When you are done, answer with <solution>your final answer</solution>.")


def register(env_id: str = ENV_ID) -> None:
    """Register the env with skyrl_gym (`skyrl_gym.make(env_id, env_config=..., extras=...)`); again is a no-op."""
    entry = f"{__name__}:EnvforgeTextEnv"
    known = registry.get(env_id)
    if known is None:
        _register(id=env_id, entry_point=entry)
    elif known.entry_point != entry:
        raise AdapterError(f"skyrl_gym id {env_id!r} is already registered to {known.entry_point!r}")
