"""The LLM simulator: any OpenAI-compatible model predicting (observation, Δ) for a benchmark item.

Requests are deterministic (temperature 0, a fixed seed) so an audit can be re-run and resumed.
Usage comes from the API's own counts (CallRecord). A failed request, an unusable reply or a
prompt that cannot fit the model's context window becomes an abstaining SimResult with the
error, so one bad sample never stops an audit; only an endpoint that is not there
(EndpointUnreachable, whose message says how to start it) propagates, because then every sample
would fail the same way. A timeout on one request is that sample's error, not the endpoint's.
"""

from __future__ import annotations

from typing import Any

from catalog.bench.items import BenchItem, SimResult
from catalog.state.delta import Delta
from constraints.extract import ExtractionError
from constraints.simulate import item_spec
from synth.llm import (
    EndpointUnreachable,
    LLMClient,
    LLMError,
    LLMTimeout,
    MalformedOutput,
    ModelSpec,
    Registry,
    Usage,
    load_registry,
    schema_instruction,
)
from synth.llm.errors import describe
from synth.simulation.prompts import (
    PLAIN_SCHEMA,
    answer_text,
    constrained_messages,
    constrained_schema,
    plain_messages,
    plain_ops,
)
from synth.simulation.validate import Check, check_answer
from verifier.audit.metrics import parse_observation

__all__ = ["LLMSim", "MODES", "POLICIES"]

MODES = ("plain", "constrained")
POLICIES = ("reask", "project")
# Prompts here (code + compact JSON) run at ~3 characters per token (SmolLM2's tokenizer measured
# 2.98-3.4); a prompt is refused unsent only when even 4 characters per token cannot fit, and
# the output budget is what is left on the 3-characters estimate.
CHARS_PER_TOKEN = 3
CHARS_PER_TOKEN_MAX = 4
MIN_OUTPUT_TOKENS = 32


class _PromptTooLong(Exception):
    pass


def _result(usage: Usage, **fields: Any) -> SimResult:
    """A SimResult carrying the usage of the prediction's calls."""
    return SimResult(tokens_in=usage.tokens_in, tokens_out=usage.tokens_out, cost_usd=float(usage.cost_usd),
                     seconds=usage.seconds, **fields)


def _fatal(exc: LLMError) -> bool:
    """Errors that would hit every sample alike: the endpoint is absent (not merely slow)."""
    return isinstance(exc, EndpointUnreachable) and not isinstance(exc, LLMTimeout)


class LLMSim:
    """Simulates tool calls with a registry model, in `plain` or `constrained` prompt mode.

    In constrained mode the answer is validated against the tool's constraint spec; on a
    violation `reask` asks once more with the violations listed (and projects if the second
    answer still violates), `project` drops the violating ops at once. Pass `client` to reuse an
    open client (e.g. from `open_client`, which starts the embedded model), else one is made for
    the registry entry (`base_url` overrides its address).
    """

    def __init__(self, model: str | ModelSpec, mode: str = "plain", on_violation: str = "reask", *,
                 client: LLMClient | None = None, base_url: str | None = None, max_tokens: int | None = None,
                 seed: int = 0, timeout: float = 180.0, registry: Registry | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown simulator mode {mode!r}; modes: {', '.join(MODES)}")
        if on_violation not in POLICIES:
            raise ValueError(f"unknown violation policy {on_violation!r}; policies: {', '.join(POLICIES)}")
        self._owns_client = client is None
        if client is None:
            spec = (registry or load_registry()).resolve(model)
            client = LLMClient(spec, base_url=base_url, timeout=timeout, seed=seed)
        self.client = client
        self.name = client.spec.name
        self.mode = mode
        self.on_violation = on_violation
        self.max_tokens = max_tokens
        self.seed = seed

    def close(self) -> None:
        """Close the client if this simulator made it."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> LLMSim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- prediction -----------------------------------------------------------------------------

    def predict(self, item: BenchItem) -> SimResult:
        """One simulated step; raises only EndpointUnreachable (see the module docstring)."""
        usage = Usage()
        try:
            if self.mode == "plain":
                return self._plain(item, usage)
            return self._constrained(item, usage)
        except _PromptTooLong as exc:
            return _result(usage, abstained=True, reason="prompt too long", error=str(exc))
        except LLMError as exc:
            if _fatal(exc):
                raise
            usage.add(exc.record)
            raw = exc.raw if isinstance(exc, MalformedOutput) else None
            return _result(usage, abstained=True, reason="llm error", error=describe(exc), raw=raw)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a reply the schema let through oddly
            return _result(usage, abstained=True, reason="unusable reply", error=f"{type(exc).__name__}: {exc}")

    def _plain(self, item: BenchItem, usage: Usage) -> SimResult:
        answer = self._ask(plain_messages(item), PLAIN_SCHEMA, usage)
        ops = plain_ops(answer["config_changes"], item.state)
        return _result(usage, observation=parse_observation(answer["feedback"]), delta=ops, raw=answer_text(answer))

    def _constrained(self, item: BenchItem, usage: Usage) -> SimResult:
        try:
            spec = item_spec(item)
        except ExtractionError as exc:
            return _result(usage, abstained=True, reason=f"no constraint spec: {exc}")
        tool = item.action.name
        if tool not in spec.tools:
            return _result(usage, abstained=True, reason=f"tool {tool!r} is not in the constraint spec")
        messages = constrained_messages(item, spec)
        schema = constrained_schema(spec, tool)
        answer = self._ask(messages, schema, usage)
        check = check_answer(answer["observation"], answer["delta"], item.state, spec, tool)
        violations, reasks, raw = list(check.violations), 0, answer_text(answer)
        if check.violations and self.on_violation == "reask":
            reasks = 1
            followup = [*messages, {"role": "assistant", "content": answer_text(answer)},
                        {"role": "user", "content": _reask_text(check)}]
            try:
                second = self._ask(followup, schema, usage)
            except (LLMError, _PromptTooLong) as exc:
                if isinstance(exc, LLMError):
                    if _fatal(exc):
                        raise
                    usage.add(exc.record)
                violations.append(f"re-ask failed ({describe(exc)}); the first answer is projected")
            else:
                check = check_answer(second["observation"], second["delta"], item.state, spec, tool)
                violations += [f"after re-ask: {v}" for v in check.violations]
                answer, raw = second, raw + "\n--- re-ask ---\n" + answer_text(second)
        return _result(usage, observation=parse_observation(answer["observation"]),
                            delta=Delta.dump_python(check.kept, mode="json"), violations=violations,
                            repairs=check.dropped, reasks=reasks, raw=raw)

    def _ask(self, messages: list[dict[str, str]], schema: dict[str, Any], usage: Usage) -> dict[str, Any]:
        """One structured call within the model's context window; its record joins `usage`."""
        spec = self.client.spec
        chars = sum(len(m["content"]) for m in messages)
        if not spec.json_schema:
            chars += len(schema_instruction(schema))
        if chars // CHARS_PER_TOKEN_MAX + MIN_OUTPUT_TOKENS > spec.context_window:
            raise _PromptTooLong(f"the {self.mode} prompt (~{chars // CHARS_PER_TOKEN} tokens) does not fit "
                                 f"{spec.name}'s context window of {spec.context_window} tokens")
        room = max(MIN_OUTPUT_TOKENS, spec.context_window - chars // CHARS_PER_TOKEN)
        limit = min(self.max_tokens or spec.max_output_tokens, room)
        answer, record = self.client.complete_json(messages, schema, stage=f"simulate.{self.mode}",
                                                   name="simulation", max_tokens=limit, temperature=0.0,
                                                   seed=self.seed)
        usage.add(record)
        return answer


def _reask_text(check: Check) -> str:
    listed = "\n".join(f"- {v}" for v in check.violations[:8])
    return ("Your answer breaks the tool's spec:\n" + listed
            + "\nReply again with the corrected JSON object {\"observation\", \"delta\"}.")
