"""LLMClient: structured calls to any OpenAI-compatible endpoint, with retries and accounting.

Built on the official ``openai`` client with its own retries switched off (``max_retries=0``):
envforge retries itself so that every attempt is counted in the CallRecord, the backoff jitter
is reproducible from a seed, and the final error says what to do (start the server, set the
key, wait out the rate limit). Replies are parsed tolerantly, checked against the schema, and
re-asked once with the problems listed; loops are caught before they are parsed.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import openai

from synth.llm.errors import (
    EmbeddedModelMissing,
    EndpointUnreachable,
    LLMError,
    LLMTimeout,
    MalformedOutput,
    RateLimited,
    RepetitionError,
    RequestRejected,
    ServerError,
    describe,
)
from synth.llm.jsonfix import detect_repetition, parse_json_loose, strict_compatible, validate
from synth.llm.ledger import CallRecord, UsageLedger
from synth.llm.registry import ModelSpec, Registry, load_registry

Message = dict[str, Any]
RETRY_STATUS = {408, 409, 429}


class LLMClient:
    """Chat calls to one model, every call recorded in a :class:`UsageLedger`."""

    def __init__(self, spec: ModelSpec, ledger: UsageLedger | None = None, *, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 60.0, attempts: int = 4, base_delay: float = 1.0,
                 max_delay: float = 20.0, reasks: int = 1, seed: int = 0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        """``attempts`` counts HTTP tries per request (1 = no retry); ``reasks`` bad-reply re-asks."""
        self.spec = spec
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.base_url = base_url or spec.base_url
        if not self.base_url:
            raise EndpointUnreachable(f"{spec.name} is an embedded model with no fixed address: "
                                      "use open_client(), which starts its server")
        self.timeout, self.attempts, self.reasks, self.seed = timeout, max(1, attempts), max(0, reasks), seed
        self.base_delay, self.max_delay, self._sleep = base_delay, max_delay, sleep
        key = api_key or spec.api_key()
        self._missing_key = "" if key or not spec.api_key_env else spec.api_key_env
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=key or "not-needed", max_retries=0,
                                     timeout=openai.Timeout(timeout, connect=min(timeout, 5.0)))

    # -- public calls ---------------------------------------------------------------------

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, stage: str = "llm",
                      name: str = "answer", max_tokens: int | None = None, temperature: float = 0.0,
                      seed: int | None = None, strict: bool | None = None) -> tuple[dict[str, Any], CallRecord]:
        """Ask for a JSON object that fits ``schema``; return it with the call's record.

        Uses ``response_format`` json_schema when the model supports it (``strict`` only when the
        schema allows it, unless forced), else puts the schema in the prompt. The reply is
        repaired if needed and validated; on failure the model is re-asked ``reasks`` times with
        the problems listed. Raises MalformedOutput, RepetitionError or a transport error, each
        carrying the record (``err.record``); the record is in the ledger either way.
        """
        rec = self._new_record(stage)
        msgs = list(messages)
        response_format: dict[str, Any] | None = None
        if self.spec.json_schema:
            response_format = {"type": "json_schema", "json_schema": {
                "name": name, "schema": schema,
                "strict": strict_compatible(schema) if strict is None else strict}}
        else:
            msgs = _with_schema_instruction(msgs, schema)
        limit = max_tokens or self.spec.max_output_tokens
        with self._recording(rec):
            for ask in range(self.reasks + 1):
                text, finish = self._chat(msgs, rec, max_tokens=limit, temperature=temperature, seed=seed,
                                          response_format=response_format)
                self._check_loop(text, finish, limit)
                problems: list[str]
                try:
                    value, repaired = parse_json_loose(text)
                    problems = validate(value, schema)
                except ValueError as exc:
                    value, repaired, problems = None, False, [str(exc)]
                if not problems:
                    rec.repaired = rec.repaired or repaired
                    return value, rec
                if finish == "length":
                    problems.insert(0, f"the reply was cut off at max_tokens={limit}: answer more briefly")
                if ask == self.reasks:
                    raise MalformedOutput(f"{self.spec.name} replied with unusable JSON for {stage!r} "
                                          f"after {rec.reasks} re-ask(s): {'; '.join(problems[:3])}",
                                          raw=text, problems=problems)
                rec.reasks += 1
                msgs = msgs + [{"role": "assistant", "content": text[:2000]},
                               {"role": "user", "content": _reask_message(problems)}]
        raise AssertionError("unreachable")  # pragma: no cover

    def complete_text(self, messages: Sequence[Message], *, stage: str = "llm", max_tokens: int | None = None,
                      temperature: float = 0.0, seed: int | None = None) -> tuple[str, CallRecord]:
        """Plain-text reply (e.g. code), with the same retries, loop check and accounting."""
        rec = self._new_record(stage)
        limit = max_tokens or self.spec.max_output_tokens
        with self._recording(rec):
            text, finish = self._chat(list(messages), rec, max_tokens=limit, temperature=temperature, seed=seed)
            self._check_loop(text, finish, limit)
            return text, rec
        raise AssertionError("unreachable")  # pragma: no cover

    def complete_tools(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], *, stage: str = "agent",
                       max_tokens: int | None = None, temperature: float = 0.0,
                       seed: int | None = None) -> tuple[Message, CallRecord]:
        """One assistant turn with native tool calling (``tools=`` OpenAI function schemas).

        Returns the assistant message as OpenAI message data (``content``, and ``tool_calls`` with
        ``function.arguments`` left as the JSON text the model wrote: an agent decides what a
        malformed one means) and the call's record. Same retries and accounting as the others.
        """
        rec = self._new_record(stage)
        limit = max_tokens or self.spec.max_output_tokens
        with self._recording(rec):
            message = self._request(list(messages), rec, max_tokens=limit, temperature=temperature, seed=seed,
                                    tools=tools)
            reply: Message = {"role": "assistant", "content": getattr(message, "content", None) or ""}
            calls = getattr(message, "tool_calls", None) or []
            if calls:
                reply["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                    "name": c.function.name, "arguments": c.function.arguments or ""}} for c in calls]
            else:
                self._check_loop(reply["content"], rec.finish_reason, limit)
            return reply, rec
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------

    def _new_record(self, stage: str) -> CallRecord:
        return CallRecord(stage=stage, model=self.spec.name, model_id=self.spec.model, usage_reported=False)

    @contextmanager
    def _recording(self, rec: CallRecord) -> Iterator[None]:
        """Time the call, mark it ok or failed, attach it to any error, and put it in the ledger."""
        t0 = time.monotonic()
        try:
            yield
            rec.ok = True
        except LLMError as exc:
            rec.error = describe(exc)
            exc.record = rec
            raise
        except Exception as exc:
            rec.error = describe(exc)
            raise
        finally:
            rec.seconds = time.monotonic() - t0
            rec.cost_usd = float(self.spec.cost(rec.tokens_in, rec.tokens_out))
            self.ledger.add(rec)

    def _check_loop(self, text: str, finish: str | None, limit: int) -> None:
        found = detect_repetition(text, truncated=finish == "length")
        if found:
            pattern, repeats = found
            cut = f", hit max_tokens={limit}" if finish == "length" else ""
            raise RepetitionError(f"{self.spec.name} looped: {pattern.strip()[:60]!r} repeated {repeats:g} times{cut}",
                                  raw=text, pattern=pattern, repeats=repeats)

    def _chat(self, messages: list[Message], rec: CallRecord, *, max_tokens: int, temperature: float,
              seed: int | None, response_format: dict[str, Any] | None = None) -> tuple[str, str | None]:
        """One request with retries; adds its usage to ``rec``; returns (content, finish_reason)."""
        message = self._request(messages, rec, max_tokens=max_tokens, temperature=temperature, seed=seed,
                                response_format=response_format)
        return ("" if message is None else message.content or ""), rec.finish_reason

    def _request(self, messages: list[Message], rec: CallRecord, *, max_tokens: int, temperature: float,
                 seed: int | None, response_format: dict[str, Any] | None = None,
                 tools: Sequence[dict[str, Any]] | None = None) -> Any:
        """One request with retries; adds its usage to ``rec``; returns the reply's message (None: no choice)."""
        if self._missing_key:
            raise RequestRejected(f"{self.spec.name} needs an API key: set the environment variable "
                                  f"{self._missing_key}")
        extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
        if tools:
            extra["tools"] = list(tools)
        extra["seed"] = self.seed if seed is None else seed  # reproducible sampling where supported
        last: Exception | None = None
        kind = ""
        for attempt in range(1, self.attempts + 1):
            rec.attempts += 1
            retry_after: float | None = None
            try:
                resp = self._openai.chat.completions.create(
                    model=self.spec.model, messages=messages,  # type: ignore[arg-type]  # plain dicts of the SDK's TypedDict shapes
                    max_tokens=max_tokens, temperature=temperature, **extra)
            except openai.APITimeoutError as exc:
                last, kind = exc, "timeout"
            except openai.APIConnectionError as exc:
                last, kind = exc, "connection"
            except openai.APIStatusError as exc:
                code = exc.status_code
                if code < 500 and code not in RETRY_STATUS:
                    raise RequestRejected(self._rejected_message(exc)) from exc
                last, kind = exc, "rate" if code == 429 else "server"
                retry_after = _retry_after(exc.response.headers)
            else:
                return self._account(resp, rec)
            if attempt < self.attempts:
                self._sleep(self._delay(attempt, retry_after))
        raise self._final_error(kind, last)

    def _account(self, resp: Any, rec: CallRecord) -> Any:
        usage = getattr(resp, "usage", None)
        if usage is not None:
            rec.tokens_in += int(getattr(usage, "prompt_tokens", 0) or 0)
            rec.tokens_out += int(getattr(usage, "completion_tokens", 0) or 0)
            rec.usage_reported = True
        rec.requests += 1
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        if choice is None:
            rec.finish_reason = None
            return None
        rec.finish_reason = choice.finish_reason
        return choice.message

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter that is reproducible from the client's seed."""
        jitter = random.Random(f"{self.seed}:{attempt}").random()
        delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1)) * (1 + 0.25 * jitter)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay))
        return delay

    def _final_error(self, kind: str, last: Exception | None) -> LLMError:
        n = self.attempts
        where = f"{self.spec.name} at {self.base_url}"
        if kind == "timeout":
            return LLMTimeout(f"{where} did not answer within {self.timeout:g}s ({n} attempt(s)); "
                              f"{self.spec.how_to_start()}")
        if kind == "connection":
            return EndpointUnreachable(f"cannot reach {where} ({n} attempt(s): {last}); {self.spec.how_to_start()}")
        if kind == "rate":
            return RateLimited(f"{where} answered 429 (rate limited) on all {n} attempt(s)")
        return ServerError(f"{where} answered with server errors on all {n} attempt(s): {last}")

    def _rejected_message(self, exc: openai.APIStatusError) -> str:
        text = f"{self.spec.name} rejected the request (HTTP {exc.status_code}): {exc.message}"
        if exc.status_code in (401, 403) and self.spec.api_key_env:
            text += f"; check {self.spec.api_key_env}"
        if exc.status_code == 404:
            text += f"; is {self.spec.model!r} the model id the server lists at GET /v1/models?"
        return text


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def schema_instruction(schema: dict[str, Any]) -> str:
    """The prompt text that asks for the schema when the server cannot enforce it."""
    return ("Reply with one JSON object only (no prose, no code fences) that conforms to this JSON Schema:\n"
            + json.dumps(schema, separators=(",", ":")))


def _with_schema_instruction(messages: list[Message], schema: dict[str, Any]) -> list[Message]:
    out = list(messages)
    if out and out[-1].get("role") == "user" and isinstance(out[-1].get("content"), str):
        out[-1] = {**out[-1], "content": out[-1]["content"] + "\n\n" + schema_instruction(schema)}
    else:
        out.append({"role": "user", "content": schema_instruction(schema)})
    return out


def _reask_message(problems: list[str]) -> str:
    listed = "\n".join(f"- {p}" for p in problems[:8])
    return ("Your reply could not be used:\n" + listed
            + "\nReply again with only the corrected JSON object.")


@contextmanager
def open_client(model: str | ModelSpec, ledger: UsageLedger | None = None, *, registry: Registry | None = None,
                **kwargs: Any) -> Iterator[LLMClient]:
    """An LLMClient for a registry model; starts (and afterwards stops) the embedded server if needed.

    ``kwargs`` go to :class:`LLMClient` (timeout, attempts, base_delay, reasks, seed, ...).
    """
    from synth.llm.embedded import serving

    spec = (registry or load_registry()).resolve(model) if isinstance(model, str) else model
    with serving(spec, kwargs.pop("base_url", None), seed=kwargs.get("seed", 0)) as url, \
            LLMClient(spec, ledger, **kwargs, base_url=url) as client:
        yield client


def probe(model: str | ModelSpec, *, registry: Registry | None = None, timeout: float = 2.0,
          start_embedded: bool = False) -> dict[str, Any]:
    """Whether a model's endpoint answers: ``{name, reachable, detail, models}`` (GET /v1/models).

    The embedded model is only checked for its files unless ``start_embedded`` is set, since
    starting it takes seconds.
    """
    spec = (registry or load_registry()).resolve(model) if isinstance(model, str) else model
    result: dict[str, Any] = {"name": spec.name, "reachable": False, "detail": "", "models": [],
                              "base_url": spec.base_url, "embedded": spec.embedded}
    if spec.embedded:
        from synth.llm.embedded import check_available, serving

        try:
            gguf = check_available(spec)
        except EmbeddedModelMissing as exc:
            result["detail"] = f"embedded: not installed ({exc})"
            return result
        if not start_embedded:
            result.update(reachable=True, detail=f"embedded: available (GGUF found: {gguf.name})")
            return result
        try:
            with serving(spec) as url:
                sub = probe(dataclasses.replace(spec, base_url=url, embedded=False), timeout=timeout)
        except EndpointUnreachable as exc:
            result["detail"] = f"embedded: failed to start ({exc})"
            return result
        result.update(reachable=sub["reachable"], models=sub["models"], detail=f"embedded: started and {sub['detail']}")
        return result
    headers = {"Authorization": f"Bearer {spec.api_key()}"} if spec.api_key() else {}
    url = spec.base_url.rstrip("/") + "/models"
    try:
        resp = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        result["detail"] = f"no answer within {timeout:g}s; {spec.how_to_start()}"
        return result
    except httpx.HTTPError as exc:
        result["detail"] = f"unreachable ({type(exc).__name__}); {spec.how_to_start()}"
        return result
    result["reachable"] = True
    if resp.status_code in (401, 403):
        missing = spec.api_key_env and not spec.api_key()
        result["detail"] = (f"answers, but needs an API key: set {spec.api_key_env}" if missing
                            else f"answers, but rejected the API key (HTTP {resp.status_code})")
        return result
    if resp.status_code != 200:
        result["detail"] = f"answers with HTTP {resp.status_code}"
        return result
    try:
        result["models"] = [m.get("id", "") for m in resp.json().get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        result["detail"] = "answers, but /models is not OpenAI-shaped"
        return result
    served = spec.model in result["models"] or not result["models"]
    result["detail"] = "answers" + ("" if served else f"; but {spec.model!r} is not among its models")
    return result
