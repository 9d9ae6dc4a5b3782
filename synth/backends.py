"""Pick the generator a run asked for (procedural, or an LLM in blueprint or code mode)."""

from __future__ import annotations

from typing import Any

from synth.generators import Generator, ProceduralGenerator

__all__ = ["make_generator"]


def make_generator(config: Any) -> Generator:
    """The generator of a RunConfig; LLM backends need `model` (a registry name)."""
    if config.backend == "procedural":
        return ProceduralGenerator(config.domain_order or None)
    if config.backend == "llm":
        if not config.model:
            raise ValueError("--backend llm needs --model NAME (see `python cli.py models`)")
        from synth.llm_generator import LLMGenerator

        return LLMGenerator(config.model, mode=config.mode, domain_order=config.domain_order or None,
                            base_url=getattr(config, "base_url", None))
    raise ValueError(f"unknown backend {config.backend!r}: use procedural or llm")
