"""The LLM backend through the whole pipeline: real openai client, real HTTP, scripted server."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from synth.procedural.compiler import compile_env
from synth.procedural.design import design
from synth.procedural.ontology import load_domains
from synth.run import RunConfig, synthesize

PRICE_IN, PRICE_OUT = 1.5, 4.0
HOTEL = next(d for d in load_domains() if d.id == "hotel")
PICKS = {"focus": "booking", "entities": 3, "width": 4}


@pytest.fixture
def scripted_model(llm_server, tmp_path, monkeypatch):
    """A registry entry `scripted` pointing at the scripted server (workers inherit the environment)."""
    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.scripted]\nbase_url = "{llm_server.base_url}"\nmodel = "test-model"\n'
                        f"price_in = {PRICE_IN}\nprice_out = {PRICE_OUT}\njson_schema = true\n", encoding="utf-8")
    monkeypatch.setenv("ENVFORGE_MODELS", str(registry))
    return llm_server


def _messages(request):
    return " ".join(m["content"] for m in request["body"]["messages"])


def _reply(content, prompt, completion):
    from tests.llm_server import Reply

    return Reply(content=json.dumps(content) if not isinstance(content, str) else content, prompt_tokens=prompt,
                 completion_tokens=completion)


def _cost(requests):
    total = Decimal(0)
    for r in requests:
        usage = r["usage"]
        total += (Decimal(usage[0]) * Decimal(str(PRICE_IN)) + Decimal(usage[1]) * Decimal(str(PRICE_OUT))) / 10**6
    return float(total)


def test_blueprint_mode_registers_envs_and_sums_costs_exactly(scripted_model, tmp_path):
    sent = []
    domains = ["hotel", "pharmacy", "car_rental", "payroll", "gym_membership", "donations"]

    def respond(request):
        text = _messages(request)
        if "Does it need a stateful database" in text:
            content = {"stateful": True, "domain": domains[len(sent) % len(domains)], "description": "A desk."}
            usage = (120, 30)
        elif "Pick the focus entity" in text:
            listed = text.split("Entities: ", 1)[1].split("\n", 1)[0]
            domain = next(d for d in load_domains() if listed == "; ".join(
                f"{e.name} ({', '.join(e.states) or 'no lifecycle'})" for e in d.entities))
            movers = [e.name for e in domain.entities if e.transitions]
            content, usage = {"focus": movers[0], "entities": 2, "width": 3}, (90, 12)
        else:
            raise AssertionError(f"unexpected prompt: {text[:200]}")
        sent.append({"usage": usage})
        return _reply(content, *usage)

    scripted_model.script(respond)
    report = synthesize(RunConfig(n=2, backend="llm", model="scripted", catalog=str(tmp_path / "cat"), workers=1),
                        progress=False)
    assert report.registered == 2
    assert report.tokens_in == sum(s["usage"][0] for s in sent)
    assert report.tokens_out == sum(s["usage"][1] for s in sent)
    assert report.cost_usd == pytest.approx(_cost(sent), abs=1e-9)
    assert report.stages["mine"].llm_calls >= 2 and report.stages["plan"].llm_calls >= 2


def test_code_mode_corrects_failing_code_on_the_third_attempt(scripted_model, tmp_path):
    bp = design(HOTEL, 0, focus=PICKS["focus"], size=PICKS["entities"], width=PICKS["width"])
    source = compile_env(bp)
    good = source[source.rfind("\n\nclass ", 0, source.find("(Env):")):].strip()
    code_answers = [{"code": "class HotelEnv(Env):\n    def broken(:\n        pass"},
                    {"code": "class HotelEnv(Env):\n    tables = ()\n"},
                    {"code": good}]
    prompts = []

    def respond(request):
        text = _messages(request)
        if "Does it need a stateful database" in text:
            return _reply({"stateful": True, "domain": "hotel", "description": "Front desk of a hotel."}, 50, 20)
        if "Pick the focus entity" in text:
            return _reply(PICKS, 40, 10)
        assert "Write only the class `HotelEnv(Env)`" in text
        prompts.append(text)
        return _reply(code_answers[len(prompts) - 1], 400, 300)

    scripted_model.script(respond)
    report = synthesize(RunConfig(n=1, backend="llm", model="scripted", mode="code", catalog=str(tmp_path / "cat"),
                                  workers=1), progress=False)
    assert report.registered == 1, report.rejections
    code = report.stages["code"]
    assert code.attempts == 3 and code.first_attempt_pass_rate == 1.0  # the call itself answered each time
    assert report.stages["static_check"].attempts == 3
    assert report.stages["static_check"].first_attempt_pass_rate == 0.0
    assert "syntax error" in prompts[1] and "missing from the code" in prompts[2]  # problems fed back
    assert report.tokens_out == 20 + 10 + 3 * 300


def test_malformed_blueprint_answers_reject_the_slot_and_the_run_goes_on(scripted_model, tmp_path):
    calls = {"plan": 0}

    def respond(request):
        text = _messages(request)
        if "Does it need a stateful database" in text:
            return _reply({"stateful": True, "domain": "hotel", "description": "x"}, 10, 5)
        calls["plan"] += 1
        if calls["plan"] <= 2:  # the first slot: an answer beyond repair, and again on the re-ask
            return _reply("focus: booking, entities three ... {{{", 10, 5)
        return _reply(PICKS, 10, 5)

    scripted_model.script(respond)
    report = synthesize(RunConfig(n=1, backend="llm", model="scripted", catalog=str(tmp_path / "cat"), workers=1),
                        progress=False)
    assert report.registered == 1
    assert report.rejected == 1
    assert "plan:" in report.rejections[0].reason


def test_rate_limit_then_success_is_retried(scripted_model, tmp_path):
    state = {"n": 0}

    def respond(request):
        state["n"] += 1
        if state["n"] == 1:
            return 429
        text = _messages(request)
        if "Does it need a stateful database" in text:
            return _reply({"stateful": True, "domain": "hotel", "description": "x"}, 10, 5)
        return _reply(PICKS, 10, 5)

    scripted_model.script(respond)
    report = synthesize(RunConfig(n=1, backend="llm", model="scripted", catalog=str(tmp_path / "cat"), workers=1),
                        progress=False)
    assert report.registered == 1
    assert report.stages["mine"].final_pass_rate == 1.0


def test_judge_model_probes_calls_and_its_cost_is_reported(scripted_model, tmp_path):
    scripted_model.script(lambda request: _reply({"outcome": "success"}, 200, 3))
    report = synthesize(RunConfig(n=1, catalog=str(tmp_path / "cat"), workers=1, judge_model="scripted", seed=2),
                        progress=False)
    judge = report.judge
    assert judge.probes > 0 and judge.disagreements > 0  # "always succeeds" is wrong about refused calls
    assert judge.tokens_in == 200 * len(scripted_model.chat_requests)
    assert judge.cost_usd == pytest.approx(len(scripted_model.chat_requests) * (200 * PRICE_IN + 3 * PRICE_OUT)
                                              / 1e6, abs=1e-9)
    assert report.stages["gate"].tokens_in == judge.tokens_in
    prompt = _messages({"body": scripted_model.chat_requests[0]})
    assert "Rules:" in prompt and "def " not in prompt  # the rules, never the code
