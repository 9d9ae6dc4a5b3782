"""A run that falls short says why: the proposal cap, what the proposals ran into, and how many topics remain."""

from __future__ import annotations

import json

import pytest

from catalog.search.vectors import DedupFilter
from catalog.store import Catalog
from cli import main
from synth.backends import make_generator
from synth.mining import domain_order
from synth.run_config import RunConfig
from synth.shortfall import default_max_proposals, probe_topics, shortfall


def _slot(status: str, reason: str = "", checks: tuple[str, ...] = ()) -> dict[str, object]:
    return {"status": status, "reason": reason, "failing_checks": list(checks)}


def test_the_reason_counts_what_each_proposal_ran_into():
    rows = [_slot("registered"), _slot("deduplicated", "topic too close to hotel-1 (cosine 0.91)"),
            _slot("deduplicated", "topic too close to ours-2 (cosine 0.88)"),
            _slot("deduplicated", "env id x is slot 1's, earlier in this run"), _slot("existing", "taken"),
            _slot("rejected", "gate", ("every_guard_reachable", "intent_matches")), _slot("failed", "boom")]
    found = shortfall(rows, requested=3, max_proposals=7, run_ids={"ours-2"}, probed=50, topics_left=4)
    assert found is not None
    assert (found.duplicates_of_catalog, found.duplicates_of_run, found.existing_ids, found.rejected,
            found.failed) == (1, 2, 1, 1, 1)
    assert found.top_failing_checks == {"every_guard_reachable": 1, "intent_matches": 1}
    assert found.reason.startswith("registered 1/3: the proposal cap was reached (7 of --max-proposals 7)")
    assert "1 topics too close to envs the catalog already had" in found.reason
    assert "4 distinct topics remain in the next 50 proposals" in found.reason
    exhausted = shortfall(rows, requested=3, max_proposals=7, run_ids=set(), probed=50, topics_left=0)
    assert exhausted is not None and "topic dedup is exhausted against this catalog" in exhausted.reason
    assert shortfall(rows, requested=1, max_proposals=7, run_ids=set()) is None  # not short
    assert default_max_proposals(20) == 200 and default_max_proposals(5) == 105


def test_the_look_ahead_counts_new_topics_without_taking_them():
    generator = make_generator(RunConfig(n=1, domain_order=domain_order(0)))
    dedup = DedupFilter()
    assert probe_topics(generator, dedup, 0, 0, 12) == 12  # twelve different domains first
    assert len(dedup.ids) == 0  # a copy was probed
    for slot in range(12):
        topic, _ = generator.topic(slot, 0)
        dedup.accept(topic["env_id"], topic["topic"])
    assert probe_topics(generator, dedup, 0, 0, 12) == 0


def test_a_run_into_a_catalog_holding_its_topics_stops_at_the_cap_and_says_why(tmp_path, capsys):
    """No slot passes dedup, so no gate runs: the run is the driver alone, then its stderr line."""
    config = RunConfig(n=1, domain_order=domain_order(0))
    generator = make_generator(config)
    catalog = Catalog(tmp_path)
    store = Catalog("/nonexistent-envforge-catalog").get("store")
    for slot in range(3):  # envs that already hold the topics of the run's first three proposals
        topic, _ = generator.topic(slot, 0)
        manifest = store.manifest.model_copy(update={"id": f"held-{slot}", "topic": topic["topic"]})
        catalog.write_env(manifest, store.source(), {name: store.state(name) for name in store.state_names()})
    code = main(["synthesize", "--n", "1", "--max-proposals", "3", "--catalog", str(tmp_path), "--json",
                 "--workers", "1"])
    captured = capsys.readouterr()
    assert code == 1
    report = json.loads(captured.out)
    assert report["registered"] == 0 and report["deduplicated"] == 3
    assert report["shortfall"]["duplicates_of_catalog"] == 3 and report["shortfall"]["probed"] == 3
    assert report["shortfall"]["topics_left"] == 3
    line = next(line for line in captured.err.splitlines() if line.startswith("registered 0/1"))
    assert "the proposal cap was reached (3 of --max-proposals 3)" in line
    assert "3 topics too close to envs the catalog already had" in line
    assert "3 distinct topics remain in the next 3 proposals (raise --max-proposals" in line


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_max_proposals_must_be_a_positive_number(value, capsys, tmp_path):
    assert main(["synthesize", "--n", "1", "--max-proposals", value, "--catalog", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --max-proposals:" in err
    assert not (tmp_path / ".runs").exists()
