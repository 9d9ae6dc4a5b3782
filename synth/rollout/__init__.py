"""Rollouts: agents (a registry model, or the reference solution) on catalog envs, as trajectories.

Rollouts drive models, so they sit in synth/ (above verifier/, whose gym-style `serving`
envs they run). `run_rollouts` rolls out units (env, task) on threads, each episode on its own env
instance, and appends each trajectory to `trajectories.jsonl` (resumable); `build_report` /
`write_report` give `report.json`, `report.md` and `rollouts.png`. With a simulator every call is
answered by it and also executed on the env from the same state (synth/rollout/steps.py), each
step and trajectory marked verified or diverged; with an audit's trust (`--trust`) only where
the audit earned it, every other call executing (synth/rollout/hybrid.py).
"""

from synth.rollout.agents import Agent, AgentFailed, ModelAgent, ReferenceAgent, ToolCall, Turn
from synth.rollout.episode import Unit, run_episode
from synth.rollout.report import build_report, json_summary, render_markdown, render_summary, write_report
from synth.rollout.run import (
           ModelAgentFactory,
           RolloutConfig,
           RolloutError,
           RunResult,
           TrustSettings,
           plan_units,
           reference_agent,
           run_rollouts,
)
from synth.rollout.steps import EnvSteps, VerifiedSteps, bench_template
from synth.rollout.trajectory import (
    TRAJECTORIES_FILE,
    SimCheck,
    StepRecord,
    Trajectory,
    load_trajectories,
    template_messages,
)

__all__ = ["TRAJECTORIES_FILE", "Agent", "AgentFailed", "EnvSteps", "ModelAgent", "ModelAgentFactory", "ReferenceAgent", "RolloutConfig",
           "RolloutError", "RunResult", "TrustSettings", "SimCheck", "StepRecord", "ToolCall", "Trajectory", "Turn", "Unit",
           "VerifiedSteps", "bench_template", "build_report", "json_summary", "load_trajectories", "plan_units",
           "reference_agent", "render_markdown", "render_summary", "run_episode", "run_rollouts", "template_messages",
           "write_report"]
