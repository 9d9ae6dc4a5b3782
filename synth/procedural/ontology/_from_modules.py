"""One-off: write the domain modules' `DOMAINS` literals as one JSON file per sector (issue 25).

Each module is run with `Domain` standing in as a recorder of its keyword arguments, so the JSON
holds exactly what the author wrote (field shorthand, transition maps, constants filled in), and
nothing is retyped. The script checks that every file loads back to the same `Domain`s.
"""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path
from typing import Any
from unittest import mock

from synth.procedural.ontology import schema

HERE = Path(__file__).parent
WIDTH = 120


def _recorded() -> list[dict[str, Any]]:
    """Every module's DOMAINS, as the keyword arguments its Domain(...) calls received."""
    raw: list[dict[str, Any]] = []
    for info in sorted(pkgutil.iter_modules([str(HERE / "domains")]), key=lambda i: i.name):
        source = (HERE / "domains" / f"{info.name}.py").read_text()
        namespace: dict[str, Any] = {}
        with mock.patch.object(schema, "Domain", lambda **kwargs: kwargs):
            exec(compile(source, info.name, "exec"), namespace)  # noqa: S102 - the repo's own modules
        raw.extend(namespace["DOMAINS"])
    return raw


def _render(value: Any, indent: int, column: int = 0) -> str:
    """JSON with scalar lists and maps on one line when they fit (at `column`), else one item a line."""
    flat = json.dumps(value, ensure_ascii=False)
    scalar = isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value) or (
        isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()))
    if not isinstance(value, (dict, list)) or (scalar and column + len(flat) <= WIDTH):
        return flat
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, list):
        items = [inner + _render(v, indent + 2, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    items = [f"{inner}{json.dumps(k)}: {_render(v, indent + 2, indent + len(json.dumps(k)) + 4)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def main() -> None:
    by_sector: dict[str, list[dict[str, Any]]] = {}
    for domain in _recorded():
        by_sector.setdefault(domain["sector"], []).append(domain)
    for sector, domains in sorted(by_sector.items()):
        text = _render(domains, 0) + "\n"
        assert json.loads(text) == domains, sector
        (HERE / "domains" / f"{sector}.json").write_text(text)
        for written, original in zip(json.loads(text), domains, strict=True):
            assert schema.Domain(**written) == schema.Domain(**original), written["id"]
    print(f"{sum(map(len, by_sector.values()))} domains in {len(by_sector)} files")


if __name__ == "__main__":
    main()
