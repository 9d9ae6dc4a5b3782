"""The model table `python cli.py models` shows: each registry entry and whether its endpoint answers."""

from __future__ import annotations

from catalog.jsonmodel import JsonModel
from synth.llm.client import probe
from synth.llm.registry import Registry

__all__ = ["ModelRow", "model_rows", "render_models"]


class ModelRow(JsonModel):
    """One registry entry as listed (`models --json` prints its `model_dump()`); `reachable` None: not probed."""

    name: str
    base_url: str
    model: str
    price_in_per_m: int | float  # as the registry file wrote it (an int stays an int)
    price_out_per_m: int | float
    json_schema: bool
    reachable: bool | None
    detail: str


def model_rows(registry: Registry, *, probe_endpoints: bool = True, timeout: float = 2.0) -> list[ModelRow]:
    """A row per registry entry, probing each endpoint unless `probe_endpoints` is False."""
    rows = []
    for spec in registry.values():
        found = probe(spec, registry=registry, timeout=timeout) if probe_endpoints else {}
        rows.append(ModelRow(name=spec.name, base_url=spec.base_url or "(embedded)", model=spec.model,
                             price_in_per_m=spec.price_in, price_out_per_m=spec.price_out,
                             json_schema=spec.json_schema, reachable=found.get("reachable"),
                             detail=found.get("detail", "")))
    return rows


def render_models(rows: list[ModelRow]) -> str:
    """One line per model: name, up/down/- (not probed), address, prices, JSON-schema support, detail."""
    lines = []
    for row in rows:
        state = "-" if row.reachable is None else ("up" if row.reachable else "down")
        lines.append(f"{row.name:<16} {state:<5} {row.base_url:<34} in ${row.price_in_per_m}/M out "
                     f"${row.price_out_per_m}/M json_schema={row.json_schema}  {row.detail}")
    return "\n".join(lines)
