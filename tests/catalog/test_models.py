import pytest

from catalog.models import Action, EnvManifest, Outcome, Sample, Strata


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
    with pytest.raises(ValueError, match="snapshot=True"):
        Sample.from_step("bank", state, action, runtime.call(action))
    runtime.reset(state)
    sample = Sample.from_step("bank", runtime.snapshot(), action, runtime.call(action, snapshot=True))
    assert sample.strata.delta_band == "7-12" and sample.strata.arg_count == 2
    assert sample.next_state["accounts"]["A002"]["status"] == "closed"
    assert Sample.model_validate_json(sample.model_dump_json()) == sample


def test_manifest_forbids_unknown_fields_and_bad_ids():
    with pytest.raises(ValueError, match="Extra inputs"):
        EnvManifest(id="x", name="x", kind="sql", entry="E", colour="red")
    with pytest.raises(ValueError, match="pattern"):
        EnvManifest(id="../escape", name="x", kind="sql", entry="E")
