"""The simulators `audit-sim --model` can name: a table of named ones, else a registry model.

A named simulator (today `spec`, the spec-only simulator of constraints/) needs no model and
no server; any other name is a model of the registry (`python cli.py models`), run by LLMSim in
the prompt mode asked. Adding a simulator is one decorated factory here (`SIMULATORS` is a
catalog.registry.Registry). The table is cheap to
import, since the CLI builds its help from it on every call: factories import their simulator
only when asked. `synth.simulation.make_simulator` / `open_simulator` build from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.registry import Registry

if TYPE_CHECKING:
    from catalog.bench.items import Simulator

__all__ = ["NamedSimulator", "SIMULATORS", "audit_label", "register_simulator", "simulator_help"]

Factory = Callable[[], "Simulator"]


@dataclass(frozen=True)
class NamedSimulator:
    """One named simulator: its name, a line of help and its factory (no arguments: it has no model)."""

    name: str
    summary: str
    factory: Factory


SIMULATORS: Registry[NamedSimulator] = Registry("simulator")


def register_simulator(name: str, *, summary: str) -> Callable[[Factory], Factory]:
    """Register a model-free simulator under `name` (a registry model of that name is then shadowed)."""
    return SIMULATORS.register(name, lambda factory: NamedSimulator(name, summary, factory))


def simulator_help() -> str:
    """What `audit-sim --model` accepts, for its help."""
    named = "; ".join(f"`{s.name}` ({s.summary})" for s in SIMULATORS.values())
    return f"{named}; or a registry model (python cli.py models), e.g. local-4b or smollm2-135m"


def audit_label(name: str, mode: str) -> str:
    """`name-mode` naming an audit's folder: a named simulator has no prompt mode, so its name stands twice."""
    return f"{name}-{name if name in SIMULATORS else mode}"


@register_simulator("spec", summary="the spec-only simulator: exact where the constraint spec is complete, "
                                    "abstains elsewhere")
def _spec() -> Simulator:
    from constraints.simulate import SpecSimulator

    return SpecSimulator()
