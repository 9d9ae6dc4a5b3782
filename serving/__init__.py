"""Serving envs to agents: the gym-style API (`make`, `ToolEnv`) and the MCP server (`mcp_server`).

Serving is its own layer, below the verifier and above the sandbox and the executors: it runs
untrusted envs in sandbox workers (trusted ones in-process) and env instances as Ray actors, and
knows nothing of checks or models. Rollouts, which drive models, build on it from `synth`.
"""

from serving.gym import BadToolCall, EpisodeOver, ServingError, ToolEnv, make

__all__ = ["make", "ToolEnv", "ServingError", "EpisodeOver", "BadToolCall"]
