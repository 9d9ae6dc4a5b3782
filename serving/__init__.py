"""Serving envs to agents: the gym-style API (`make`, `ToolEnv`) and the MCP server (`mcp_server`).

Serving executes envs, so it sits in `verifier` (it uses the sandbox for untrusted code) and
imports nothing from `synth`; rollouts, which drive models, build on it from `synth`.
"""

from serving.gym import BadToolCall, EpisodeOver, ServingError, ToolEnv, make

__all__ = ["make", "ToolEnv", "ServingError", "EpisodeOver", "BadToolCall"]
