"""An audit of a real LLM simulator (plain mode) over HTTP: scripted server -> openai client -> LLMSim -> audit."""

from __future__ import annotations

import json

import pytest

from catalog.bench.items import BenchItem
from catalog.models import Action
from catalog.store import Catalog
from synth.simulation import LLMSim
from verifier.audit.run import run_audit

CALLS = {"renew": ("renew_loan", {"loan_id": "loan-1"}),
         "hold": ("place_hold", {"member_id": "M001", "book_id": "B004"}),
         "read": ("get_member", {"member_id": "M001"})}


@pytest.fixture(scope="module")
def items() -> dict[str, BenchItem]:
    handle = Catalog(root="/nonexistent-envforge-catalog").get("library")
    runtime = handle.runtime()
    out = {}
    for key, (name, arguments) in CALLS.items():
        runtime.reset(handle.state("default"))
        before = runtime.snapshot()
        action = Action(name=name, arguments=arguments)
        out[key] = BenchItem.from_step("library", before, action, runtime.call(action, snapshot=True),
                                       env_kind="sql", env_code=handle.source(), env_entry=handle.manifest.entry)
    return out


@pytest.fixture
def scripted(llm_server, tmp_path, monkeypatch):
    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.scripted]\nbase_url = "{llm_server.base_url}"\nmodel = "test-model"\n'
                        "price_in = 1.0\nprice_out = 2.0\njson_schema = true\ncontext_window = 32768\n",
                        encoding="utf-8")
    monkeypatch.setenv("ENVFORGE_MODELS", str(registry))
    return llm_server


def _dotted(op):
    kind = {"add": "add", "modify": "modify", "delete": "delete"}[op["op"]]
    return {"type": kind, "path": ".".join(op["path"]), "value": op.get("value")}


def test_unrelated_edit_malformed_reply_500_and_resume(scripted, items, tmp_path):
    renew, hold, read = items["renew"], items["hold"], items["read"]
    asked: list[str] = []
    failures = {"hold": 1}

    def respond(request):
        call = request["body"]["messages"][-1]["content"]
        name = call.split("(", 1)[0].strip()
        asked.append(name)
        if name == "renew_loan":  # right feedback, gold changes, plus an edit of an unrelated path
            changes = [_dotted(op) for op in renew.delta] + [
                {"type": "modify", "path": "members.M003.name", "value": "Someone Else"}]
            return {"feedback": json.dumps(renew.observation), "config_changes": changes}
        if name == "place_hold":
            if failures["hold"]:
                failures["hold"] -= 1
                return 500
            return {"feedback": json.dumps(hold.observation), "config_changes": [_dotted(op) for op in hold.delta]}
        return "feedback: fine, config_changes: [ {{{"  # malformed beyond repair, also on the re-ask

    scripted.script(respond)
    out = tmp_path / "audit"
    simulator = LLMSim("scripted", "plain", client=None, seed=0)
    first = run_audit([renew, hold, read], simulator, out, workers=1, limit=1)
    records = {json.loads(line)["id"]: json.loads(line) for line in (out / "results.jsonl").open()}
    assert len(records) == 1
    done_tool = next(iter(records.values()))["item"]["action"]["name"]
    before = len(asked)
    report = run_audit([renew, hold, read], simulator, out, workers=1)
    records = {json.loads(line)["id"]: json.loads(line) for line in (out / "results.jsonl").open()}
    assert len(records) == 3 and report.samples == 3 and first.samples == 1
    assert done_tool not in asked[before:]  # the resumed run asked only the samples not yet answered

    r_renew, r_hold, r_read = records[renew.id], records[hold.id], records[read.id]
    assert r_renew["fm"] and not r_renew["cm_strict"] and r_renew["cm_compat"]  # unrelated edit
    assert r_hold["fm"] and r_hold["cm_strict"]  # a 500, retried, then right
    assert r_read["abstained"] and not r_read["fm"]  # malformed JSON: a miss, counted apart
    assert report.tokens_in > 0 and report.cost_usd > 0
