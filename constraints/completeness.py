"""How complete is an extracted spec? Run the env for real and compare the spec-only simulator.

Calls are generated from the spec and the initial states: every tool with values drawn from the
states (ids of the collection a parameter names, values of fields of the same name, enum values,
shifted timestamps), boundary values (empty strings, zero, negatives, huge numbers, unknown ids,
None for optional parameters), and, for guards not yet seen to fire, short sequences whose first
calls change the state (e.g. suspend a member, then renew one of their loans). Every executed
call is a step: the spec-only simulator predicts it from the state before the call and the
prediction is compared with execution.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from catalog.models import Action, Outcome, StepResult
from catalog.state.codec import readable
from catalog.state.delta import Delta
from catalog.state.jsonable import json_equal
from catalog.store import EnvHandle
from constraints.extract import extract_spec, template_regex
from constraints.normalize import env_modules
from constraints.report import CompletenessReport
from constraints.simulate import SpecSimulator
from constraints.spec import ConstraintSpec, Param

__all__ = ["spec_of", "completeness", "candidates", "state_ids", "seeded_calls", "CandidateCache", "CompletenessRun", "CallRunner",
           "InProcessCallRunner"]

TEXT = ["", "   ", "x", "Regular text, with ünïcode ✓", "unknown-id"]
INTEGERS = [0, 1, 2, 3, 5, 6, 7, -1, 10, 14, 28, 30, 45, 60, 91, 10**12]
NUMBERS = [0.0, -5.0, 0.5, 1.0, 10.123, 20.0, 100.0, 1e9]
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}|$)")
STATE_IDS = 64  # ids taken from anywhere in a class env's state, per state (state_ids)
ID_TYPES = ("string", "integer", None)  # the parameter types an id can have (None: no annotation)


def spec_of(handle: EnvHandle) -> ConstraintSpec:
    """Extract the constraint spec of a catalog env from its source (no import)."""
    manifest = handle.manifest
    convention = manifest.convention or "class"
    return extract_spec(handle.source(), manifest.kind, manifest.entry,
                        failure_exceptions=manifest.failure_exceptions, convention=convention,
                        modules=env_modules(handle.path) if convention != "class" else None)


def _shifted(value: str) -> list[str]:
    if len(value) == 10:
        try:
            day = dt.date.fromisoformat(value)
        except ValueError:
            return []
        return [(day + dt.timedelta(days=d)).isoformat() for d in (1, -1, 365 * 100)]
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return []
    shifts = [dt.timedelta(hours=1), dt.timedelta(days=1), dt.timedelta(days=-1), dt.timedelta(days=2),
              dt.timedelta(days=7), dt.timedelta(minutes=5), dt.timedelta(hours=26), dt.timedelta(days=5)]
    out = [(moment + s).isoformat() for s in shifts]
    out += [moment.replace(hour=7, minute=0).isoformat(), moment.replace(hour=17, minute=45).isoformat(),
            moment.date().isoformat()]
    return out


def _singular(plural: str) -> str:
    """'families' -> 'family', 'boxes' -> 'box', 'rental_kits' -> 'rental_kit' (enough for collection names)."""
    if plural.endswith("ies"):
        return plural[:-3] + "y"
    if plural.endswith(("ses", "xes", "ches", "shes")):
        return plural[:-2]
    return plural[:-1] if plural.endswith("s") else plural


def _names_collection(name: str, collection_name: str) -> bool:
    """Whether a parameter's name names a collection of the state (`product_id` -> `products`)."""
    full = re.sub(r"_(id|code|key)$", "", name)
    stem = full.split("_")[-1]
    return bool(stem) and (collection_name.startswith((stem, full)) or _singular(collection_name) in (full, stem))


def names_a_collection(param: Param, state: dict[str, Any]) -> bool:
    """Whether the parameter's name names a collection the state holds (its ids are then offered by name)."""
    return any(isinstance(c, dict) and _names_collection(param.name, n) for n, c in state.items())


def state_ids(state: dict[str, Any], seed: int = 0, limit: int = STATE_IDS) -> list[Any]:
    """Keys and short scalar values found anywhere in a state: the ids a call may need to reach a write.

    A cache filled by a successful lookup, a cursor moved by a valid `cd`: the id that reaches it may
    sit deep in an object graph, under a name no parameter shares. Read from the plain view of the
    state (catalog.state.codec.readable), in the state's order; past `limit`, a sample drawn from
    `seed` (the same state and seed give the same ids). Digit strings (the keys of int-keyed dicts)
    come with their int too.
    """
    found: list[Any] = []
    seen: set[tuple[type, Any]] = set()

    def add(value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str) and not 0 < len(value) <= 64):
            return
        for item in (value, int(value)) if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value) else (value,):
            if (type(item), item) not in seen:
                seen.add((type(item), item))
                found.append(item)

    def visit(value: Any, depth: int) -> None:
        if depth > 12 or len(found) > 50 * limit:
            return
        if isinstance(value, dict):
            for key, inner in value.items():
                add(key)
                visit(inner, depth + 1)
        elif isinstance(value, list):
            for inner in value[:200]:
                visit(inner, depth + 1)
        else:
            add(value)

    visit(readable(state), 0)
    if len(found) <= limit:
        return found
    chosen = sorted(random.Random(seed).sample(range(len(found)), limit))
    return [found[i] for i in chosen]


def seeded_calls(spec: ConstraintSpec, states: dict[str, dict[str, Any]], seed: int,
                 per_tool: int) -> list[tuple[str, Action]]:
    """Calls of a class env's tools whose id parameters take ids from anywhere in the state (`state_ids`).

    For each state and each tool with a parameter of an id type that names no collection (`cd(folder)`,
    `lookup(callsign)`): up to `per_tool` calls, each such parameter an id of the state, the others
    the first realistic candidate. Drawn from `seed` alone, so they come on top of a search's own
    draws without moving them. None for SQL envs (their ids are found by name).
    """
    if spec.kind != "class":
        return []
    rng = random.Random(seed)
    calls: list[tuple[str, Action]] = []
    for state_name in sorted(states):
        state = states[state_name]
        ids = state_ids(state, seed)
        for tool in sorted(spec.tools):
            params = spec.tools[tool].params
            open_params = [p for p in params if p.json_type in ID_TYPES and not names_a_collection(p, state)]
            if not open_params:
                continue
            for _ in range(per_tool):
                arguments: dict[str, Any] = {}
                for param in params:
                    fitting = [v for v in ids if _fits(param, v)] if param in open_params else []
                    if fitting:
                        arguments[param.name] = rng.choice(fitting)
                    elif param.required:
                        arguments[param.name] = rng.choice(_realistic(candidates(param, state)))
                calls.append((state_name, Action(name=tool, arguments=arguments)))
    return calls


def _realistic(options: list[Any]) -> list[Any]:
    """The candidates without the generic text and the huge numbers (all of them if nothing else is left)."""
    return [o for o in options if o not in TEXT and o not in INTEGERS[-1:] and o not in NUMBERS[-1:]] or options


def candidates(param: Param, state: dict[str, Any]) -> list[Any]:
    """Values worth trying for a parameter on a state: from the state first, then boundary values."""
    name = param.name
    values: list[Any] = list(param.enum or [])
    for collection_name, collection in state.items():
        if not isinstance(collection, dict):
            continue
        if _names_collection(name, collection_name):
            values.extend(collection)
        for record in collection.values():
            if not isinstance(record, dict):
                continue
            for field, value in record.items():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool) and \
                        (field == name or (len(field) >= 3 and name.endswith(field))):
                    values.append(value)
    for value in list(values):
        if isinstance(value, str) and ISO.match(value):
            values.extend(_shifted(value))
    kind = param.json_type
    if kind == "string":
        values = [v for v in values if isinstance(v, str)] + TEXT
    elif kind == "integer":
        values = [v for v in values if isinstance(v, int) and not isinstance(v, bool)] + INTEGERS
    elif kind == "number":
        values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)] + NUMBERS
    elif kind == "boolean":
        values = [True, False]
    else:
        values += TEXT[:3] + [0, 1]
    if param.nullable or not param.json_type:
        values.append(None)
    unique: list[Any] = []
    for value in values:
        if not any(type(value) is type(u) and value == u for u in unique):
            unique.append(value)
    return unique


def _fits(param: Param, value: Any) -> bool:
    """Whether a value is well-typed for a parameter (generated calls stay well-typed)."""
    kind = param.json_type
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


class CandidateCache:
    """Candidate values per (state, parameter), computed once: drawing them scans the whole state."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, ...], tuple[list[Any], list[Any]]] = {}

    def get(self, param: Param, state: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        """(all candidates, the realistic ones: without the generic text and the huge numbers)."""
        key = (id(state), param.name, param.json_type, param.nullable, tuple(param.enum or ()))  # same name, other type
        if key not in self._cache:
            options = candidates(param, state)
            self._cache[key] = (options, _realistic(options))
        return self._cache[key]


class CallRunner(Protocol):
    """Runs actions from an initial state.

    Returns the state before them and a result per action, each with its full state (the
    spec-only simulator predicts every step from the one before): a class env's hidden
    attributes included, since its tools read them as the runtime does.
    """

    def __call__(self, state_name: str, state: dict[str, Any], actions: list[Action]) -> tuple[dict[str, Any], list[StepResult]]: ...


class InProcessCallRunner:
    """Runs env code in this process: reference envs, or code the caller vouches for (`trusted`).

    A class env's states come with its hidden attributes (a cursor, a cache), as the sandbox's
    runner gives them: the simulator is handed the whole state the runtime has.
    """

    def __init__(self, handle: EnvHandle, *, trusted: bool = False) -> None:
        self.runtime = handle.runtime(trusted=trusted)
        self.hidden = handle.manifest.kind == "class"

    def __call__(self, state_name: str, state: dict[str, Any], actions: list[Action]) -> tuple[dict[str, Any], list[StepResult]]:
        self.runtime.reset(state)
        initial = self.runtime.snapshot(hidden=self.hidden)
        steps = []
        for action in actions:
            step = self.runtime.call(action, snapshot=True)
            if self.hidden:
                step.state = self.runtime.snapshot(hidden=True)
            steps.append(step)
        return initial, steps


class CompletenessRun:
    """Executes generated calls and scores the spec-only simulator against them."""

    def __init__(self, handle: EnvHandle, *, seed: int = 0, calls_per_tool: int = 12, search_budget: int = 3000,
                 runner: CallRunner | None = None, simulator: Any = None, spec: ConstraintSpec | None = None,
                 states: dict[str, dict[str, Any]] | None = None,
                 progress: Callable[[int, int], None] | None = None) -> None:
        """Without `runner`, calls run in-process (trusted envs only), loaded at the first call.

        `spec` and `states` (the env's initial states by name) skip extracting and reading them
        again when the caller has them already. `progress(sequences run, at most in all)` is told
        after each call sequence (the search stops early once every guard has fired).
        """
        self.progress = progress
        self.sequences = 0
        self.handle = handle
        self.spec = spec if spec is not None else spec_of(handle)
        # imported envs run ill-typed calls as Python would (strict_args False): so does the simulator
        self.simulator = simulator or SpecSimulator(self.spec, strict_args=handle.manifest.strict_args)
        self._runner = runner
        self.rng = random.Random(seed)
        self.seed = seed  # seeded_calls draw from it alone
        self.calls_per_tool = calls_per_tool
        self.search_budget = search_budget
        self.states = states if states is not None else {name: handle.state(name) for name in handle.state_names()}
        self.candidates = CandidateCache()
        self.counts: Counter[str] = Counter()
        self.abstain_reasons: Counter[str] = Counter()
        self.wrong_examples: list[dict[str, Any]] = []
        self.triggered: set[tuple[str, int]] = set()
        self.successful_writes: dict[str, list[Action]] = {name: [] for name in self.states}
        # A guard is a place in the code: one in a helper shared by several tools counts once.
        self.guards = self.spec.guards()
        self.guard_tools: dict[tuple[str, int], set[str]] = {}
        for tool, entry in self.spec.tools.items():
            for p in entry.preconditions:
                self.guard_tools.setdefault(p.place(tool), set()).add(tool)

    # --- generation -----------------------------------------------------------------------
    def arguments(self, tool: str, state: dict[str, Any], boundary: bool) -> dict[str, Any]:
        """Draw arguments for one call.

        Half the time several come from one record (a doctor and a time of the same
        appointment), since guards such as overlaps need values that belong together.
        """
        arguments: dict[str, Any] = {}
        together = self._record_values(state) if self.rng.random() < 0.5 else {}
        for param in self.spec.tools[tool].params:
            if not param.required and self.rng.random() < 0.4:
                continue
            if param.name in together and self.rng.random() < 0.8 and _fits(param, together[param.name]):
                arguments[param.name] = together[param.name]
                continue
            options, realistic = self.candidates.get(param, state)
            arguments[param.name] = self.rng.choice(options if boundary else realistic)
        return arguments

    def _record_values(self, state: dict[str, Any]) -> dict[str, Any]:
        """Parameter values taken from one random record: its fields and its key as `<stem>_id`."""
        collections = [(name, c) for name, c in sorted(state.items()) if isinstance(c, dict) and c]
        if not collections:
            return {}
        name, collection = self.rng.choice(collections)
        key = self.rng.choice(sorted(collection))
        record = collection[key]
        values: dict[str, Any] = {}
        stem = _singular(name)
        for param in {p.name for t in self.spec.tools.values() for p in t.params}:
            if param in (f"{stem}_id", f"{stem}_code", stem):
                values[param] = key
            elif isinstance(record, dict):
                for field, value in record.items():
                    if value is not None and (field == param or (len(field) >= 3 and param.endswith(field))):
                        values[param] = value
        return values

    def run(self) -> CompletenessReport:
        tools = sorted(self.spec.tools)
        for state_name in sorted(self.states):
            for tool in tools:
                for index in range(self.calls_per_tool):
                    action = Action(name=tool, arguments=self.arguments(tool, self.states[state_name], index % 3 == 2))
                    self.sequence(state_name, [action])
        self.search(self.search_budget)
        for state_name, action in seeded_calls(self.spec, self.states, self.seed, self.calls_per_tool):
            self.sequence(state_name, [action])
        return self.report()

    def search(self, budget: int) -> None:
        """Up to `budget` more sequences aimed at the tools of guards not seen to fire yet (none once all have)."""
        for _ in range(budget):
            missing = [key for key in self.guards if key not in self.triggered]
            if not missing:
                break
            tool = self.rng.choice(sorted({t for key in missing for t in self.guard_tools[key]}))
            state_name = self.rng.choice(sorted(self.states))
            pool = self.successful_writes[state_name]
            prefix = self.rng.sample(pool, k=min(len(pool), self.rng.randint(0, 3)))
            action = Action(name=tool, arguments=self.arguments(tool, self.states[state_name], self.rng.random() < 0.3))
            self.sequence(state_name, [*prefix, action])

    # --- evaluation -------------------------------------------------------------------------
    def planned(self) -> int:
        """Call sequences `run` runs at most: the calls per tool, then the search's budget."""
        return len(self.states) * len(self.spec.tools) * self.calls_per_tool + self.search_budget

    def sequence(self, state_name: str, actions: list[Action]) -> None:
        if self._runner is None:
            self._runner = InProcessCallRunner(self.handle)
        before, steps = self._runner(state_name, self.states[state_name], actions)
        self.sequences += 1
        if self.progress is not None:
            self.progress(self.sequences, self.planned())
        for position, (action, result) in enumerate(zip(actions, steps, strict=False)):
            prediction = self.simulator.predict(before, action)
            if result.state is None:
                raise RuntimeError(f"the call runner returned {action.name}'s result without the state after it")
            before = result.state
            self.counts["steps"] += 1
            if prediction.abstained:
                self.counts["abstained"] += 1
                self.abstain_reasons[prediction.reason or "?"] += 1
            elif json_equal(prediction.observation, result.observation) and prediction.delta == result.delta:
                self.counts["exact"] += 1
            else:
                self.counts["wrong"] += 1
                if len(self.wrong_examples) < 5:
                    self.wrong_examples.append({
                        "state": state_name, "action": action.model_dump(), "predicted": prediction.observation,
                        "observed": result.observation, "predicted_delta": Delta.dump_python(prediction.delta, mode="json"),
                        "observed_delta": Delta.dump_python(result.delta, mode="json")})
            if result.outcome is Outcome.FAILURE:
                self.failure(action, result.observation, prediction)
            elif result.outcome is Outcome.SUCCESS and result.delta and position == len(actions) - 1:
                self._remember(state_name, action)
            if result.outcome is Outcome.CRASH:
                self.counts["crashes"] += 1

    def _remember(self, state_name: str, action: Action) -> None:
        """Keep a bounded, varied pool of state-changing calls to use as prefixes (reservoir)."""
        pool = self.successful_writes[state_name]
        self.counts[f"writes:{state_name}"] += 1
        if action in pool:
            return
        if len(pool) < 40:
            pool.append(action)
        else:
            slot = self.rng.randrange(self.counts[f"writes:{state_name}"])
            if slot < len(pool):
                pool[slot] = action

    def failure(self, action: Action, observation: Any, prediction: Any) -> None:
        self.counts["failures"] += 1
        tool = self.spec.tools[action.name]
        message = observation.get("error") if isinstance(observation, dict) else None
        explaining = [p for p in tool.preconditions if not p.message.opaque
                      and isinstance(message, str) and template_regex(p.message.template).fullmatch(message)]
        if explaining:
            self.counts["failures_explained"] += 1
        fired = set(prediction.fired) if not prediction.abstained else set()
        by_trace = [p for p in tool.preconditions if p.place(action.name) in fired]
        for precondition in by_trace or explaining:
            self.triggered.add(precondition.place(action.name))

    def report(self) -> CompletenessReport:
        steps = self.counts["steps"]
        untriggered = [f"{where} line {line}: {self.guards[(where, line)].condition.source}"
                       for where, line in sorted(self.guards) if (where, line) not in self.triggered]
        return CompletenessReport(
            env=self.handle.id, kind=self.spec.kind, steps=steps, exact=self.counts["exact"],
            abstained=self.counts["abstained"], wrong=self.counts["wrong"],
            exact_rate=round(self.counts["exact"] / steps, 4) if steps else 0.0,
            guards_total=len(self.guards), guards_triggered=len(self.guards) - len(untriggered),
            failures=self.counts["failures"], failures_explained=self.counts["failures_explained"],
            crashes=self.counts["crashes"],
            untriggered_guards=untriggered,
            top_abstain_reasons=dict(self.abstain_reasons.most_common(5)),
            sandbox_events=dict(Counter(getattr(self._runner, "events", [])).most_common(5)),
            wrong_examples=self.wrong_examples,
        )


def completeness(handle: EnvHandle, *, seed: int = 0, runner: CallRunner | None = None,
                 progress: Callable[[int, int], None] | None = None) -> CompletenessReport:
    """Run the completeness measurement of one env (deterministic for a seed).

    Without a runner the env's code runs in this process: pass a sandboxed one
    (sandbox.calls.SandboxCallRunner) for code you do not trust. `progress`: see `CompletenessRun`.
    """
    return CompletenessRun(handle, seed=seed, runner=runner, progress=progress).run()
