"""Simulator recipes: how to build the driver's simulator again in another process (a Ray worker).

A simulator holds an HTTP client (or is pure Python), and an embedded model's server runs once,
in the driver; a Ray worker cannot be handed the driver's client, and must not start a server of
its own. A `SimulatorRecipe` is plain, picklable data: the simulator's name, prompt mode and
policy, the resolved registry entry (so the worker needs no registry file) and the address of the
endpoint the driver's simulator uses. Calling it builds an equal simulator in the worker.

Multi-node: the embedded model's server listens on 127.0.0.1 of the driver's node, which only
workers on that node reach. For a cluster, serve the model at an address every node reaches
(a registry model whose base_url is such an endpoint); the recipe carries that address as is.
API keys are not in the recipe: a worker reads the entry's `api_key_env` from its own
environment (a local Ray instance inherits the driver's; on a cluster set it on every node).

An `LLMSim` pickles as its recipe (registered here with `copyreg`), so a driver hands a worker
pool the simulator itself and each worker gets an equal one at the same endpoint.
"""

from __future__ import annotations

import copyreg
from dataclasses import dataclass
from typing import Any

from catalog.bench.items import Simulator
from synth.llm import LLMClient, ModelSpec
from synth.simulation.llm_sim import LLMSim
from synth.simulators import SIMULATORS

__all__ = ["SimulatorRecipe", "recipe_for"]


@dataclass(frozen=True)
class SimulatorRecipe:
    """Picklable arguments that rebuild a simulator: a named one (`model` None) or an LLMSim at `base_url`."""

    name: str
    mode: str = "plain"
    on_violation: str = "reask"
    model: ModelSpec | None = None
    base_url: str | None = None
    max_tokens: int | None = None
    seed: int = 0
    timeout: float = 180.0

    def __call__(self) -> Simulator:
        """A new simulator equal to the one this recipe was taken from (its client is the caller's to keep)."""
        if self.model is None:
            return SIMULATORS[self.name].factory()
        client = LLMClient(self.model, base_url=self.base_url, timeout=self.timeout, seed=self.seed)
        return LLMSim(self.model, self.mode, self.on_violation, client=client, max_tokens=self.max_tokens,
                      seed=self.seed)


def recipe_for(simulator: Simulator) -> SimulatorRecipe:
    """The recipe of an opened simulator (`open_simulator`'s), pointing at the endpoint it already uses."""
    if isinstance(simulator, LLMSim):
        client = simulator.client
        return SimulatorRecipe(simulator.name, simulator.mode, simulator.on_violation, model=client.spec,
                               base_url=client.base_url, max_tokens=simulator.max_tokens, seed=simulator.seed,
                               timeout=client.timeout)
    if simulator.name in SIMULATORS:
        return SimulatorRecipe(simulator.name)
    raise ValueError(f"simulator {simulator.name!r} cannot be rebuilt in a worker: it is neither a named "
                     "simulator nor a registry model")


def _pickled_as_recipe(simulator: LLMSim) -> tuple[Any, tuple[()]]:
    """How pickle rebuilds an LLMSim: by calling its recipe (an equal simulator, a client of its own)."""
    return recipe_for(simulator), ()


copyreg.pickle(LLMSim, _pickled_as_recipe)
