"""Inputs of a property-based simulator audit: (state, action) cases drawn by hypothesis, labelled by execution.

A case's state is an initial state of the env, thinned (each record may be dropped; records
whose foreign keys would dangle are dropped with it, so the state still satisfies the schema),
then moved by a prefix of real calls executed in the sandbox. The action is drawn from the state
the prefix reached: typed, boundary and spec-guided arguments (ids of the collection a parameter
names, values seen in the state), the same generators the env property suite uses
(verifier/gate/typed_values.py, constraints.completeness.CandidateCache).

Why this shape: every draw shrinks toward a smaller input. Dropping a record, an empty prefix,
the first tool, the first id of the state, leaving an optional argument out: so a violation
found on a large state comes back with the one record and the one argument that show it.

Env code runs only in the sandbox (sandbox.pool); executions are cached by (state, actions),
so hypothesis replaying or shrinking an input never runs it twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from catalog.bench.items import BenchItem, env_context, item_id
from catalog.models import Action, Outcome, StepResult, Strata
from catalog.state.delta import Delta
from catalog.state.jsonable import canonical_json
from catalog.store import EnvHandle
from constraints.completeness import CandidateCache
from constraints.spec import ConstraintSpec
from sandbox.pool import Job, JobResult, SandboxPool
from verifier.gate.typed_values import boundary, from_state, param_form, state_keys
from verifier.samples.export import env_doc

__all__ = ["Case", "CaseSource", "MAX_PREFIX", "fk_closed"]

MAX_PREFIX = 3  # calls before the audited one (EnvSimBench steps come from short trajectories)
SOURCE_WEIGHTS = (6, 2, 1, 1)  # an argument from: ids of the collection it names, realistic state values,
# any candidate (generic text, huge numbers), the typed boundary values
_EDGES = [sum(SOURCE_WEIGHTS[: i + 1]) for i in range(len(SOURCE_WEIGHTS))]
KEEP_ODDS = 30  # a record is drawn 0..KEEP_ODDS and dropped at 0 (where shrinking goes): about 1 in 10 when generated


@dataclass(frozen=True)
class Case:
    """One audited input and its executed truth: the state before the call, the call, what execution did."""

    env_id: str
    state_name: str
    dropped: int  # records of the initial state left out
    prefix: list[dict[str, Any]]
    state: dict[str, Any]
    action: Action
    observation: Any
    delta: list[dict[str, Any]]
    next_state: dict[str, Any]
    outcome: str

    @property
    def key(self) -> str:
        """The question's id: the same (env, state, action) always gives the same key (cache and resume key)."""
        return item_id(self.env_id, self.state, self.action)

    @property
    def strata(self) -> Strata:
        return Strata.of(Outcome(self.outcome), len(self.delta), len(self.action.arguments))

    def describe(self) -> dict[str, Any]:
        """How the case was reached (for the report): initial state, dropped records, prefix calls."""
        return {"state_name": self.state_name, "records_dropped": self.dropped, "prefix": self.prefix,
                "records": sum(len(v) for v in self.state.values() if isinstance(v, dict))}


class CaseSource:
    """Draws cases of one env from hypothesis data and labels them by sandboxed execution."""

    def __init__(self, handle: EnvHandle, spec: ConstraintSpec, pool: SandboxPool) -> None:
        self.handle, self.spec, self.pool = handle, spec, pool
        self.id = handle.id
        self.tools = sorted(spec.tools)
        self.forms = {t: {p.name: param_form(p) for p in spec.tools[t].params} for t in self.tools}
        self.initial: dict[str, dict[str, Any]] = {}
        self.load_problems: dict[str, str] = {}
        self.executions = 0
        self._runs: dict[str, JobResult] = {}
        self._context: dict[str, Any] | None = None
        for name in handle.state_names():
            result = pool.run(Job.for_env(handle, [], state_name=name, snapshot=True))
            if result.event or result.initial_state is None:
                self.load_problems[name] = result.event or "no snapshot"
            else:
                self.initial[name] = result.initial_state

    # --- what simulators are shown ----------------------------------------------------------------
    def question(self, state: dict[str, Any], action: Action) -> BenchItem:
        """The item a simulator answers: env context, state and action, with no executed answer in it.

        The answer fields hold placeholders (no observation, no change), so no simulator can read the
        truth off the item.
        """
        if self._context is None:
            self._context = {**env_context(self.handle.manifest), "env_code": self.handle.source(),
                             "env_doc": env_doc(self.handle)}
        return BenchItem(id=item_id(self.id, state, action), env_id=self.id, **self._context, state=state,
                         action=action, observation=None, next_state=state, delta=[],
                         strata=Strata.of(Outcome.SUCCESS, 0, len(action.arguments)), task="")

    def sample(self, case: Case) -> BenchItem:
        """The case as a verified benchmark item (what `bench export --from-audit` writes)."""
        item = self.question(case.state, case.action)
        return item.model_copy(update={"observation": case.observation, "next_state": case.next_state,
                                       "delta": case.delta, "strata": case.strata})

    # --- drawing ------------------------------------------------------------------------------------
    def draw(self, data: st.DataObject) -> Case | None:
        """Draw one case; None when it cannot be labelled (a crash, an invalid call, a sandbox event)."""
        if not self.initial:
            return None
        name = data.draw(st.sampled_from(sorted(self.initial)))
        state, dropped = self.thin(self.initial[name], data)
        prefix = [self.action(state, data).model_dump(mode="json")
                  for _ in range(data.draw(st.integers(0, MAX_PREFIX)))]
        if prefix:
            calls = self.execute(state, prefix)
            if calls is None or calls[-1].state is None:
                return None
            state = calls[-1].state
        action = self.action(state, data)
        calls = self.execute(state, [action.model_dump(mode="json")])
        after = calls[0].state if calls else None
        if calls is None or after is None:
            return None
        call = calls[0]
        return Case(self.id, name, dropped, prefix, state, action, call.observation,
                    Delta.dump_python(call.delta, mode="json"), after, call.outcome.value)

    def thin(self, state: dict[str, Any], data: st.DataObject) -> tuple[dict[str, Any], int]:
        """Drop drawn records of SQL tables, then every record whose foreign key would dangle."""
        if self.spec.kind != "sql":
            return state, 0
        tables = sorted(t for t in self.spec.tables if isinstance(state.get(t), dict))
        keys = [(t, k) for t in tables for k in sorted(state[t])]
        odds = data.draw(st.lists(st.integers(0, KEEP_ODDS), min_size=len(keys), max_size=len(keys)))
        keep: dict[str, dict[str, Any]] = {t: {} for t in tables}
        for (table, key), odd in zip(keys, odds, strict=True):
            if odd:  # 0, where shrinking goes, drops the record
                keep[table][key] = state[table][key]
        thinned = {**state, **fk_closed(self.spec, keep)}
        dropped = sum(len(state[t]) - len(thinned[t]) for t in keep)
        return thinned, dropped

    def action(self, state: dict[str, Any], data: st.DataObject) -> Action:
        """A call on `state`: a tool, then per parameter an id it names, a value of the state or a boundary value.

        Ids come first and weigh most (calls that reach the tool's logic, not only its not-found guard);
        shrinking goes to the first tool, the first id, optional arguments left out.
        """
        tool = data.draw(st.sampled_from(self.tools))
        arguments: dict[str, Any] = {}
        candidates = CandidateCache()  # per state: its key is the state's id(), which a later state may reuse
        for param in self.spec.tools[tool].params:
            if not param.required and not data.draw(st.booleans()):
                continue
            form = self.forms[tool][param.name]
            options, realistic_values = candidates.get(param, state)
            sources = [from_state(form, state_keys(param.name, state)), from_state(form, realistic_values),
                       from_state(form, options), boundary(param, form)]
            pick = data.draw(st.integers(0, sum(SOURCE_WEIGHTS) - 1))  # shrinks to 0: an id of the state
            for strategy in sources[next(i for i, edge in enumerate(_EDGES) if pick < edge):]:
                if strategy is not None:
                    arguments[param.name] = data.draw(strategy)
                    break
        return Action(name=tool, arguments=arguments)

    # --- execution ----------------------------------------------------------------------------------
    def execute(self, state: dict[str, Any], actions: list[dict[str, Any]]) -> list[StepResult] | None:
        """Run `actions` from `state` in the sandbox (cached); None unless every call succeeded or failed by a rule."""
        text = canonical_json([state, actions])
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if key not in self._runs:
            self.executions += 1
            self._runs[key] = self.pool.run(Job.for_env(self.handle, actions, state=state, snapshot=True))
        result = self._runs[key]
        if result.event or len(result.calls) != len(actions):
            return None
        if any(c.event is not None or c.outcome not in (Outcome.SUCCESS.value, Outcome.FAILURE.value)
               for c in result.calls):
            return None
        return result.calls


def fk_closed(spec: ConstraintSpec, tables: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Remove, until none is left, rows whose non-null foreign key names a row that is not there.

    >>> spec = ConstraintSpec.model_validate({"kind": "sql", "entry": "E", "tables": {
    ...     "members": {"name": "members", "columns": {"id": {"foreign_key": None}}},
    ...     "loans": {"name": "loans", "columns": {"member_id": {"foreign_key": "members.id"}}}}})
    >>> fk_closed(spec, {"members": {}, "loans": {"L1": {"member_id": "M1"}, "L2": {"member_id": None}}})
    {'members': {}, 'loans': {'L2': {'member_id': None}}}
    """
    rows = {table: dict(records) for table, records in tables.items()}
    changed = True
    while changed:
        changed = False
        for table, schema in spec.tables.items():
            if table not in rows:
                continue
            for column, info in schema.columns.items():
                target = (info.foreign_key or "").split(".")[0]
                if not target or target not in rows:
                    continue
                for key, record in list(rows[table].items()):
                    value = record.get(column) if isinstance(record, dict) else None
                    if value is not None and str(value) not in rows[target]:
                        del rows[table][key]
                        changed = True
    return rows
