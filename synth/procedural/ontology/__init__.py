"""The domain ontology of the procedural backend: domains, entities, fields, lifecycles.

Every module under `synth/procedural/ontology/domains/` defines `DOMAINS`; `load_domains()` gathers and
validates them (ids unique) in a fixed order, so a seed always means the same choices.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from synth.procedural.ontology.schema import SECTORS, Domain, EntityT, FieldT, Transition, parse_field

__all__ = ["load_domains", "Domain", "EntityT", "FieldT", "Transition", "parse_field", "SECTORS"]


@cache
def load_domains() -> tuple[Domain, ...]:
    """All domains, sorted by id; raises ValueError on a duplicate id."""
    from synth.procedural.ontology import domains as package

    found: dict[str, Domain] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for domain in getattr(module, "DOMAINS", []):
            if domain.id in found:
                raise ValueError(f"duplicate domain id {domain.id!r} (in {info.name})")
            found[domain.id] = domain
    return tuple(found[k] for k in sorted(found))
