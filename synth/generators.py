"""Generators: what fills each pipeline stage's artefact. The procedural one needs no model.

A generator answers four questions for the graph: which topic a slot gets (mining), the
blueprint of a topic (plan), the tables' source (schema) and the env module (code), the last
possibly with feedback from failed checks. Each answer comes with the LLM usage it cost (zero
for the procedural generator). `can_correct` says whether feedback can change the code: the
procedural compiler is deterministic, so a failure there rejects the env instead of retrying.
"""

from __future__ import annotations

from typing import Any, Protocol

from synth.llm.ledger import Usage
from synth.procedural.blueprint import Blueprint, SizeName
from synth.procedural.compiler import compile_env
from synth.procedural.design import design, topic_text
from synth.procedural.ontology import load_domains
from synth.procedural.ontology.variants import all_domains, proposal_order

__all__ = ["Usage", "Generator", "ProceduralGenerator", "split_schema", "topic_text"]


class Generator(Protocol):
    """What the graph asks of a backend, stage by stage (see the module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def can_correct(self) -> bool: ...

    def topic(self, slot: int, seed: int) -> tuple[dict[str, Any], Usage]: ...

    def blueprint(self, topic: dict[str, Any]) -> tuple[Blueprint, Usage]: ...

    def schema(self, bp: Blueprint) -> tuple[str, Usage]: ...

    def code(self, bp: Blueprint, plan: dict[str, Any], schema: str, feedback: list[str]) -> tuple[str, Usage]: ...


def split_schema(source: str) -> str:
    """The tables part of a compiled module (everything before the Env subclass)."""
    env_start = source.find("(Env):")
    cut = source.rfind("\n\nclass ", 0, env_start) if env_start != -1 else -1
    return (source[:cut] if cut != -1 else source).rstrip() + "\n"


class ProceduralGenerator:
    """Ontology + seed -> blueprint -> compiled code; no model, no network.

    Slots take the domains and their variants (niches) in `proposal_order`: every niche once
    before any gets a second design, so a run's topics stay distinct as long as they can.
    """

    name = "procedural"
    model = None
    can_correct = False

    def __init__(self, domain_order: list[str] | None = None, *, size: SizeName = "medium",
                 niches: bool = True) -> None:
        """`niches=False` proposes the base domains only (what bench/synthesis.py --yield-curve compares with)."""
        self.domains = {d.id: d for d in all_domains()}
        base = domain_order or sorted(d.id for d in load_domains())
        self.order = proposal_order(base) if niches else list(base)
        self.size = size

    def topic(self, slot: int, seed: int) -> tuple[dict[str, Any], Usage]:
        domain = self.domains[self.order[slot % len(self.order)]]
        variant = seed * 100_003 + slot
        focus = self._focus(domain.id, seed, slot)
        bp = design(domain, variant, size_class=self.size, focus=focus)
        return {"domain": domain.id, "seed": variant, "env_id": bp.env_id, "topic": bp.topic,
                "description": bp.description, **({"focus": focus} if focus else {})}, Usage()

    def _focus(self, domain_id: str, seed: int, slot: int) -> str | None:
        """The focus entity of a domain's later designs: each lifecycle entity its first design did not centre on, in turn.

        A domain's first design (round 0) picks its focus from the seed; the next rounds centre on
        the others, one per round, so a second design of a domain is about another of its
        records and its topic differs (after those, the seed picks again).
        """
        first, rounds = slot % len(self.order), slot // len(self.order)
        if rounds == 0:
            return None
        domain = self.domains[domain_id]
        taken = design(domain, seed * 100_003 + first, size_class=self.size).entities[0].name
        others = [e.name for e in domain.entities if e.transitions and e.name != taken]
        return others[rounds - 1] if rounds <= len(others) else None

    def blueprint(self, topic: dict[str, Any]) -> tuple[Blueprint, Usage]:
        return design(self.domains[topic["domain"]], topic["seed"], size_class=self.size,
                      focus=topic.get("focus")), Usage()

    def schema(self, bp: Blueprint) -> tuple[str, Usage]:
        return split_schema(compile_env(bp)), Usage()

    def code(self, bp: Blueprint, plan: dict[str, Any], schema: str, feedback: list[str]) -> tuple[str, Usage]:
        return compile_env(bp), Usage()
