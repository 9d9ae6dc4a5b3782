"""Where an audit earned a simulator trust: strict CM per cell (env, tool, stratum), read from an `audit-sim` folder.

A hybrid env (synth/rollout/hybrid.py) lets a simulator answer a step alone only where its audit
measured it right. The unit of that decision is a *cell*: the env, the tool called, and the
stratum the step falls in (`failure`, `read`, or a write's |Δ| band `write 1-2` ... `write 13+`:
the ladder's bands, catalog.bench.strata). An audit sample's cell comes from its executed strata; a
step's, before it runs, from the constraint spec (`predicted_stratum`: the spec interpreter on the
state and the call), so the env need not execute to know which cell it is in.

The folder is untrusted input: `audit.json` must name the simulator the run uses (model and
mode), and every `results.jsonl` record must validate as an `AuditRecord` (its item a
`BenchItem`), else one `TrustError` line. A record counts only where it matches the catalog: its
env exists, its code is the catalog env's code as it is now (an audit of another version says
nothing about this one) and it calls one of the env's tools; the rest are counted as foreign
and give no trust. A folder with no record that matches is refused.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from catalog.bench.strata import rung_of
from catalog.errors import EnvforgeError
from catalog.jsonmodel import JsonModel
from catalog.models import Action, Outcome
from catalog.names import is_name
from catalog.runs.journal import json_lines, read_session
from catalog.store import Catalog, CatalogError
from constraints.simulate import SpecSimulator
from constraints.spec import ConstraintSpec
from verifier.audit.results import META_FILE, RESULTS_FILE, AuditRecord

__all__ = ["CellStats", "TrustError", "TrustPolicy", "TrustTable", "cell_name", "predicted_stratum",
           "stratum_of"]


class TrustError(ValueError, EnvforgeError):
    """The audit folder cannot be trusted as asked: missing, malformed, of another simulator, or of other envs."""


class TrustPolicy(JsonModel):
    """When a cell's audit earns trust, and how often a trusted step is checked by execution anyway."""

    model_config = ConfigDict(frozen=True)

    min_cm: float = Field(0.9, ge=0.0, le=1.0)
    min_samples: int = Field(5, ge=1)
    spot_check: float = Field(0.1, ge=0.0, le=1.0)


class CellStats(JsonModel):
    """One cell's audited samples and its measured rates."""

    samples: int
    cm_strict: float
    fm: float


def stratum_of(outcome: str, delta_size: int) -> str:
    """A step's trust stratum: `failure`, `read` (no change) or `write <|Δ| band>`.

    >>> [stratum_of("success", n) for n in (0, 1, 4, 13)] + [stratum_of("failure", 2)]
    ['read', 'write 1-2', 'write 3-6', 'write 13+', 'failure']
    """
    step = rung_of(outcome, delta_size, 0)
    return "failure" if step.outcome == "failure" else "read" if step.band == "0" else f"write {step.band}"


def cell_name(tool: str, stratum: str) -> str:
    """How a cell of one env reads in trajectories and reports: `tool/stratum`."""
    return f"{tool}/{stratum}"


def predicted_stratum(spec: ConstraintSpec, state: dict[str, Any], action: Action) -> tuple[str | None, str]:
    """The stratum the spec predicts for `action` on `state` (None where it cannot say), and why not.

    Invalid or crashing calls have no stratum (audits sample successes and failures only). A state
    the spec's interpreter cannot read (a simulator's prediction, in a hybrid run) has none either.
    """
    try:
        prediction = SpecSimulator(spec).predict(state, action)
    except Exception as exc:  # noqa: BLE001 - a state a simulator predicted may not be one the spec can read
        return None, f"the spec cannot read the state ({type(exc).__name__}: {exc})"
    if prediction.abstained:
        return None, f"the spec cannot predict the stratum ({prediction.reason})"
    if prediction.outcome not in (Outcome.SUCCESS, Outcome.FAILURE):
        return None, f"the spec predicts an {prediction.outcome} call"
    return stratum_of(str(prediction.outcome), len(prediction.delta)), ""


class TrustTable:
    """The audited cells of one simulator over the catalog's envs, and the verdict for a cell."""

    def __init__(self, folder: Path, simulator: str, mode: str, cells: dict[tuple[str, str, str], CellStats],
                 foreign: Counter[str]) -> None:
        self.folder, self.simulator, self.mode, self.cells, self.foreign = folder, simulator, mode, cells, foreign

    @classmethod
    def load(cls, folder: Path | str, catalog: Catalog, *, simulator: str, mode: str) -> TrustTable:
        """Read and validate an `audit-sim` folder of `simulator` (its `mode`); raises TrustError in one line."""
        folder = Path(folder)
        meta, results = folder / META_FILE, folder / RESULTS_FILE
        if not folder.is_dir() or not meta.is_file() or not results.is_file():
            raise TrustError(f"--trust {folder}: not an audit-sim folder (it needs {META_FILE} and {RESULTS_FILE})")
        session = read_session(meta)
        if (session.get("model"), session.get("mode")) != (simulator, mode):
            raise TrustError(f"--trust {folder}: an audit of {session.get('model')!r} ({session.get('mode')}), "
                             f"not of the simulator {simulator!r} ({mode})")
        records: dict[str, AuditRecord] = {}
        try:
            for number, line in enumerate(json_lines(results), 1):
                record = AuditRecord.model_validate(line)
                if (record.model, record.mode) != (simulator, mode):
                    raise TrustError(f"--trust {folder}: {RESULTS_FILE} line {number} is an answer of "
                                     f"{record.model!r} ({record.mode}), not of {simulator!r} ({mode})")
                records[record.id] = record  # the last answer of an id wins, as the audit's report reads it
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise TrustError(f"--trust {folder}: {RESULTS_FILE} line {number} is not an audit record "
                             f"({where}: {first['msg']})") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TrustError(f"--trust {folder}: {RESULTS_FILE} cannot be read: {exc}") from None
        table = cls._tabulate(folder, simulator, mode, records.values(), catalog)
        if not table.cells:
            seen = ", ".join(f"{why} ({n})" for why, n in table.foreign.most_common(3)) or "no records"
            raise TrustError(f"--trust {folder}: no audited sample matches this catalog's envs: {seen}")
        return table

    @classmethod
    def _tabulate(cls, folder: Path, simulator: str, mode: str, records: Any, catalog: Catalog) -> TrustTable:
        foreign: Counter[str] = Counter()
        scores: dict[tuple[str, str, str], list[AuditRecord]] = {}
        envs: dict[str, tuple[str, set[str]] | None] = {}
        for record in records:
            item = record.item
            if item.env_id not in envs:
                envs[item.env_id] = _env_of(catalog, item.env_id)
            env = envs[item.env_id]
            if env is None:
                foreign["env not in the catalog"] += 1
            elif item.env_code != env[0]:
                foreign["env code differs from the catalog's"] += 1
            elif item.action.name not in env[1]:
                foreign["tool not in the env"] += 1
            else:
                key = (item.env_id, item.action.name, stratum_of(item.strata.outcome, item.strata.delta_size))
                scores.setdefault(key, []).append(record)
        cells = {key: CellStats(samples=len(rs), cm_strict=round(sum(r.cm_strict for r in rs) / len(rs), 4),
                                fm=round(sum(r.fm for r in rs) / len(rs), 4))
                 for key, rs in sorted(scores.items())}
        return cls(folder, simulator, mode, cells, foreign)

    def verdict(self, env_id: str, tool: str, stratum: str, policy: TrustPolicy) -> tuple[bool, str]:
        """Whether the cell's audit earns trust under `policy`, and the reason in a few words."""
        stats = self.cells.get((env_id, tool, stratum))
        if stats is None:
            return False, "untrusted: not audited"
        if stats.samples < policy.min_samples:
            return False, f"untrusted: {stats.samples} audited < {policy.min_samples}"
        if stats.cm_strict < policy.min_cm:
            return False, f"untrusted: strict CM {stats.cm_strict:.2f} < {policy.min_cm}"
        return True, "trusted"

    def summary(self, policy: TrustPolicy) -> dict[str, Any]:
        """What the report says of the audit: its folder, the policy, the cells audited and trusted, the foreign records."""
        trusted = sorted(f"{env}: {cell_name(tool, stratum)}" for (env, tool, stratum) in self.cells
                         if self.verdict(env, tool, stratum, policy)[0])
        return {"audit": str(self.folder), "simulator": self.simulator, "mode": self.mode,
                **policy.model_dump(mode="json"), "cells_audited": len(self.cells), "cells_trusted": len(trusted),
                "trusted_cells": trusted, "foreign_records": dict(self.foreign.most_common())}


def _env_of(catalog: Catalog, env_id: str) -> tuple[str, set[str]] | None:
    """The catalog env's code and tool names, or None when the catalog has no such env (ids are untrusted)."""
    if not is_name(env_id):
        return None
    try:
        handle = catalog.get(env_id)
    except CatalogError:
        return None
    return handle.source(), {t.name for t in handle.manifest.tools}
