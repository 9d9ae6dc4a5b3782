"""Generic properties every environment must have, checked by hypothesis in the sandbox.

Calls are drawn from the constraint spec (parameter types, enum values) and the initial states
(ids of the collection a parameter names, values of same-named fields), with boundary values
(empty and unicode strings, zero, negatives, huge numbers, unknown ids, None where a parameter
is nullable), in sequences of one to three calls. Every drawn argument is well-typed by the
tool's own annotations (verifier/gate/typed_values.py), so a crash is a promise the code broke, not a
call it never accepted. Each property is searched with `hypothesis.find`, so a violation comes
back shrunk to a minimal counterexample.

Besides the properties that fail an env, some findings hold on real envs written elsewhere
(verifier/gate/findings.py): non-determinism with its cause (clock or RNG), hidden writes (private
attributes a call changed, from `info["hidden_delta"]`), interpreter-wide state a call changed
(`info["global_change"]`, measured in the worker), and error strings that count as success.
Ill-typed calls an imported env accepts (faithful runtimes run them) are information only.

Each property is a method registered with `@check(severity)` (verifier/gate/checks.py) under its own
name, in the order the gate runs them; `PropertySuite.results` runs the registered checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from catalog.models import Action
from catalog.plan import Plan
from catalog.state.codec import readable
from catalog.store import EnvHandle
from catalog.tasks import episode_passed
from constraints.completeness import CandidateCache, CompletenessRun, seeded_calls
from constraints.spec import ConstraintSpec, Param
from sandbox.calls import SandboxCallRunner
from sandbox.pool import Job, JobResult, SandboxPool
from verifier.gate.checks import CHECKS, CheckResult, Severity, Verdict, check, runnable
from verifier.gate.findings import READ_PREFIXES, determinism_cause, first_difference, looks_like_error
from verifier.gate.guards import reach_guards
from verifier.gate.intent import PlanSimulator, disagreement, static_mismatches
from verifier.gate.invariants import violations
from verifier.gate.settings import VERIFY
from verifier.gate.typed_values import boundary, fitting, from_state, ill_typed_value, param_form, state_keys

Sequence = tuple[str, list[Action]]
SEEDED_PER_TOOL = 6  # calls per tool and state seeded with ids from the state (`PropertySuite._seeded`)
Violation = Callable[[Sequence], str | None]  # why a call sequence breaks a property, or None


def schema_problem(spec: ConstraintSpec, state: dict[str, Any] | None) -> str | None:
    """The first schema constraint (non-null, unique, foreign key) a SQL state breaks, or None."""
    if not state or spec.kind != "sql":
        return None
    for table, schema in spec.tables.items():
        rows = state.get(table, {})
        for name, column in schema.columns.items():
            values = [r.get(name) for r in rows.values()]
            if not column.optional and not column.primary_key and any(v is None for v in values):
                return f"NULL in non-null column {table}.{name}"
            present = [v for v in values if v is not None]
            if column.unique and len(present) != len({repr(v) for v in present}):
                return f"duplicate values in unique column {table}.{name}"
            if column.foreign_key:
                target = column.foreign_key.split(".")[0]
                keys = set(state.get(target, {}))
                dangling = [v for v in present if str(v) not in keys]
                if dangling:
                    return f"{table}.{name} points to missing {column.foreign_key} {dangling[0]!r}"
    return None


class PropertySuite:
    """The generic properties of one env, checked against a sandbox pool."""

    GUARD_BUDGET = 1500  # guard-directed calls at effort 1.0

    def __init__(self, handle: EnvHandle, spec: ConstraintSpec, pool: SandboxPool, *, plan: Plan | None = None,
                 examples: int = VERIFY.examples, seed: int = 0, effort: float = VERIFY.effort) -> None:
        """Prepare the searches of one env; `effort` scales the guard-directed ones (verifier/gate/settings.py).

        Without a `plan` the intent checks do not apply.
        """
        self.handle, self.spec, self.pool, self.plan = handle, spec, pool, plan
        self.examples, self.seed, self.effort = examples, seed, effort
        self._coverage: CompletenessRun | None = None  # the intent check's guard search, which every_guard_reachable goes on with
        self.states = {name: handle.state(name) for name in handle.state_names()}
        self.runner = SandboxCallRunner(handle, pool)
        self.candidates = CandidateCache()
        self._cache: dict[str, JobResult] = {}
        self._task_outcomes: dict[str, dict[str, Any]] = {}  # per task (as JSON): its worker task frame
        self._sequences: dict[str, Sequence] = {}
        self._seeded_sequences: list[Sequence] | None = None  # calls seeded with ids from the states (`_seeded`)
        self._seeded_keys: set[str] = set()
        self._forms = {tool: {p.name: param_form(p) for p in spec.tools[tool].params} for tool in spec.tools}
        self._actions: dict[str, st.SearchStrategy[Sequence]] = {}  # per state name: built once, drawn by every search
        self._sequence_strategy: st.SearchStrategy[Sequence] | None = None
        self.faithful = not handle.manifest.strict_args
        self.failure = getattr(handle.manifest, "failure", None)

    # --- generation -------------------------------------------------------------------------
    def _action(self, state: dict[str, Any]) -> st.SearchStrategy[Action]:
        tools = sorted(self.spec.tools)
        values: dict[tuple[str, str], st.SearchStrategy[Any]] = {}  # per parameter, built at its first draw

        def value(tool: str, param: Param) -> st.SearchStrategy[Any]:
            if (tool, param.name) not in values:
                form = self._forms[tool][param.name]
                options, realistic_values = self.candidates.get(param, state)
                keyed = from_state(form, state_keys(param.name, state))  # ids of the collection it names
                realistic = from_state(form, realistic_values)
                every = from_state(form, options)
                choices = [c for c in (keyed, keyed, keyed, realistic, realistic, every) if c is not None]
                values[tool, param.name] = st.one_of(*choices, boundary(param, form))
            return values[tool, param.name]

        @st.composite
        def build(draw: Any) -> Action:
            tool = draw(st.sampled_from(tools))
            arguments: dict[str, Any] = {}
            for param in self.spec.tools[tool].params:
                if not param.required and draw(st.booleans()):
                    continue
                arguments[param.name] = draw(value(tool, param))
            return Action(name=tool, arguments=arguments)

        return build()

    def _state_actions(self, name: str) -> st.SearchStrategy[Sequence]:
        """One state's call sequences; built once per state (building a composite costs more than drawing it)."""
        if name not in self._actions:
            self._actions[name] = st.tuples(st.just(name), st.lists(self._action(self.states[name]),
                                                                    min_size=1, max_size=3))
        return self._actions[name]

    def sequences(self) -> st.SearchStrategy[Sequence]:
        """Call sequences from one of the initial states (the same strategy object for every search)."""
        if self._sequence_strategy is None:
            self._sequence_strategy = st.sampled_from(sorted(self.states)).flatmap(self._state_actions)
        return self._sequence_strategy

    @staticmethod
    def _key(sequence: Sequence) -> str:
        state_name, actions = sequence
        return repr((state_name, [a.model_dump() for a in actions]))

    def run(self, sequence: Sequence) -> JobResult:
        state_name, actions = sequence
        key = self._key(sequence)
        if key not in self._cache:
            self._cache[key] = self.runner.job(state_name, actions)
            if key not in self._seeded_keys:
                self._sequences[key] = sequence
        return self._cache[key]

    def search(self, property_violated: Violation) -> Verdict:
        """Look for a sequence violating a property; shrink it if found."""
        config = settings(max_examples=self.examples, derandomize=True, database=None, deadline=None,
                          suppress_health_check=list(HealthCheck))
        seen: list[Sequence] = []
        said: list[str] = []  # the last violation message (a flaky property may not repeat it on the shrunk input)
        tried = [0, 0]  # sequences looked at, and those of them in which a call ran

        def violated(seq: Sequence) -> str | None:
            message = property_violated(seq)
            if message:
                said[:] = [message]
            return message

        def hit(seq: Sequence) -> bool:
            found = bool(violated(seq))
            tried[0] += 1
            tried[1] += bool(self.run(seq).calls)  # the property's own run, cached
            if found and not seen:
                seen.append(seq)
            return found

        try:
            found = find(self.sequences(), hit, settings=config)
        except NoSuchExample:
            return Verdict(True) if tried[1] else Verdict.nothing_ran(self._why_nothing_ran(f"{tried[0]} call sequences"))
        except BaseException as exc:  # a flaky property (non-determinism itself) stops hypothesis' shrinking
            if not seen or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            found = seen[0]
        found = self._fewer_calls(found, violated)
        detail = violated(found) or (said[0] if said else "")
        state_name, actions = found
        return Verdict(False, {"state": state_name, "actions": [a.model_dump() for a in actions],
                                         "results": [c.model_dump(mode="json") for c in self.run(found).calls]}, str(detail))

    def search_seen(self, violated: Violation) -> Verdict:
        """Like `search`, for a property of results alone.

        When earlier searches already ran as many sequences as one search would, look through
        those first and search (to shrink) only if one of them violates it. Then the calls seeded
        with ids from deep in a class env's state (`_seeded`), which random draws rarely build:
        a lookup that fills a cache, a `cd` into a folder that exists.
        """
        if len(self._sequences) < self.examples // 2:
            found = self.search(violated)
        else:
            sequences = list(self._sequences.values())
            if not any(violated(seq) for seq in sequences):
                if not any(self.run(seq).calls for seq in sequences):
                    return Verdict.nothing_ran(self._why_nothing_ran(f"{len(sequences)} call sequences"))
                found = Verdict(True, detail=f"none in {len(self._sequences)} call sequences")
            else:
                found = self.search(violated)
        if not found.ok:
            return found
        for sequence in self._seeded():
            detail = violated(sequence)
            if detail:
                state_name, actions = sequence
                return Verdict(False, {"state": state_name, "actions": [a.model_dump() for a in actions],
                                       "results": [c.model_dump(mode="json") for c in self.run(sequence).calls]},
                               f"{detail} (a call seeded with an id from the state)")
        return found

    def _seeded(self) -> list[Sequence]:
        """Well-typed single calls whose id parameters take ids from anywhere in the state (class envs).

        constraints.completeness.seeded_calls, drawn from the suite's seed; run apart from the
        searches' sequences (they do not count towards `search_seen`'s "as many as one search").
        """
        if self._seeded_sequences is None:
            sequences: list[Sequence] = []
            for state_name, action in seeded_calls(self.spec, self.states, self.seed, SEEDED_PER_TOOL):
                forms = self._forms[action.name]
                if all(fitting(forms[name], [value]) for name, value in action.arguments.items()):
                    sequences.append((state_name, [Action(name=action.name, arguments={
                        name: fitting(forms[name], [value])[0] for name, value in action.arguments.items()})]))
            self._seeded_keys = {self._key(seq) for seq in sequences}
            self._seeded_sequences = sequences
        return self._seeded_sequences

    def _why_nothing_ran(self, where: str) -> str:
        """Why no call of `where` (generated call sequences, a search) ran: the sandbox's most frequent refusal."""
        events = self.runner.events
        cause = max(sorted(set(events)), key=events.count) if events else "each job ended before its first call"
        return f"no call ran in {where} (the sandbox: {cause})"

    def _fewer_calls(self, found: Sequence, violated: Violation) -> Sequence:
        """Drop calls the violation does not need (hypothesis does not always delete a leading no-op)."""
        state_name, actions = found
        index = 0
        while len(actions) > 1 and index < len(actions):
            shorter = [a for i, a in enumerate(actions) if i != index]
            if violated((state_name, shorter)):
                actions = shorter
            else:
                index += 1
        return state_name, actions

    # --- helpers of the properties ----------------------------------------------------------
    def _allowed(self, tool: str, path: list[str | int]) -> bool:
        """Inside the tool's write set, or not known to be outside it (an effect was not followed)."""
        entry = self.spec.tools.get(tool)
        return entry is None or entry.allows_write(path) is not False

    def _readers(self) -> set[str]:
        """Tools that should not change state: declared or inferred reads, and tools named like reads."""
        return {n for n, t in self.spec.tools.items()
                if t.kind == "read" or n.startswith(READ_PREFIXES)}

    def _mistyped(self, tool: str, state: dict[str, Any]) -> Action | None:
        """A call of `tool` with realistic arguments, one of which is mistyped; None if none can be."""
        arguments: dict[str, Any] = {}
        target = None
        for param in self.spec.tools[tool].params:
            form = self._forms[tool][param.name]
            _, realistic = self.candidates.get(param, state)
            values = fitting(form, [*state_keys(param.name, state), *realistic])
            if not values and param.required:
                return None
            if values:
                arguments[param.name] = values[0]
            if target is None and form.kind != "any" and ill_typed_value(form, values[0] if values else None) is not form:
                target = param.name
        if target is None:
            return None
        form = self._forms[tool][target]
        arguments[target] = ill_typed_value(form, arguments.get(target))
        return Action(name=tool, arguments=arguments)

    def _intent_search(self, simulator: PlanSimulator) -> Verdict:

        def violated(seq: Sequence) -> str | None:
            result = self.run(seq)
            before = result.initial_state
            for action, call in zip(seq[1], result.calls, strict=False):
                if before is None:
                    return None
                problem = disagreement(simulator.predict(before, action), call)
                if problem:
                    return f"{action.name}: {problem}"
                before = call.state
            return None
        return self.search(violated)

    def _guard_run(self, effort: float, simulator: PlanSimulator | None = None) -> CompletenessRun:
        """The guard-directed generator of the completeness measurement at `effort`, on the suite's runner."""
        return CompletenessRun(self.handle, seed=self.seed, calls_per_tool=max(2, round(8 * effort)), spec=self.spec,
                               states=self.states, search_budget=int(self.GUARD_BUDGET * effort),
                               runner=self.runner, simulator=simulator)

    # --- the properties, in the order the gate runs them -------------------------------------
    @check(Severity.MINOR)
    def declared_kind_matches_code(self) -> Verdict:
        """Each tool's declared kind (read/write) matches what its code does."""
        mismatches = [t.name for t in self.spec.tools.values() if t.kind_mismatch]
        return Verdict(not mismatches, {"tools": mismatches} if mismatches else None)

    @check(Severity.CRITICAL)
    def code_matches_plan_statically(self) -> Verdict | None:
        """Every planned guard and effect is in the code, in order, and nothing unplanned (env with a plan)."""
        if self.plan is None:
            return None
        findings = static_mismatches(self.plan, self.spec)
        return Verdict(not findings, {"findings": findings} if findings else None,
                       findings[0] if findings else f"{len(self.plan.rules)} rules, "
                       f"{sum(len(t.effects) for t in self.plan.tools.values())} effects matched")

    @check(Severity.CRITICAL)
    def code_agrees_with_plan(self) -> Verdict | None:
        """The plan interpreter's predictions agree with execution on generated calls (env with a plan).

        Two searches: hypothesis (shrinks what it finds), then the guard-directed generator of
        the completeness measurement, which reaches deep successes (a checkout with a coupon,
        a late return) that random sequences rarely build.
        """
        if self.plan is None:
            return None
        simulator = PlanSimulator(self.plan, strict_args=not self.faithful)
        found = self._intent_search(simulator)
        if not found.ok:
            return found
        run = self._guard_run(self.effort, simulator)
        report = run.run()
        self._coverage = run  # the same calls tell which guards fired
        if not report.steps:
            return Verdict.nothing_ran(self._why_nothing_ran("the guard search"))
        if report.wrong:
            example = report.wrong_examples[0]
            return Verdict(False, example, f"{report.wrong} of {report.steps} generated calls disagree with the plan")
        return Verdict(True, detail=f"{report.exact} of {report.steps} calls predicted exactly, "
                                    f"{report.abstained} abstained")

    @check(Severity.CRITICAL)
    def initial_states_load(self) -> Verdict:
        """The initial states load and satisfy the schema constraints."""
        for name in sorted(self.states):
            result = self.pool.run(Job.for_env(self.handle, [], state_name=name, snapshot=True))
            if result.event:
                return Verdict(False, {"state": name}, result.event)
            problem = schema_problem(self.spec, result.initial_state)
            if problem:
                return Verdict(False, {"state": name}, problem)
        return Verdict(True)

    @check(Severity.CRITICAL)
    def no_crash_on_typed_input(self) -> Verdict:
        """No well-typed call crashes, is refused as invalid, or ends its worker."""
        def violated(seq: Sequence) -> str | None:
            result = self.run(seq)
            if result.event:
                return f"sandbox event: {result.event}"
            for call in result.calls:
                if call.info.get("ill_typed"):
                    return None  # Python's own behaviour on a call the annotations rule out (and what follows it)
                if call.outcome in ("crash", "invalid") or call.event:
                    return f"{call.outcome}: {call.observation}"
            return None
        return self.search(violated)

    @check(Severity.CRITICAL)
    def failure_changes_nothing(self) -> Verdict:
        """A call that fails by a rule leaves the state as it was."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if call.outcome == "failure" and call.delta:
                    return f"{action.name} failed but changed {[list(op.path) for op in call.delta]}"
            return None
        return self.search(violated)

    @check(Severity.CRITICAL)
    def writes_inside_write_set(self) -> Verdict:
        """A call writes only paths in its tool's extracted write set."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                for op in call.delta:
                    if not self._allowed(action.name, list(op.path)):
                        return f"{action.name} wrote {list(op.path)} outside its write set {self.spec.tools[action.name].write_set}"
            return None
        return self.search(violated)

    @check(Severity.CRITICAL)
    def read_tools_write_nothing(self) -> Verdict:
        """A read tool changes no state."""
        readers = {n for n, t in self.spec.tools.items() if t.kind == "read"}

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if action.name in readers and call.delta:
                    return f"read tool {action.name} changed {[list(op.path) for op in call.delta]}"
            return None
        return self.search(violated)

    @check(Severity.CRITICAL)
    def deterministic(self) -> Verdict:
        """The same calls on the same state, in two fresh runtimes, give the same results; else name the cause."""
        def violated(seq: Sequence) -> str | None:
            first = self.run(seq)
            second = self.runner.job(seq[0], seq[1])
            one = [(c.observation, c.delta, c.outcome, c.state) for c in first.calls]
            two = [(c.observation, c.delta, c.outcome, c.state) for c in second.calls]
            if one == two and first.event == second.event:
                return None
            index, where = first_difference(first.calls, second.calls)
            tool = seq[1][index].name if index < len(seq[1]) else "?"
            cause = determinism_cause(first.calls, second.calls, index, self.handle.source())
            return f"same calls on the same state differed at call {index + 1} ({tool}): {where}; cause: {cause}"
        return self.search(violated)

    @check(Severity.CRITICAL)
    def schema_constraints_hold(self) -> Verdict:
        """After every call the state satisfies the schema (non-null, unique, foreign keys)."""
        if self.spec.kind != "sql":
            return Verdict(True, detail="class-based env: no declared schema")

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                problem = schema_problem(self.spec, call.state)
                if problem:
                    return f"after {action.name}: {problem}"
            return None
        return self.search(violated)

    @check(Severity.CRITICAL)
    def invariants_hold(self) -> Verdict:
        """Every initial state, and the state after every call, satisfies the plan's value invariants."""
        invariants = self.plan.invariants if self.plan is not None else []
        if not invariants:
            return Verdict(True, detail="no invariants declared")
        for name in sorted(self.states):
            problems = violations(invariants, self._initial_view(name))
            if problems:
                return Verdict(False, {"state": name}, f"initial state {name}: {problems[0]}")

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                problems = violations(invariants, self._view(call.state)) if call.state is not None else []
                if problems:
                    return f"after {action.name}: {problems[0]}"
            return None
        return self.search_seen(violated)

    def _view(self, state: dict[str, Any]) -> dict[str, Any]:
        """A state as invariants name it: a class env's in its plain view (int keys as text, objects as attributes)."""
        return readable(state) if self.spec.kind == "class" else state

    def _initial_view(self, name: str) -> dict[str, Any]:
        """An initial state as invariants read it: a class env's as its runtime loads it (not its scenario file)."""
        if self.spec.kind != "class":
            return self.states[name]
        loaded = self.pool.run(Job.for_env(self.handle, [], state_name=name, snapshot=True)).initial_state
        return self._view(loaded if loaded is not None else self.states[name])

    @check(Severity.MINOR)
    def every_guard_reachable(self) -> Verdict:
        """Every extracted guard fires on some generated call (coverage).

        The intent check's calls (or as many here, without a plan), then a call climbed
        in-process towards each guard they missed (verifier/gate/guards.py): so the synthesis
        effort reaches the guards `verify gate` reaches, and both give this check one verdict.
        """
        run = self._coverage
        if run is None:
            run = self._guard_run(self.effort)
            run.run()
        reach_guards(run, seed=self.seed)
        report = run.report()
        if not report.steps:
            return Verdict.nothing_ran(self._why_nothing_ran("the guard search"))
        ok = report.guards_triggered == report.guards_total
        return Verdict(ok, None if ok else {"untriggered": report.untriggered_guards},
                       f"{report.guards_triggered}/{report.guards_total} guards triggered")

    @check(Severity.CRITICAL)
    def tasks_unsolved_then_solved(self) -> Verdict:
        """No task is satisfied initially (unless a refusal), each is solved by its solution, and its forbidden calls fail it."""
        for task in self.handle.tasks():
            why = self._task_problem(task)
            if why:
                return Verdict(False, {"task": task.id}, why)
        return Verdict(True, detail=f"{len(self.handle.tasks())} tasks")

    @check(Severity.CRITICAL)
    def no_task_passes_empty_episode(self) -> Verdict:
        """No task is passed by an episode with no call and no answer: a reward an RL policy gets for doing nothing."""
        tasks = self.handle.tasks()
        errors = [self._task_outcome(task).get("error") for task in tasks]
        for task, error in zip(tasks, errors, strict=True):
            if not error and episode_passed(task, self._task_outcome(task).get("initial") is True):
                return Verdict(False, {"task": task.id}, f"task {task.id} is passed by an empty episode")
        if tasks and all(errors):
            return Verdict.nothing_ran(f"no task's check ran in the sandbox ({errors[0]})")
        return Verdict(True, detail=f"{len(tasks)} tasks")

    def _task_outcome(self, task: Any) -> dict[str, Any]:
        """The worker's task frame for `task` (its check initially and after its solution), once per task."""
        key = task.model_dump_json()
        if key not in self._task_outcomes:
            job = Job.for_env(self.handle, [], state_name=task.state)
            job.task = task.model_dump(mode="json")
            self._task_outcomes[key] = self.pool.run(job).task or {"error": "no answer"}
        return self._task_outcomes[key]

    def _task_problem(self, task: Any) -> str | None:
        """Why a task's check does not confirm (None if it does); see catalog.tasks for refusals."""
        outcome = self._task_outcome(task)
        if outcome.get("error"):
            return str(outcome["error"])
        if not task.refusal and outcome.get("initial") is not False:
            return "already satisfied initially"
        if task.solution and (outcome.get("solution_failed") or outcome.get("final") is not True):
            return f"not solved by its solution: {outcome.get('solution_failed')}"
        if task.refusal and not task.solution and outcome.get("initial") is not True:
            return "a refusal whose check fails when nothing is done"
        if task.forbidden is None:
            return "a refusal without forbidden calls: nothing shows its check can fail" if task.refusal else None
        wrong = self._task_outcome(task.model_copy(update={"solution": task.forbidden}))
        if wrong.get("error") or wrong.get("solution_failed") or wrong.get("final") is not False:
            return (f"its check does not reject the state its forbidden calls reach: "
                    f"{wrong.get('error') or wrong.get('solution_failed') or 'the check still holds'}")
        return None

    @check(Severity.MINOR)
    def read_tools_keep_hidden_state(self) -> Verdict:
        """A read tool changes no private attribute either (a cache, an RNG, a cursor)."""
        readers = self._readers()

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                hidden = call.info.get("hidden_delta") or []
                if action.name in readers and hidden:
                    return f"read tool {action.name} changed hidden state {[op['path'] for op in hidden]}"
            return None
        return self.search_seen(violated)

    @check(Severity.CRITICAL)
    def no_interpreter_wide_change(self) -> Verdict:
        """No call changes interpreter-wide state (decimal context, random module, locale, env globals...)."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                changed = call.info.get("global_change")
                if changed:
                    return f"{action.name} changed interpreter-wide state: {', '.join(changed)}"
            return None
        return self.search_seen(violated)

    @check(Severity.MINOR)
    def errors_signalled_as_failures(self) -> Verdict:
        """A result that reads as an error ("Error: ...") counts as a failure, not a success."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if call.outcome == "success" and looks_like_error(call.observation):
                    return (f"{action.name} returned {str(call.observation)[:80]!r} as a success: declare the env's "
                            "error prefix or error key")
            return None
        return self.search_seen(violated)

    @check(Severity.INFORMATIONAL)
    def hidden_writes(self) -> Verdict:
        """Calls that change hidden state at all (left out of samples' public state)."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                hidden = call.info.get("hidden_delta") or []
                if hidden:
                    return f"{action.name} changed hidden state {[op['path'] for op in hidden]}"
            return None
        found = self.search_seen(violated)
        if found.not_run:
            return found
        return Verdict(True, found.counterexample, found.detail if found.counterexample else "no call changed hidden state")

    @check(Severity.INFORMATIONAL)
    def ill_typed_accepted(self) -> Verdict:
        """Ill-typed calls a faithful env runs without a crash, one per tool.

        Each takes a well-typed call and mistypes one argument the way callers do (a string id
        for an `int`); the runtime runs it as Python would and flags it `ill_typed`.
        """
        if not self.faithful:
            return Verdict(True, None, "strict argument checking: ill-typed calls are refused as invalid")
        accepted: list[dict[str, Any]] = []
        for state_name in sorted(self.states)[:1]:
            state = self.states[state_name]
            for tool in sorted(self.spec.tools):
                action = self._mistyped(tool, state)
                if action is None:
                    continue
                call = self.runner.job(state_name, [action]).calls
                if call and call[0].info.get("ill_typed") and call[0].outcome in ("success", "failure"):
                    accepted.append({"state": state_name, "action": action.model_dump(),
                                     "outcome": call[0].outcome, "ill_typed": call[0].info["ill_typed"]})
        detail = (f"{len(accepted)} tool(s) run ill-typed calls as Python would: "
                  + "; ".join(f"{a['action']['name']} ({a['ill_typed']})" for a in accepted)) if accepted else \
            "no ill-typed call ran"
        return Verdict(True, {"calls": accepted} if accepted else None, detail)

    # --- running them ------------------------------------------------------------------------
    def run_check(self, name: str) -> CheckResult | None:
        """One registered check by name; None where it does not apply (no plan)."""
        spec = CHECKS[name]
        if spec.run is None:
            raise ValueError(f"check {name!r} is decided outside the property suite")
        verdict = spec.run(self)
        return None if verdict is None else CheckResult.of(name, verdict)

    def results(self, *, stop: Callable[[list[CheckResult]], bool] = lambda done: False,
                progress: Callable[[int, int, str], None] | None = None) -> list[CheckResult]:
        """Run every registered check in order; before each, `stop(results so far)` may end the run.

        `progress(checks done, checks in all, the one starting)` is told before each check (and once after the last).
        """
        done: list[CheckResult] = []
        specs = list(runnable())
        for number, spec in enumerate(specs):
            if stop(done):
                break
            if progress is not None:
                progress(number, len(specs), spec.name)
            result = self.run_check(spec.name)
            if result is not None:
                done.append(result)
        if progress is not None:
            progress(len(specs), len(specs), "")
        return done
