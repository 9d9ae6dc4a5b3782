"""Benchmark sample export: compositions, quotas met exactly, spread over envs, verified, deterministic."""

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.bench.envsimbench import from_envsimbench, read_jsonl, to_envsimbench, write_jsonl
from catalog.bench.items import BenchItem, item_id
from catalog.bench.strata import RUNG_NAMES
from catalog.models import EnvManifest
from catalog.state.delta import Delta, apply_delta, diff
from catalog.state.jsonable import json_equal
from catalog.store import Catalog, CatalogError
from constraints.spec import ConstraintSpec
from executors import LOCAL, open_pool
from sandbox.pool import Job, SandboxPool
from verifier.samples._spec_worker import SpecExtraction
from verifier.samples.compositions import BUCKETS, ENVSIMBENCH_COUNTS, Composition, CompositionError
from verifier.samples.export import (
    export_failures,
    export_samples,
    render_export_report,
)
from verifier.samples.search import extract_specs, sample_bucket

from ..conftest import REFERENCE_IDS

# What the four reference envs can give (they have no 0-argument read tool).
SMALL = {"failure": 3, "no_change_args1": 3, "simple_1": 2, "simple_2": 2, "medium_3": 2, "medium_4": 2,
         "difficult_7_12": 2}


def bucket(item):
    return sample_bucket(item.strata.outcome, item.strata.delta_size, item.strata.arg_count)


@pytest.fixture(scope="module")
def small_composition(tmp_path_factory):
    path = tmp_path_factory.mktemp("composition") / "small.json"
    path.write_text(json.dumps(SMALL))
    return Composition.from_file(path)


@pytest.fixture(scope="module")
def exported(reference, small_composition):
    return export_samples(reference, small_composition, seed=7, workers=2)


# --- compositions -------------------------------------------------------------------------------
def test_envsimbench_composition_is_exact_at_400():
    comp = Composition.envsimbench(400)
    assert comp.counts == ENVSIMBENCH_COUNTS and comp.total == 400
    assert comp.counts["failure"] == 20 and comp.counts["difficult_7_12"] == 50


@given(st.integers(0, 2000))
@settings(max_examples=60, deadline=None)
def test_scaled_compositions_sum_to_n_and_stay_proportional(n):
    comp = Composition.envsimbench(n)
    assert comp.total == n
    for name, count in comp.counts.items():
        assert abs(count - ENVSIMBENCH_COUNTS[name] * n / 400) < 1
    uniform = Composition.uniform(n)
    assert uniform.total == n and max(uniform.counts.values()) - min(uniform.counts.values()) <= 1
    assert set(uniform.counts) == set(BUCKETS)


def test_buckets_are_the_strata_ladder_and_a_refusal_that_wrote_is_no_sample():
    assert BUCKETS == RUNG_NAMES and set(ENVSIMBENCH_COUNTS) < set(BUCKETS)
    assert sample_bucket("success", 0, 3) == "no_change_args2+"  # can be asked for, like every rung
    assert sample_bucket("failure", 0, 0) == "failure"
    assert sample_bucket("failure", 2, 1) is None  # the ladder says failure; a sample it is not
    assert sample_bucket("crash", 0, 1) is None and sample_bucket("invalid", 0, 0) is None


def test_composition_file_and_errors(tmp_path):
    path = tmp_path / "mix.json"
    path.write_text(json.dumps({"medium_3": 3, "failure": 1}))
    comp = Composition.parse(str(path))
    assert comp.counts == {"failure": 1, "medium_3": 3}
    assert Composition.parse(str(path), 8).counts == {"failure": 2, "medium_3": 6}
    path.write_text(json.dumps({"medium_99": 3}))
    with pytest.raises(CompositionError, match="unknown buckets"):
        Composition.from_file(path)
    path.write_text(json.dumps({"failure": -1}))
    with pytest.raises(CompositionError, match="non-negative"):
        Composition.from_file(path)
    with pytest.raises(CompositionError, match="unknown composition"):
        Composition.parse("balanced")


def test_an_optional_bucket_gives_its_shortfall_to_the_others():
    comp = Composition.uniform(24)  # 12 rungs x 2
    assert comp.optional == {"beyond_13+", "no_change_args2+"}
    capped, moved = comp.redistribute({**comp.counts, "beyond_13+": 0})
    assert moved == {"beyond_13+": 2} and capped.total == 24 and capped.counts["beyond_13+"] == 0
    same, none = comp.redistribute(comp.counts)
    assert same == comp and none == {}


# --- export over the reference envs ---------------------------------------------------------------
def test_quotas_are_met_exactly_and_spread_over_envs(exported):
    items, report = exported.items, exported.report
    assert report.quotas_met, report.buckets
    assert Counter(bucket(i) for i in items) == Counter(SMALL)
    assert len({i.id for i in items}) == len(items)
    for name, row in report.buckets.items():
        assert row.wanted == row.found == SMALL[name]
        # round-robin: as many envs as the quota allows, given the envs that have candidates
        assert row.distinct_envs == min(row.wanted, row.envs_with_candidates)
    assert report.distinct_envs == len(REFERENCE_IDS)
    assert report.reexecuted >= 2 * len(items)


def test_items_are_self_contained_and_consistent(exported, reference):
    for item in exported.items:
        handle = reference.get(item.env_id)
        assert item.id == item_id(item.env_id, item.state, item.action)
        assert item.env_code == handle.source() and item.env_kind == handle.manifest.kind
        assert handle.manifest.name in item.env_doc
        assert item.delta == Delta.dump_python(diff(item.state, item.next_state), mode="json")
        assert json_equal(apply_delta(item.state, Delta.validate_python(item.delta)), item.next_state)
        assert item.strata.delta_size == len(item.delta) and item.strata.arg_count == len(item.action.arguments)
        if item.strata.outcome == "failure":
            assert item.delta == [] and item.observation["success"] is False


def test_every_exported_item_re_executes_identically_from_its_state(exported, reference):
    items = exported.items
    with SandboxPool(2) as pool:
        results = pool.run_many([Job.for_env(reference.get(i.env_id), [i.action.model_dump()], state=i.state,
                                             snapshot=True) for i in items])
    for item, result in zip(items, results, strict=True):
        call = result.calls[0]
        assert result.event is None and call.outcome == item.strata.outcome
        assert json_equal(call.observation, item.observation)
        assert json_equal(call.state, item.next_state)


def test_exported_items_survive_both_formats(exported, tmp_path):
    items = exported.items
    back, problems = from_envsimbench(json.loads(json.dumps(to_envsimbench(items))))
    assert problems == []
    for original, imported in zip(items, back, strict=True):
        assert (imported.id, imported.env_kind, imported.env_entry) == (original.id, original.env_kind,
                                                                       original.env_entry)
        assert (imported.state, imported.action, imported.observation, imported.delta, imported.strata) == \
            (original.state, original.action, original.observation, original.delta, original.strata)
    write_jsonl(items, tmp_path / "bench.jsonl")
    assert read_jsonl(tmp_path / "bench.jsonl") == (items, [])


def test_markdown_report(exported):
    text = render_export_report(exported.report)
    assert "every quota met" in text and "| difficult_7_12 | 2 | 2 |" in text


def test_export_is_deterministic_for_a_seed(exported, reference, small_composition):
    again = export_samples(reference, small_composition, seed=7, workers=1)
    assert [i.id for i in again.items] == [i.id for i in exported.items]
    assert [i.model_dump() for i in again.items] == [i.model_dump() for i in exported.items]


def test_report_names_what_it_could_not_fill(reference):
    comp = Composition("mix", {"no_change_args0": 2, "simple_1": 1})
    result = export_samples(reference, comp, seed=1, workers=1, env_ids=["bank", "library"])
    report = result.report
    assert not report.quotas_met
    assert report.model_dump(mode="json")["buckets"]["no_change_args0"] == {"wanted": 2, "found": 0, "distinct_envs": 0,
                                                              "dropped_non_reproducible": 0, "candidates": 0,
                                                              "envs_with_candidates": 0}
    assert report.buckets["simple_1"].found == 1 and {i.env_id for i in result.items} <= {"bank", "library"}
    with pytest.raises(CatalogError):
        export_samples(reference, comp, seed=1, workers=1, env_ids=["no-such-env"])


def test_specs_extracted_in_worker_processes_match_in_process(reference):
    handles = [reference.get(env_id) for env_id in REFERENCE_IDS]
    seen = []
    parallel = extract_specs(handles, 2, lambda *args: seen.append(args), min_parallel=0)
    assert parallel == extract_specs(handles, 1, lambda *args: None)
    assert seen[-1] == ("specs", 4, 4)


def test_the_spec_worker_answers_from_outside_the_repository(tmp_path, monkeypatch):
    """The worker is found through the import path, not the working directory (installed packages too)."""
    source = "class Shelf:\n    def __init__(self, init_config: dict):\n        self.items = {}\n\n" \
             "    def count(self) -> dict:\n        \"\"\"Count the items.\"\"\"\n        return {'n': len(self.items)}\n"
    monkeypatch.chdir(tmp_path)
    with open_pool(LOCAL, SpecExtraction(), 1) as pool:  # a spawned worker process
        spec = pool.submit([source, "class", "Shelf", [], "class", None]).result(timeout=120)
    assert isinstance(spec, ConstraintSpec), spec
    assert set(spec.tools) == {"count"}


FLAKY = '''"""A class env with one non-deterministic tool (a module-level counter survives between calls)."""

COUNTER = [0]


class Flaky:
    def __init__(self, init_config: dict):
        self.items = {}

    def bump(self, key: str) -> dict:
        """Store the next counter value under key."""
        COUNTER[0] += 1
        self.items[key] = COUNTER[0]
        return {"success": True, "n": COUNTER[0]}

    def stable(self, key: str) -> dict:
        """Store 1 under key."""
        self.items[key] = 1
        return {"success": True}
'''


def test_non_reproducible_steps_are_dropped_and_replaced(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.write_env(EnvManifest(id="flaky", name="Flaky", kind="class", entry="Flaky"), FLAKY,
                      {"default": {"items": {}}})
    boom = "raise RuntimeError('boom at import')\n\n\nclass Boom:\n    def poke(self) -> dict:\n        return {}\n"
    catalog.write_env(EnvManifest(id="boom", name="Boom", kind="class", entry="Boom"), boom, {"default": {}})
    result = export_samples(catalog, Composition("mix", {"simple_1": 3}), seed=0, workers=1, env_ids=["flaky", "boom"])
    report = result.report
    assert "boom at import" in report.envs_skipped["boom"] and report.envs_searched == 1
    assert report.quotas_met and [i.action.name for i in result.items] == ["stable"] * 3
    assert report.buckets["simple_1"].dropped_non_reproducible >= 1
    assert set(report.drop_reasons) <= {"observation differs on re-execution", "next state differs on re-execution"}


# --- a synthesized catalog: the EnvSimBench mix, scaled ---------------------------------------------
def test_envsimbench_mix_from_a_small_synthesized_catalog(synthesized_copy):
    # Natural tools make |Δ| = 6 a property of a few operations (an audited move with its history
    # row...), no longer a knob every env turns: a 3-env catalog does not always hold such a call
    # (seed 5's and seed 2's do not; seeds 1 and 3 do). The session's shared 8-env catalog (seed 4,
    # tests/conftest.py) does. The 200-env export is measured with
    # `bench export --n 400 --composition envsimbench` (docs/guide/bench.md).
    catalog = Catalog(synthesized_copy)
    comp = Composition.envsimbench(24)
    result = export_samples(catalog, comp, seed=0, workers=2)
    assert result.report.quotas_met, result.report.buckets
    assert Counter(bucket(i) for i in result.items) == Counter({b: c for b, c in comp.counts.items() if c})
    assert result.report.distinct_envs >= 5


# --- failures of an audit ----------------------------------------------------------------------------
def test_export_failures_returns_what_the_simulator_got_wrong(tmp_path, exported):
    from verifier.audit.run import RECORD_KEYS

    items = exported.items[:5]
    defaults = dict.fromkeys(RECORD_KEYS) | {"abstained": False}  # full audit records, as audit-sim writes them
    lines = []
    verdicts = [(True, True, False), (False, True, False), (True, False, False), (True, True, True), (True, True, False)]
    for item, (fm, cm, abstained) in zip(items, verdicts, strict=True):
        lines.append(json.dumps(defaults | {"id": item.id, "fm": fm, "cm_strict": cm, "abstained": abstained,
                                            "item": item.model_dump(mode="json")}))
    # a resumed audit: the last record of an id wins (item 4 was right, then wrong on a re-ask)
    lines.append(json.dumps(defaults | {"id": items[4].id, "fm": False, "cm_strict": False,
                                        "item": items[4].model_dump(mode="json")}))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n{\"id\": \"torn")
    wrong = export_failures(tmp_path)
    assert [i.id for i in wrong] == [items[1].id, items[2].id, items[3].id, items[4].id]
    assert all(isinstance(i, BenchItem) for i in wrong) and wrong[0] == items[1]
    with pytest.raises(FileNotFoundError, match="audit folder"):
        export_failures(tmp_path / "nothing")
