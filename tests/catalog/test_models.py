import pytest

from catalog.bench.items import BenchItem, item_id
from catalog.models import Action, EnvManifest, Outcome, Strata


def test_strata_of_a_step():
    assert Strata.of(Outcome.SUCCESS, 8, 2).model_dump() == {"outcome": "success", "delta_band": "7-12", "delta_size": 8,
                                                             "arg_count": 2}
    assert Strata.of(Outcome.CRASH, 0, 0).outcome == "failure"


def test_sample_from_an_executed_step(runtimes, reference):
    handle = reference.get("bank")
    runtime = runtimes["bank"]
    state = handle.state("default")
    runtime.reset(state)
    action = Action(name="close_account", arguments={"account_id": "A002", "payout_account_id": "A001"})
    context = {"env_kind": "sql", "env_code": handle.source(), "env_entry": handle.manifest.entry}
    with pytest.raises(ValueError, match="snapshot=True"):
        BenchItem.from_step("bank", state, action, runtime.call(action), **context)
    runtime.reset(state)
    before = runtime.snapshot()
    sample = BenchItem.from_step("bank", before, action, runtime.call(action, snapshot=True), **context)
    assert sample.id == item_id("bank", before, action) and sample.origin == "envforge"
    assert sample.strata.delta_band == "7-12" and sample.strata.arg_count == 2
    assert sample.next_state["accounts"]["A002"]["status"] == "closed"
    assert BenchItem.model_validate_json(sample.model_dump_json()) == sample


def test_manifest_forbids_unknown_fields_and_bad_ids():
    with pytest.raises(ValueError, match="Extra inputs"):
        EnvManifest(id="x", name="x", kind="sql", entry="E", colour="red")
    with pytest.raises(ValueError, match="pattern"):
        EnvManifest(id="../escape", name="x", kind="sql", entry="E")
