"""The generator backends a run can use, by name: adding one is one decorated factory.

`synthesize --backend` takes its choices and help from `BACKENDS` (a catalog.registry.Registry). The table is cheap to
import (the CLI builds its parser from it on every call): factories import their generator
only when a run asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.registry import Registry, UnknownName

if TYPE_CHECKING:
    from synth.generators import Generator
    from synth.llm.registry import Registry as ModelRegistry
    from synth.run_config import Endpoint, RunConfig, RunModels

__all__ = ["BACKENDS", "Backend", "backend_for", "backend_help", "backend_names", "make_generator", "register_backend",
           "resolve_models"]

Factory = Callable[["RunConfig", "Endpoint | None"], "Generator"]


@dataclass(frozen=True)
class Backend:
    """One registered backend: its name, a line of help, whether it needs `--model`, its factory."""

    name: str
    summary: str
    needs_model: bool
    factory: Factory


BACKENDS: Registry[Backend] = Registry("backend")


def register_backend(name: str, *, summary: str, needs_model: bool = False) -> Callable[[Factory], Factory]:
    """Register `factory(config, model) -> Generator` under `name` (model: the resolved Endpoint or None)."""
    return BACKENDS.register(name, lambda factory: Backend(name, summary, needs_model, factory))


def backend_names() -> list[str]:
    """The registered backends, in registration order (the first is the default)."""
    return BACKENDS.choices()


def backend_help() -> str:
    """`name: summary` for each backend, for `synthesize --help`."""
    return "; ".join(f"{b.name}: {b.summary}" for b in BACKENDS.values())


def backend_for(backend: str, model: str | None) -> str:
    """The backend a run uses: naming a model with a backend that takes none picks the model backend."""
    if model and backend in BACKENDS and not BACKENDS[backend].needs_model:
        return next((b.name for b in BACKENDS.values() if b.needs_model), backend)
    return backend


def resolve_models(config: RunConfig, registry: ModelRegistry | None = None) -> RunModels:
    """Look the run's model names up once; RunError for an unknown backend or a missing model.

    The registry is loaded only when a model is named (UnknownModel lists the known names); the
    run's types are imported here, so this table stays cheap to import.
    """
    from synth.run_config import Endpoint, RunError, RunModels

    try:
        entry = BACKENDS[config.backend]
    except UnknownName as exc:
        raise RunError(str(exc)) from None
    if entry.needs_model and not config.model:
        raise RunError(f"--backend {config.backend} needs --model NAME; `python cli.py models` lists them")
    names = (config.model if entry.needs_model else None, config.judge_model)
    if not any(names):
        return RunModels()
    if registry is None:
        from synth.llm.registry import load_registry

        registry = load_registry()
    generator, judge = (Endpoint(registry[name]) if name else None for name in names)
    return RunModels(generator=generator, judge=judge)


def make_generator(config: RunConfig, model: Endpoint | None = None) -> Generator:
    """The generator of a RunConfig; `model` is its resolved model (see synth.run.resolve_models)."""
    entry = BACKENDS[config.backend]  # UnknownName (a KeyError) lists the backends
    if entry.needs_model and model is None:
        raise ValueError(f"backend {config.backend!r} needs a model (--model NAME; see `python cli.py models`)")
    return entry.factory(config, model)


@register_backend("procedural", summary="ontology + seed -> compiled code, no model or network")
def _procedural(config: RunConfig, model: Endpoint | None) -> Generator:
    from synth.generators import ProceduralGenerator

    return ProceduralGenerator(config.domain_order or None, size=config.size)


@register_backend("llm", summary="a registry model mines topics and fills the blueprint or writes the code "
                                 "(needs --model)", needs_model=True)
def _llm(config: RunConfig, model: Endpoint | None) -> Generator:
    from synth.llm.generator import LLMGenerator

    assert model is not None  # make_generator checked
    return LLMGenerator(model.spec, mode=config.mode, domain_order=config.domain_order or None,
                        base_url=model.base_url, size=config.size)
