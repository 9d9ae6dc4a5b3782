"""The domain ontology of the procedural backend: domains, entities, fields, lifecycles.

The domains are data, not code: `synth/procedural/ontology/domains/<sector>.json` holds one sector's
domains as a JSON list, each entry what `Domain` (schema.py) takes -- field shorthand strings, a
`transitions` map of `verb: "from,from>to"` -- so reading one never runs anything. `load_domains()`
reads every file, validates each domain with the schema (an error names the file and the domain;
a domain must sit in its sector's file; ids are unique across files) and returns them sorted by id,
so a seed always means the same choices whatever file a domain is in.

Adding a domain is adding an entry to its sector's file (a new sector also needs its name in
`schema.SECTORS`); the files ship as package data (pyproject's `synth` entry globs `*.json` there).
A domain's niches (`schema.Variant`: its entities renamed, its own title) are listed by domain id
in `variants.json` beside this module, one variant a line; `load_domains` attaches them to their
domains (an unknown domain id is an error) and synth/procedural/ontology/variants.py designs each
as a domain of its own.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from synth.procedural.ontology.schema import SECTORS, Domain, EntityT, FieldT, Transition, parse_field

__all__ = ["load_domains", "read_domain_file", "DOMAINS_DIR", "Domain", "EntityT", "FieldT", "Transition",
           "parse_field", "SECTORS"]

DOMAINS_DIR = Path(__file__).with_name("domains")
VARIANTS_FILE = Path(__file__).with_name("variants.json")


def read_domain_file(path: Path) -> tuple[Domain, ...]:
    """One sector file's domains, in file order; ValueError naming the file (and domain) if any is invalid."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path.name}: not valid JSON ({error})") from None
    if not isinstance(entries, list):
        raise ValueError(f"{path.name}: expected a JSON list of domains, got {type(entries).__name__}")
    domains = []
    for index, entry in enumerate(entries):
        label = repr(entry.get("id")) if isinstance(entry, dict) and "id" in entry else f"#{index + 1}"
        try:
            domain = Domain.model_validate(entry)
        except ValidationError as error:
            problems = _problems(error).removeprefix(f"domain {label}: ")  # the schema's own messages name it too
            raise ValueError(f"{path.name}: domain {label}: {problems}") from None
        if domain.sector != path.stem:
            raise ValueError(f"{path.name}: domain {label} has sector {domain.sector!r}; "
                             f"it belongs in {domain.sector}.json")
        domains.append(domain)
    return tuple(domains)


def _problems(error: ValidationError) -> str:
    """The schema's complaints, one `where: what` each (where: the path inside the domain entry)."""
    lines = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"])
        what = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: {what}" if where else what)
    return "; ".join(lines)


@cache
def load_domains() -> tuple[Domain, ...]:
    """All domains of `DOMAINS_DIR`, sorted by id; ValueError on an invalid file or a duplicate id."""
    found: dict[str, tuple[Domain, str]] = {}
    for path in sorted(DOMAINS_DIR.glob("*.json")):
        for domain in read_domain_file(path):
            if domain.id in found:
                raise ValueError(f"{path.name}: duplicate domain id {domain.id!r} (also in {found[domain.id][1]})")
            found[domain.id] = (domain, path.name)
    for domain_id, variants in _read_variants(VARIANTS_FILE).items():
        if domain_id not in found:
            raise ValueError(f"{VARIANTS_FILE.name}: no domain {domain_id!r} to attach variants to")
        domain, where = found[domain_id]
        try:
            found[domain_id] = (Domain.model_validate({**domain.model_dump(), "variants": variants}), where)
        except ValidationError as error:
            raise ValueError(f"{VARIANTS_FILE.name}: domain {domain_id!r}: {_problems(error)}") from None
    return tuple(found[k][0] for k in sorted(found))


def _read_variants(path: Path) -> dict[str, list[object]]:
    """`{domain id: [variant, ...]}` from `path` (none if it is missing)."""
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path.name}: not valid JSON ({error})") from None
    if not isinstance(entries, dict) or not all(isinstance(v, list) for v in entries.values()):
        raise ValueError(f"{path.name}: expected {{domain id: [variant, ...]}}")
    return entries
