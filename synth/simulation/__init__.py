"""Simulators: anything that maps (state, action, code, spec) to a predicted (observation, Δ).

All implement catalog.bench.items's Simulator protocol (`name`, `mode`, `predict(item) -> SimResult`),
so the audit in verifier/ can run any of them without importing synth:
- the named simulators of `synth.simulators.SIMULATORS`, e.g. "spec":
  constraints.simulate.SpecSimulator, the spec-only simulator, abstaining where the spec is
  incomplete (it lives in constraints/; the table only names it);
- `LLMSim`: a registry model in `plain` (EnvSimBench-style) or `constrained` prompt mode, the
  latter validated against the constraint spec and re-asked or projected on violations.

`make_simulator` builds one from CLI-style arguments when the endpoint is already up;
`open_simulator` also starts (and stops) the embedded model; `recipe_for` gives the picklable
`SimulatorRecipe` that rebuilds an opened simulator in a Ray worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from catalog.bench.items import Simulator
from synth.llm import LLMClient, Registry, load_registry, open_client
from synth.simulation.llm_sim import MODES, POLICIES, LLMSim
from synth.simulation.prompts import constrained_messages, plain_messages, read_slice, resolve_dotted
from synth.simulation.recipe import SimulatorRecipe, recipe_for
from synth.simulation.validate import Check, check_answer
from synth.simulators import SIMULATORS

__all__ = ["Check", "LLMSim", "MODES", "POLICIES", "check_answer", "constrained_messages", "make_simulator",
           "open_simulator", "plain_messages", "read_slice", "recipe_for", "resolve_dotted", "SimulatorRecipe"]


def make_simulator(name: str, mode: str = "plain", on_violation: str = "reask", *, base_url: str | None = None,
                   client: LLMClient | None = None, max_tokens: int | None = None, seed: int = 0,
                   registry: Registry | None = None) -> Simulator:
    """A named simulator of `SIMULATORS` (e.g. "spec"); any other name is a registry model -> LLMSim.

    An embedded model has no fixed address: pass the `base_url` of its running server (or use
    `open_simulator`), else EndpointUnreachable says so. Unknown names raise UnknownModel listing
    the known ones; a bad mode or policy raises ValueError.
    """
    if name in SIMULATORS:
        return SIMULATORS[name].factory()
    return LLMSim(name, mode, on_violation, client=client, base_url=base_url, max_tokens=max_tokens, seed=seed,
                  registry=registry)


@contextmanager
def open_simulator(name: str, mode: str = "plain", on_violation: str = "reask", *, base_url: str | None = None,
                   max_tokens: int | None = None, seed: int = 0, registry: Registry | None = None,
                   **client_options: Any) -> Iterator[Simulator]:
    """Like make_simulator, but starts an embedded model's server for the duration (and stops it).

    `client_options` go to LLMClient (timeout, attempts, ...).
    """
    if name in SIMULATORS:
        yield SIMULATORS[name].factory()
        return
    if mode not in MODES or on_violation not in POLICIES:
        raise ValueError(f"unknown mode {mode!r} or violation policy {on_violation!r}; "
                         f"modes: {', '.join(MODES)}; policies: {', '.join(POLICIES)}")
    spec = (registry or load_registry()).resolve(name)
    options = {"timeout": 180.0, **client_options, "seed": seed, "base_url": base_url}
    with open_client(spec, **options) as client:
        yield LLMSim(spec, mode, on_violation, client=client, max_tokens=max_tokens, seed=seed)
