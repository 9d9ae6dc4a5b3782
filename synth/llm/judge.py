"""Rule-conformance judging (EnvScaler's checking-agent role), optional in the quality gate.

A model sees what an agent would see, the env's description, rules and tool descriptors, plus
the records a call names, but not the code, and predicts whether each probed call succeeds or
is refused. Each probe is executed in the sandbox; a disagreement means either the code breaks
a stated rule or the rules do not say what the code does, so it counts against the env. A cheap
local simulator (e.g. `local-4b`) can stand in for a frontier judge: the run report puts the
judge's tokens and cost beside the disagreements it found.
"""

from __future__ import annotations

import json
import random
from typing import Any

from catalog.models import Action
from catalog.store import EnvHandle
from constraints.completeness import candidates
from constraints.spec import Param
from sandbox.pool import Job, SandboxPool
from synth.llm import LLMClient, LLMError, ModelSpec, Usage
from synth.llm.errors import describe

__all__ = ["RuleJudge", "JUDGE_TOLERANCE"]

JUDGE_TOLERANCE = 0.25  # share of probes the judge may get wrong before the check fails
_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["outcome"],
           "properties": {"outcome": {"type": "string", "enum": ["success", "failure"]}}}


def _records_named(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """The records whose keys appear among the arguments (what a judge needs to apply the rules)."""
    wanted = {v for v in arguments.values() if isinstance(v, str)}
    return {f"{table}/{key}": row for table, rows in sorted(state.items()) if isinstance(rows, dict)
            for key, row in sorted(rows.items()) if key in wanted}


class RuleJudge:
    """Probes an env's tools and asks a model to predict each outcome from the rules alone."""

    def __init__(self, spec: ModelSpec, *, base_url: str | None = None, probes_per_tool: int = 2, seed: int = 0,
                 client: LLMClient | None = None) -> None:
        """`spec` is the resolved registry entry; `base_url` where this session reaches it."""
        self.model, self.probes_per_tool, self.seed = spec.name, probes_per_tool, seed
        self.client = client or LLMClient(spec, base_url=base_url or None)

    def probes(self, handle: EnvHandle, state: dict[str, Any]) -> list[Action]:
        """Calls from typed candidates: a realistic one and a boundary one per tool (seeded)."""
        rng = random.Random(f"judge:{handle.id}:{self.seed}")
        actions = []
        for tool in sorted(handle.manifest.tools, key=lambda t: t.name):
            properties = tool.parameters.get("properties", {})
            for index in range(self.probes_per_tool):
                arguments = {}
                for name, schema in properties.items():
                    kind = schema.get("type") or next((s.get("type") for s in schema.get("anyOf", [])
                                                       if s.get("type") != "null"), None)
                    param = Param(name=name, annotation=None, json_type=kind, required=True, nullable=False,
                                  enum=schema.get("enum"))
                    pool = candidates(param, state)
                    if pool:
                        arguments[name] = pool[0] if index == 0 else rng.choice(pool)
                actions.append(Action(name=tool.name, arguments=arguments))
        return actions

    def __call__(self, handle: EnvHandle, pool: SandboxPool) -> dict[str, Any]:
        state = handle.state("default")
        manifest = handle.manifest
        doc = f"{manifest.name}: {manifest.description}\nRules:\n" + "\n".join(f"- {r}" for r in manifest.rules)
        actions = self.probes(handle, state)
        results = pool.run_many([Job.for_env(handle, [a.model_dump()], state_name="default") for a in actions])
        listed: list[dict[str, Any]] = []
        usage, judged = Usage(), 0
        for action, result in zip(actions, results, strict=True):
            if not result.calls or result.calls[0].outcome not in ("success", "failure"):
                continue  # crashes are the gate's business, not the judge's
            truth = result.calls[0].outcome
            tool = manifest.tool(action.name)
            messages = [
                {"role": "system", "content": "You check calls against an environment's rules. Answer JSON only."},
                {"role": "user", "content": f"{doc}\nTool: {tool.name}: {tool.description}\n"
                                            f"Records: {json.dumps(_records_named(state, action.arguments))[:1500]}\n"
                                            f"Call: {json.dumps(action.arguments)}\nWill it succeed or fail?"}]
            answer: dict[str, Any] | None = None
            try:
                answer, record = self.client.complete_json(messages, _SCHEMA, stage="judge", max_tokens=12,
                                                           seed=self.seed)
                usage.add(record)
            except LLMError as exc:
                usage.add(exc.record, describe(exc))
            if answer is None:
                continue
            judged += 1
            if answer["outcome"] != truth:
                listed.append({"action": action.model_dump(), "judge": answer["outcome"], "execution": truth,
                               "observation": str(result.calls[0].observation)[:200]})
        share = len(listed) / judged if judged else 1.0
        ok = judged > 0 and share <= JUDGE_TOLERANCE
        return {"ok": ok, "model": self.model, "probes": judged, "disagreements": len(listed),
                "disagreement_rate": round(share, 4), "errors": len(usage.errors), "listed": listed[:10],
                **usage.model_dump(include={"calls", "tokens_in", "tokens_out", "cost_usd"}),
                "detail": f"{len(listed)} of {judged} probed calls judged differently from execution"}
