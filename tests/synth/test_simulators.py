"""Simulators (issue 6): the spec-only SpecSimulator against execution; LLMSim plain/constrained over the scripted server."""

from __future__ import annotations

import copy
import json

import pytest

from catalog.bench.items import BenchItem, SimResult
from catalog.models import Action, Strata
from catalog.state.delta import Delta
from catalog.store import Catalog
from constraints.simulate import SpecSimulator, item_spec
from constraints.spec import ConstraintSpec
from synth.llm import EndpointUnreachable, UnknownModel
from synth.simulation import (
    LLMSim,
    check_answer,
    make_simulator,
    resolve_dotted,
)
from tests.llm_server import Reply
from verifier.audit.metrics import feedback_match, strict_config_match

_ENVS: dict[str, object] = {}


def bench_item(env_id: str, tool: str, state: dict | None = None, state_name: str = "default", **arguments) -> BenchItem:
    """Execute one call on a reference env (trusted, in-process) and wrap it as a BenchItem."""
    handle = Catalog().get(env_id)
    runtime = handle.runtime()
    before = copy.deepcopy(state) if state is not None else handle.state(state_name)
    runtime.reset(before)
    action = Action(name=tool, arguments=arguments)
    m = handle.manifest
    doc = f"{m.name}: {m.description}\nRules:\n" + "\n".join(f"- {rule}" for rule in m.rules)
    return BenchItem.from_step(env_id, before, action, runtime.call(action, snapshot=True), env_kind=m.kind,
                               env_entry=m.entry, env_code=handle.source(), env_doc=doc)


@pytest.fixture(scope="module")
def borrow() -> BenchItem:
    return bench_item("library", "borrow_book", member_id="M002", book_id="B002")


@pytest.fixture(scope="module")
def blocked() -> BenchItem:
    """A failure: M003 owes 12 EUR."""
    return bench_item("library", "borrow_book", member_id="M003", book_id="B002")


def _sim(server, mode="constrained", on_violation="reask", **kwargs) -> LLMSim:
    return LLMSim("gpt-4o-mini", mode, on_violation, client=server.client("gpt-4o-mini", **kwargs))


def _text(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"])


def _gold_answer(item: BenchItem) -> dict:
    return {"observation": item.observation, "delta": item.delta}


# --- SpecSimulator on items ------------------------------------------------------------------------------------

SPEC_CASES = [
    ("library", "borrow_book", {"member_id": "M002", "book_id": "B002"}),
    ("library", "borrow_book", {"member_id": "M003", "book_id": "B002"}),
    ("library", "return_book", {"loan_id": "loan-1"}),
    ("library", "get_member", {"member_id": "M009"}),
    ("library", "pay_fine", {"fine_id": "fine-1", "amount": 1.0}),
    ("bank", "get_account", {"account_id": "A1"}),
    ("store", "update_address", {"customer_id": "U1", "address": "1 Main St"}),
    ("store", "get_product", {"product_id": "SKU-100"}),
]


def test_spec_sim_agrees_with_execution_on_reference_envs():
    sim = SpecSimulator()
    answered = 0
    for env_id, tool, arguments in SPEC_CASES:
        item = bench_item(env_id, tool, **arguments)
        result = sim.predict(item)
        assert isinstance(result, SimResult)
        if result.abstained:
            assert result.reason
            continue
        answered += 1
        assert feedback_match(result.observation, item.observation), (tool, result.observation, item.observation)
        assert strict_config_match(item.state, result.delta, item.next_state), (tool, result.delta, item.delta)
    assert answered >= 6
    assert (sim.name, sim.mode) == ("spec", "spec")


def test_spec_sim_finds_the_env_class_when_the_item_names_none():
    item = bench_item("store", "update_address", customer_id="U1", address="1 Main St")
    result = SpecSimulator().predict(item.model_copy(update={"env_entry": None}))  # as EnvSimBench items come
    assert not result.abstained and strict_config_match(item.state, result.delta, item.next_state)


def test_spec_sim_abstains_when_the_code_cannot_be_analysed(borrow):
    broken = borrow.model_copy(update={"env_code": "def broken(:\n"})
    result = SpecSimulator().predict(broken)
    assert result.abstained and "no constraint spec" in result.reason


def test_items_of_one_env_share_one_extracted_spec(borrow, blocked):
    """The audit's simulator extracts each env module once (one cache, shared across items)."""
    assert item_spec(borrow) is item_spec(blocked)
    with pytest.raises(TypeError, match="SpecSimulator\\(spec\\)"):
        SpecSimulator().predict(borrow.state, borrow.action)  # a call needs a spec; an item brings its own


# --- plain mode ---------------------------------------------------------------------------------


def test_dotted_paths_resolve_to_the_longest_existing_key():
    state = {"users": {"a": {"b": 1}, "a.b": {"c": 2}}, "x.y": {"z": 0}}
    assert resolve_dotted("users.a.b.c", state) == ["users", "a.b", "c"]
    assert resolve_dotted("users.a.b", state) == ["users", "a.b"]
    assert resolve_dotted("x.y.z", state) == ["x.y", "z"]
    assert resolve_dotted("users.new.key.k", state) == ["users", "new", "key", "k"]


def test_plain_mode_round_trip_resolves_a_key_containing_a_dot(llm_server):
    state = Catalog().get("store").state("default")
    customers = state["customers"]
    customers["hana.kim"] = {**customers.pop("U1"), "customer_id": "hana.kim"}
    customers["hana"] = {**customers["hana.kim"], "customer_id": "hana"}  # decoy: a prefix of the real key
    item = bench_item("store", "update_address", state=state, customer_id="hana.kim", address="1 Main St")
    assert item.delta == [{"op": "modify", "path": ["customers", "hana.kim", "address"], "value": "1 Main St"}]
    llm_server.script(Reply(content=json.dumps({
        "feedback": repr(item.observation),
        "config_changes": [{"type": "modify", "path": "customers.hana.kim.address", "value": "1 Main St"}]}),
        prompt_tokens=4000, completion_tokens=60))
    result = _sim(llm_server, mode="plain").predict(item)
    assert not result.abstained and result.error is None
    assert result.delta == [{"op": "modify", "path": ["customers", "hana.kim", "address"], "value": "1 Main St"}]
    assert feedback_match(result.observation, item.observation)
    assert strict_config_match(item.state, result.delta, item.next_state)
    assert (result.tokens_in, result.tokens_out) == (4000, 60)
    request = llm_server.chat_requests[0]
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "class OnlineStore" in system and '"hana.kim"' in system  # whole source, whole pretty state
    assert user == 'update_address({"customer_id": "hana.kim", "address": "1 Main St"})'
    assert request["temperature"] == 0 and request["seed"] == 0
    assert request["response_format"]["type"] == "json_schema"


# --- constrained mode: the prompt ----------------------------------------------------------------


def test_constrained_prompt_holds_the_tool_source_and_only_the_read_slice(llm_server, borrow):
    llm_server.script(_gold_answer(borrow))
    result = _sim(llm_server).predict(borrow)
    assert result.error is None and not result.violations
    assert strict_config_match(borrow.state, result.delta, borrow.next_state)
    assert feedback_match(result.observation, borrow.observation)
    text = _text(llm_server.chat_requests[0])
    assert "def borrow_book" in text
    assert "def return_book" not in text and "def pay_fine" not in text and "def _issue_fine" not in text
    assert "Lend a book to a member for 14 days." in text  # the spec entry's description
    assert "FINE_BLOCK = 10.0" in text and "MAX_RENEWALS" not in text  # only the constants the tool uses
    assert "fines" not in json.loads(text.split("other records omitted): ", 1)[1].split("\n", 1)[0])
    assert "fine-1" not in text  # the fines table is outside the read set
    assert "Grace Hopper" in text and "Ada Lovelace" not in text  # members narrowed to the borrower
    assert "A Wizard of Earthsea" in text and "The Dispossessed" not in text
    assert "loans(id: str" in text  # columns of the record it creates
    plain_chars = sum(len(m["content"]) for m in _plain_messages(borrow))
    assert len(text) < plain_chars / 3


def _plain_messages(item):
    from synth.simulation import plain_messages

    return plain_messages(item)


def test_constrained_prompt_includes_called_helpers_and_says_which_keys_are_absent(llm_server):
    returned = bench_item("library", "return_book", state_name="overdue", loan_id="loan-1")
    missing = bench_item("library", "get_member", member_id="M009")
    llm_server.script(_gold_answer(returned), _gold_answer(missing))
    sim = _sim(llm_server)
    sim.predict(returned)
    sim.predict(missing)
    first, second = (_text(r) for r in llm_server.chat_requests)
    assert "def return_book" in first and "def _issue_fine" in first
    assert "Absent (no such record): members['M009']" in second


# --- constrained mode: validation ---------------------------------------------------------------


def _op(op, path, value=None):
    out = {"op": op, "path": path}
    if op != "delete":
        out["value"] = value
    return out


def test_validator_catches_planted_violations(borrow, blocked):
    spec = item_spec(borrow)
    good = borrow.delta
    planted = [
        _op("modify", ["members", "M002", "name"], "Grace"),  # outside the write set
        _op("modify", ["books", "B999", "status"], "on_loan"),  # a record that does not exist
        _op("add", ["loans", "loan-99", "status"], "active"),  # parent missing, not created by any op
        _op("modify", ["books", "B002", "times_borrowed"], "eight"),  # wrong type (int column)
        _op("modify", ["loans", "loan-1", "returned_at"], "yesterday"),  # not a datetime
        _op("add", ["fines", "fine-9"], {"id": "fine-9"}),  # new record in a collection outside the write set
    ]
    check = check_answer(borrow.observation, good + planted, borrow.state, spec, "borrow_book")
    text = "\n".join(check.violations)
    assert "['members', 'M002', 'name']" in text and "outside the write set" in text
    assert "modify ['books', 'B999', 'status']: no such path" in text
    assert "add ['loans', 'loan-99', 'status']: the parent" in text and "not creatable" in text
    assert "books.times_borrowed takes a int, got 'eight'" in text
    assert "loans.returned_at" in text
    assert "add ['fines', 'fine-9']" in text
    assert check.dropped == len(planted) and check.kept == [op for op in check.kept if op.model_dump(mode="json") in good]
    assert strict_config_match(borrow.state, Delta.dump_python(check.kept, mode="json"), borrow.next_state)

    clean = check_answer(borrow.observation, good, borrow.state, spec, "borrow_book")
    assert clean.ok and clean.dropped == 0

    failed = check_answer(blocked.observation, [_op("modify", ["books", "B002", "status"], "on_loan")],
                          blocked.state, spec, "borrow_book")
    assert any("reports a failure" in v for v in failed.violations)
    assert failed.kept == [] and failed.dropped == 1


def test_validator_checks_a_whole_record_modify_field_by_field(borrow):
    spec = item_spec(borrow)
    record = dict(borrow.state["books"]["B002"], status="on_loan", times_borrowed=8, hold_member_id=None)
    ok = check_answer(borrow.observation, [_op("modify", ["books", "B002"], record)], borrow.state, spec, "borrow_book")
    assert ok.ok
    bad = check_answer(borrow.observation, [_op("modify", ["books", "B002"], dict(record, title="X"))], borrow.state,
                       spec, "borrow_book")
    assert any("['books', 'B002', 'title']" in v and "outside the write set" in v for v in bad.violations)


def test_reask_with_a_clean_second_answer(llm_server, borrow):
    bad = {"observation": borrow.observation,
           "delta": [*borrow.delta, _op("modify", ["members", "M002", "name"], "Grace")]}
    llm_server.script(bad, _gold_answer(borrow))
    result = _sim(llm_server, on_violation="reask").predict(borrow)
    assert result.reasks == 1 and result.repairs == 0
    assert len(result.violations) == 1 and "outside the write set" in result.violations[0]
    assert strict_config_match(borrow.state, result.delta, borrow.next_state)
    second = llm_server.chat_requests[1]["messages"]
    assert second[-2]["role"] == "assistant" and "outside the write set" in second[-1]["content"]
    assert result.tokens_in == 20 and result.tokens_out == 10  # both calls counted
    assert "--- re-ask ---" in result.raw


def test_reask_that_still_violates_is_projected(llm_server, blocked):
    wrong = {"observation": blocked.observation, "delta": [_op("modify", ["members", "M003", "active_loans"], 2)]}
    llm_server.script(wrong, wrong)
    result = _sim(llm_server, on_violation="reask").predict(blocked)
    assert result.reasks == 1 and result.repairs == 1 and result.delta == []
    assert len(result.violations) == 2 and result.violations[1].startswith("after re-ask: ")
    assert strict_config_match(blocked.state, result.delta, blocked.next_state)


def test_project_drops_violating_ops_without_asking_again(llm_server, borrow):
    bad = {"observation": borrow.observation,
           "delta": [*borrow.delta, _op("modify", ["members", "M002", "name"], "Grace"),
                     _op("modify", ["books", "B002", "times_borrowed"], "eight")]}
    llm_server.script(bad)
    result = _sim(llm_server, on_violation="project").predict(borrow)
    assert len(llm_server.chat_requests) == 1
    assert result.reasks == 0 and result.repairs == 2 and len(result.violations) == 2
    # the bad times_borrowed op went; the gold one (earlier in the list) stayed
    assert strict_config_match(borrow.state, result.delta, borrow.next_state)


# --- errors -------------------------------------------------------------------------------------


def test_malformed_json_is_an_abstaining_error_not_a_crash(llm_server, borrow):
    llm_server.script("this is not json {", "still {{ not json")
    result = _sim(llm_server).predict(borrow)
    assert result.abstained and result.error.startswith("MalformedOutput")
    assert result.delta is None and result.tokens_in == 20  # the failed call's tokens still count
    assert result.raw is not None


def test_a_500_then_success_is_retried_by_the_client(llm_server, borrow):
    llm_server.script(500, _gold_answer(borrow))
    result = _sim(llm_server).predict(borrow)
    assert result.error is None and not result.abstained
    assert len(llm_server.chat_requests) == 2
    assert strict_config_match(borrow.state, result.delta, borrow.next_state)


def test_an_unreachable_endpoint_propagates(borrow):
    sim = make_simulator("local-4b", "constrained", base_url="http://127.0.0.1:9/v1")
    sim.client.attempts, sim.client.base_delay = 1, 0.0
    with pytest.raises(EndpointUnreachable, match="8013"):
        sim.predict(borrow)


def test_a_prompt_beyond_the_context_window_abstains_without_a_request(llm_server, tmp_path, monkeypatch, borrow):
    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.tiny]\nbase_url = "{llm_server.base_url}"\nmodel = "test-model"\n'
                        "json_schema = true\ncontext_window = 2048\nmax_output_tokens = 256\n", encoding="utf-8")
    monkeypatch.setenv("ENVFORGE_MODELS", str(registry))
    llm_server.script(_gold_answer(borrow))
    plain = make_simulator("tiny", "plain").predict(borrow)
    assert plain.abstained and "context window of 2048" in plain.error and not llm_server.chat_requests
    constrained = make_simulator("tiny", "constrained").predict(borrow)
    assert not constrained.abstained and len(llm_server.chat_requests) == 1
    assert llm_server.chat_requests[0]["max_tokens"] <= 256


def test_make_simulator_names():
    assert isinstance(make_simulator("spec"), SpecSimulator)
    sim = make_simulator("local-4b", "constrained", "project")
    assert (sim.name, sim.mode, sim.on_violation) == ("local-4b", "constrained", "project")
    with pytest.raises(ValueError, match="mode"):
        make_simulator("local-4b", "fancy")
    with pytest.raises(ValueError, match="policy"):
        make_simulator("local-4b", "constrained", "ignore")
    with pytest.raises(UnknownModel):
        make_simulator("no-such-model")
    with pytest.raises(EndpointUnreachable, match="open_client"):
        make_simulator("smollm2-135m", "constrained")  # embedded: the caller starts its server


# --- the validator and the slice on many executed calls ------------------------------------------


@pytest.mark.parametrize("env_id", ["library", "bank", "clinic", "store"])
def test_gold_answers_pass_the_validator_and_the_slice_suffices(env_id):
    """Execution's own answer never violates the spec, and the spec-only simulator predicts the same
    from the constrained prompt's slice as from the whole state (the slice holds all it reads)."""
    import random

    from constraints.completeness import candidates
    from synth.simulation import read_slice

    rng = random.Random(7)
    handle = Catalog().get(env_id)
    state = handle.state("default")
    spec = _spec_of(env_id)
    runtime = handle.runtime()
    checked = 0
    for tool, entry in spec.tools.items():
        for _ in range(4):
            arguments = {p.name: rng.choice(candidates(p, state)) for p in entry.params
                         if p.required or rng.random() < 0.5}
            runtime.reset(state)
            result = runtime.call(Action(name=tool, arguments=arguments), snapshot=True)
            if result.outcome.value not in ("success", "failure"):
                continue
            delta = Delta.dump_python(result.delta, mode="json")
            check = check_answer(result.observation, delta, state, spec, tool)
            assert check.ok, (tool, arguments, check.violations)
            full = SpecSimulator(spec).predict(state, Action(name=tool, arguments=arguments))
            if full.abstained:
                continue
            part, _ = read_slice(state, spec, tool, arguments)
            sliced = {k: (part.get(k, {}) if isinstance(v, dict) else part.get(k, v)) for k, v in state.items()}
            narrow = SpecSimulator(spec).predict(sliced, Action(name=tool, arguments=arguments))
            assert not narrow.abstained and narrow.observation == full.observation, (tool, arguments)
            assert narrow.delta == full.delta, (tool, arguments)
            checked += 1
    assert checked >= 10


def _spec_of(env_id: str) -> ConstraintSpec:
    m, code = Catalog().get(env_id).manifest, Catalog().get(env_id).source()
    item = BenchItem(id="x", env_id=env_id, env_kind=m.kind, env_entry=m.entry, env_code=code, state={},
                     action=Action(name="x"), observation=None, next_state={}, delta=[],
                     strata=Strata(outcome="success", delta_band="0", delta_size=0, arg_count=0))
    return item_spec(item)


def test_open_simulator_uses_a_registry_model(llm_server, tmp_path, monkeypatch, borrow):
    from synth.simulation import open_simulator

    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.scripted]\nbase_url = "{llm_server.base_url}"\nmodel = "test-model"\n'
                        "json_schema = true\nprice_in = 1.0\nprice_out = 2.0\n", encoding="utf-8")
    monkeypatch.setenv("ENVFORGE_MODELS", str(registry))
    llm_server.script(Reply(content=json.dumps(_gold_answer(borrow)), prompt_tokens=1000, completion_tokens=100))
    with open_simulator("scripted", "constrained", "project") as sim:
        result = sim.predict(borrow)
    assert sim.name == "scripted" and sim.mode == "constrained"
    assert result.cost_usd == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    assert llm_server.chat_requests[0]["model"] == "test-model"
    with open_simulator("spec") as spec_sim:
        assert isinstance(spec_sim, SpecSimulator)
