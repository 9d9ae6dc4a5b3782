"""Never wrong on exported samples of imported envs: the item says how its env treats arguments.

Generated envs of the adversarial corpus are imported into a temporary catalog as a user imports
an env (`strict_args: false`: an ill-typed call runs as Python runs it), their samples exported and
the spec-only simulator audited on them, as `bench export` then `audit-sim --model spec` do. The
corpus has a list parameter, to which the export's argument generator gives strings and numbers:
those samples are ill-typed calls the env ran, which a simulator checking arguments strictly
answers as invalid. `python bench/soundness.py --faithful --exported` is the same at any size.
"""

from __future__ import annotations

import pytest

from catalog.importing.importer import import_env
from catalog.store import Catalog
from catalog.tools.argcheck import type_problem
from constraints.simulate import SpecSimulator, item_spec
from sandbox.loadcheck import sandbox_load_check
from sandbox.pool import SandboxPool
from verifier.samples.compositions import Composition
from verifier.samples.export import export_samples

from ..constraints.adversarial import audit_exported, draw_cases, import_corpus, wrong_answers

ENVS, SAMPLES = 8, 40


def _ill_typed(item) -> bool:
    spec = item_spec(item)
    params = {p.name: p for p in spec.tools[item.action.name].params}
    return any(type_problem(name, params[name].annotation, value) for name, value in item.action.arguments.items())


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("faithful")
    drawn = draw_cases(80, seed=3)
    listed = [c for c in drawn if "names: list[str]" in c.source]  # envs whose samples can be ill-typed
    cases = listed[:ENVS // 2] + [c for c in drawn if c not in listed][:ENVS - len(listed[:ENVS // 2])]
    catalog = Catalog(root / "catalog")
    with SandboxPool(1, load_timeout=20.0) as pool:
        ids = import_corpus(cases, catalog, pool, root / "sources")
    items, records = audit_exported(catalog, ids, SAMPLES, root / "audit")
    return catalog, ids, items, records


def test_imported_envs_export_samples_that_say_they_run_ill_typed_calls(audited):
    catalog, ids, items, _ = audited
    assert all(catalog.get(env_id).manifest.strict_args is False for env_id in ids)
    assert len(items) >= SAMPLES // 2 and {item.env_id for item in items} <= set(ids)
    assert all(item.env_strict_args is False and item.env_failure_exceptions == ["ValueError"] for item in items)
    ill_typed = [item for item in items if _ill_typed(item)]
    assert ill_typed, "the corpus gave no ill-typed sample: the test would not tell strict from faithful"
    # what the audit answered before: a strict simulator calls every one of them invalid, the env ran them
    for item in ill_typed:
        strict = SpecSimulator(item_spec(item), strict_args=True).predict(item.state, item.action)
        assert "Bad arguments" in str(strict.observation) and item.observation != strict.observation


def test_the_spec_simulator_answers_no_exported_sample_wrong(audited):
    _, _, items, records = audited
    assert len(records) == len(items)
    assert wrong_answers(records) == []
    answered = {r["id"] for r in records if not r["abstained"] and r["error"] is None}
    assert len(answered) > len(items) // 2
    assert any(item.id in answered for item in items if _ill_typed(item))  # answered, as the env ran them


SHELF = '''
class Shelf:
    def __init__(self):
        self.items = {}

    def names(self) -> list:
        """The names on the shelf, in the order they were put there."""
        return list(self.items)
'''


def test_a_sample_state_keeps_the_key_order_its_step_ran_in(tmp_path):
    """A dict iterates in insertion order: a sample whose state had its keys sorted would answer another call."""
    (tmp_path / "shelf.py").write_text(SHELF)
    (tmp_path / "state.json").write_text('{"items": {"pear": 1, "apple": 2}}')
    catalog = Catalog(tmp_path / "catalog")
    handle = import_env(tmp_path / "shelf.py", catalog, configs=[tmp_path / "state.json"], check=sandbox_load_check)
    items = export_samples(catalog, Composition("order", {"no_change_args0": 1}), env_ids=[handle.handle.id],
                           workers=1).items
    assert [(item.action.name, list(item.state["items"]), item.observation) for item in items] == [
        ("names", ["pear", "apple"], ["pear", "apple"])]
    assert SpecSimulator().predict(items[0]).observation == ["pear", "apple"]
