"""Synthesized envs for the adapter tests, written straight from the procedural pipeline's parts.

The quality gate is what makes `synthesize` slow (~8 s an env); the adapters only need an env
as the catalog holds it (code, manifest, states, tasks), so the gate is skipped here: these envs
are the ones `synthesize` would write, before it verifies them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.models import Provenance
from catalog.store import Catalog
from constraints.extract import shared_spec
from synth.assemble import entry_of, manifest_of, plan_of
from synth.procedural.design import design
from synth.procedural.ontology import load_domains
from synth.procedural.states import initial_states
from synth.procedural.tasks import make_tasks

SYNTHESIZED = ((3, 11), (17, 4), (29, 8))  # (domain index, seed): three domains of different sectors


def write_synthesized(root: Path, picks: tuple[tuple[int, int], ...] = SYNTHESIZED) -> tuple[Catalog, list[str]]:
    """A catalog at `root` with one procedural env per (domain index, seed); their ids."""
    catalog, domains, ids = Catalog(root), load_domains(), []
    for index, seed in picks:
        bp = design(domains[index], seed)
        plan, source = plan_of(bp)
        states = initial_states(bp)
        manifest = manifest_of(bp, source, shared_spec(source, "sql", entry_of(source)),
                               provenance=Provenance(backend="synth:procedural"))
        catalog.write_env(manifest, source, states, make_tasks(bp, plan, states))
        ids.append(bp.env_id)
    return catalog, ids


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory) -> tuple[Catalog, list[str]]:
    return write_synthesized(tmp_path_factory.mktemp("synthesized"))
