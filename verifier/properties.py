"""Generic properties every environment must have, checked by hypothesis in the sandbox.

Calls are drawn from the constraint spec (parameter types, enum values) and the initial states
(ids of the collection a parameter names, values of same-named fields), with boundary values
(empty and unicode strings, zero, negatives, huge numbers, unknown ids, None where a parameter
is nullable), in sequences of one to three calls. Every drawn argument is well-typed by the
tool's own annotations (verifier/typed_values.py), so a crash is a promise the code broke, not a
call it never accepted. Each property is searched with `hypothesis.find`, so a violation comes
back shrunk to a minimal counterexample.

Besides the properties that fail an env, some findings hold on real envs written elsewhere
(verifier/findings.py): non-determinism with its cause (clock or RNG), hidden writes (private
attributes a call changed, from `info["hidden_delta"]`), interpreter-wide state a call changed
(`info["global_change"]`, measured in the worker), and error strings that count as success.
Ill-typed calls an imported env accepts (faithful runtimes run them) are information only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from catalog.codec import plain_path
from catalog.models import Action
from catalog.plan import Plan
from catalog.store import EnvHandle
from constraints.completeness import CandidateCache, CompletenessRun
from constraints.spec import ConstraintSpec, Param, ToolSpec
from verifier.executor import SandboxExecutor
from verifier.findings import READ_PREFIXES, determinism_cause, first_difference, looks_like_error
from verifier.intent import PlanSimulator, disagreement
from verifier.sandbox import Job, JobResult, SandboxPool
from verifier.typed_values import boundary, fitting, from_state, ill_typed_value, param_form, state_keys

Sequence = tuple[str, list[Action]]


MINOR_CHECKS = frozenset({"every_guard_reachable", "declared_kind_matches_code", "judge_agrees_with_execution",
                          "read_tools_keep_hidden_state", "errors_signalled_as_failures"})


@dataclass
class CheckResult:
    """One property's verdict; `counterexample` is the minimal failing input, if any.

    A critical check failing rejects the env whatever its score: it means wrong training
    signal (a crash, a leaky failure, a wrong write, a pre-solved task, code against its plan).
    Minor checks (coverage: unreachable guards, a kind label) only lower the score.
    """

    name: str
    ok: bool
    counterexample: dict[str, Any] | None = None
    detail: str = ""
    informational: bool = False  # information, not a verdict: left out of the score

    @property
    def critical(self) -> bool:
        return self.name not in MINOR_CHECKS and not self.informational

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "critical": self.critical, "counterexample": self.counterexample,
                "detail": self.detail, "informational": self.informational}


def _pattern(path: list[str]) -> list[re.Pattern[str]]:
    return [re.compile("".join(".*" if part.startswith("<") else re.escape(part)
                               for part in re.split(r"(<[^>]*>)", key) if part) + r"\Z", re.DOTALL) for key in path]


class PropertySuite:
    """The generic properties of one env, checked against a sandbox pool."""

    def __init__(self, handle: EnvHandle, spec: ConstraintSpec, pool: SandboxPool, *, examples: int = 120,
                 seed: int = 0, effort: float = 1.0) -> None:
        """`effort` scales the guard-directed searches (1.0 for `verify`; synthesis gates use less)."""
        self.handle, self.spec, self.pool = handle, spec, pool
        self.examples, self.seed, self.effort = examples, seed, effort
        self._guards_seen: dict[str, Any] | None = None
        self.states = {name: handle.state(name) for name in handle.state_names()}
        self.executor = SandboxExecutor(handle, pool)
        self.candidates = CandidateCache()
        self._cache: dict[str, JobResult] = {}
        self._sequences: dict[str, Sequence] = {}
        self._write_patterns = {name: self._patterns(tool) for name, tool in spec.tools.items()}
        self._forms = {tool: {p.name: param_form(p) for p in spec.tools[tool].params} for tool in spec.tools}
        self._details: dict[str, str] = {}
        self.faithful = not getattr(handle.manifest, "strict_args", True)
        self.failure = getattr(handle.manifest, "failure", None)

    # --- generation -------------------------------------------------------------------------
    def _action(self, state: dict[str, Any]) -> st.SearchStrategy[Action]:
        tools = sorted(self.spec.tools)

        @st.composite
        def build(draw: Any) -> Action:
            tool = draw(st.sampled_from(tools))
            arguments: dict[str, Any] = {}
            for param in self.spec.tools[tool].params:
                if not param.required and draw(st.booleans()):
                    continue
                form = self._forms[tool][param.name]
                options, realistic_values = self.candidates.get(param, state)
                keyed = from_state(form, state_keys(param.name, state))  # ids of the collection it names
                realistic = from_state(form, realistic_values)
                every = from_state(form, options)
                choices = [c for c in (keyed, keyed, keyed, realistic, realistic, every) if c is not None]
                arguments[param.name] = draw(st.one_of(*choices, boundary(param, form)))
            return Action(name=tool, arguments=arguments)

        return build()

    def sequences(self) -> st.SearchStrategy[Sequence]:
        names = sorted(self.states)
        return st.sampled_from(names).flatmap(
            lambda name: st.tuples(st.just(name), st.lists(self._action(self.states[name]), min_size=1, max_size=3)))

    def run(self, sequence: Sequence) -> JobResult:
        state_name, actions = sequence
        key = repr((state_name, [a.model_dump() for a in actions]))
        if key not in self._cache:
            self._cache[key] = self.executor.job(state_name, actions)
            self._sequences[key] = sequence
        return self._cache[key]

    def search(self, name: str, violated: Any) -> CheckResult:
        """Look for a sequence violating a property; shrink it if found."""
        config = settings(max_examples=self.examples, derandomize=True, database=None, deadline=None,
                          suppress_health_check=list(HealthCheck))
        seen: list[Sequence] = []

        def check(seq: Sequence) -> bool:
            hit = bool(violated(seq))
            if hit and not seen:
                seen.append(seq)
            return hit

        try:
            found = find(self.sequences(), check, settings=config)
        except NoSuchExample:
            return CheckResult(name, True)
        except BaseException as exc:  # a flaky property (non-determinism itself) stops hypothesis' shrinking
            if not seen or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            found = seen[0]
        found = self._fewer_calls(found, violated)
        detail = violated(found) or self._details.get(name, "")
        state_name, actions = found
        return CheckResult(name, False, {"state": state_name, "actions": [a.model_dump() for a in actions],
                                         "results": [c.__dict__ for c in self.run(found).calls]}, str(detail))

    def search_seen(self, name: str, violated: Any) -> CheckResult:
        """Like `search`, for a property of results alone: when earlier searches already ran as
        many sequences as one search would, look through those first and search (to shrink)
        only if one of them violates it."""
        if len(self._sequences) < self.examples // 2:
            return self.search(name, violated)
        if not any(violated(seq) for seq in list(self._sequences.values())):
            return CheckResult(name, True, detail=f"none in {len(self._sequences)} call sequences")
        return self.search(name, violated)

    def _fewer_calls(self, found: Sequence, violated: Any) -> Sequence:
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

    # --- the properties ---------------------------------------------------------------------
    def check_no_crash(self) -> CheckResult:
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
        return self.search("no_crash_on_typed_input", violated)

    def check_failure_changes_nothing(self) -> CheckResult:
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if call.outcome == "failure" and call.delta:
                    return f"{action.name} failed but changed {[op['path'] for op in call.delta]}"
            return None
        return self.search("failure_changes_nothing", violated)

    def _patterns(self, tool: ToolSpec) -> list[list[re.Pattern[str]]] | None:
        patterns = []
        for effect in tool.effects:
            if effect.unfollowed:
                return None  # the write set is not fully known
            patterns.append(_pattern(effect.path))
        return patterns

    def _allowed(self, tool: str, path: list[str]) -> bool:
        patterns = self._write_patterns.get(tool)
        if patterns is None:
            return True
        return self._matches(patterns, list(path)) or self._matches(patterns, list(plain_path(path)))

    @staticmethod
    def _matches(patterns: list[list[re.Pattern[str]]], path: list[str]) -> bool:
        for pattern in patterns:
            common = min(len(pattern), len(path))
            if all(pattern[i].match(path[i]) for i in range(common)):
                return True
        return False

    def check_writes_in_write_set(self) -> CheckResult:
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                for op in call.delta:
                    if not self._allowed(action.name, op["path"]):
                        return f"{action.name} wrote {op['path']} outside its write set {self.spec.tools[action.name].write_set}"
            return None
        return self.search("writes_inside_write_set", violated)

    def check_read_tools_write_nothing(self) -> CheckResult:
        readers = {n for n, t in self.spec.tools.items() if t.kind == "read"}

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if action.name in readers and call.delta:
                    return f"read tool {action.name} changed {[op['path'] for op in call.delta]}"
            return None
        return self.search("read_tools_write_nothing", violated)

    def check_determinism(self) -> CheckResult:
        """The same calls on the same state, in two fresh runtimes, give the same results; else name the cause."""
        def violated(seq: Sequence) -> str | None:
            first = self.run(seq)
            second = self.executor.job(seq[0], seq[1])
            one = [(c.observation, c.delta, c.outcome, c.state) for c in first.calls]
            two = [(c.observation, c.delta, c.outcome, c.state) for c in second.calls]
            if one == two and first.event == second.event:
                return None
            index, where = first_difference(first.calls, second.calls)
            tool = seq[1][index].name if index < len(seq[1]) else "?"
            cause = determinism_cause(first.calls, second.calls, index, self.handle.source())
            message = f"same calls on the same state differed at call {index + 1} ({tool}): {where}; cause: {cause}"
            self._details["deterministic"] = message
            return message
        return self.search("deterministic", violated)

    def _readers(self) -> set[str]:
        """Tools that should not change state: declared or inferred reads, and tools named like reads."""
        return {n for n, t in self.spec.tools.items()
                if t.kind == "read" or n.startswith(READ_PREFIXES)}

    def check_hidden_writes_in_reads(self) -> CheckResult:
        """A read tool must not change private attributes either (a cache, an RNG, a cursor)."""
        readers = self._readers()

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                hidden = call.info.get("hidden_delta") or []
                if action.name in readers and hidden:
                    return f"read tool {action.name} changed hidden state {[op['path'] for op in hidden]}"
            return None
        return self.search_seen("read_tools_keep_hidden_state", violated)

    def check_hidden_writes(self) -> CheckResult:
        """Information: calls that change hidden state at all (left out of samples' public state)."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                hidden = call.info.get("hidden_delta") or []
                if hidden:
                    return f"{action.name} changed hidden state {[op['path'] for op in hidden]}"
            return None
        found = self.search_seen("hidden_writes", violated)
        return CheckResult("hidden_writes", True, found.counterexample,
                           found.detail if found.counterexample else "no call changed hidden state", informational=True)

    def check_global_state(self) -> CheckResult:
        """No call changes interpreter-wide state (decimal context, random module, locale, env globals...)."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                changed = call.info.get("global_change")
                if changed:
                    return f"{action.name} changed interpreter-wide state: {', '.join(changed)}"
            return None
        return self.search_seen("no_interpreter_wide_change", violated)

    def check_error_results(self) -> CheckResult:
        """A result that reads as an error ("Error: ...") counts as a failure, not a success."""
        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                if call.outcome == "success" and looks_like_error(call.observation):
                    return (f"{action.name} returned {str(call.observation)[:80]!r} as a success: declare the env's "
                            "error prefix or error key")
            return None
        return self.search_seen("errors_signalled_as_failures", violated)

    def check_ill_typed_accepted(self) -> CheckResult:
        """Information (faithful envs): ill-typed calls the code runs without a crash, one per tool.

        Each takes a well-typed call and mistypes one argument the way callers do (a string id
        for an `int`); the runtime runs it as Python would and flags it `ill_typed`.
        """
        if not self.faithful:
            return CheckResult("ill_typed_accepted", True, None, "strict argument checking: ill-typed calls are "
                               "refused as invalid", informational=True)
        accepted: list[dict[str, Any]] = []
        for state_name in sorted(self.states)[:1]:
            state = self.states[state_name]
            for tool in sorted(self.spec.tools):
                action = self._mistyped(tool, state)
                if action is None:
                    continue
                call = self.executor.job(state_name, [action]).calls
                if call and call[0].info.get("ill_typed") and call[0].outcome in ("success", "failure"):
                    accepted.append({"state": state_name, "action": action.model_dump(),
                                     "outcome": call[0].outcome, "ill_typed": call[0].info["ill_typed"]})
        detail = (f"{len(accepted)} tool(s) run ill-typed calls as Python would: "
                  + "; ".join(f"{a['action']['name']} ({a['ill_typed']})" for a in accepted)) if accepted else \
            "no ill-typed call ran"
        return CheckResult("ill_typed_accepted", True, {"calls": accepted} if accepted else None, detail,
                           informational=True)

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

    def schema_problem(self, state: dict[str, Any] | None) -> str | None:
        if not state or self.spec.kind != "sql":
            return None
        for table, schema in self.spec.tables.items():
            rows = state.get(table, {})
            for name, column in schema["columns"].items():
                values = [r.get(name) for r in rows.values()]
                if not column["optional"] and not column["primary_key"] and any(v is None for v in values):
                    return f"NULL in non-null column {table}.{name}"
                present = [v for v in values if v is not None]
                if column.get("unique") and len(present) != len({repr(v) for v in present}):
                    return f"duplicate values in unique column {table}.{name}"
                if column.get("foreign_key"):
                    target = column["foreign_key"].split(".")[0]
                    keys = set(state.get(target, {}))
                    dangling = [v for v in present if str(v) not in keys]
                    if dangling:
                        return f"{table}.{name} points to missing {column['foreign_key']} {dangling[0]!r}"
        return None

    def check_schema_constraints(self) -> CheckResult:
        if self.spec.kind != "sql":
            return CheckResult("schema_constraints_hold", True, detail="class-based env: no declared schema")

        def violated(seq: Sequence) -> str | None:
            for action, call in zip(seq[1], self.run(seq).calls, strict=False):
                problem = self.schema_problem(call.state)
                if problem:
                    return f"after {action.name}: {problem}"
            return None
        return self.search("schema_constraints_hold", violated)

    def check_initial_states(self) -> CheckResult:
        """The initial states themselves satisfy the schema constraints."""
        for name in sorted(self.states):
            result = self.pool.run(Job.for_env(self.handle, [], state_name=name, snapshot=True))
            if result.event:
                return CheckResult("initial_states_load", False, {"state": name}, result.event)
            problem = self.schema_problem(result.initial_state)
            if problem:
                return CheckResult("initial_states_load", False, {"state": name}, problem)
        return CheckResult("initial_states_load", True)

    def check_guards_reachable(self, budget: int = 1500) -> CheckResult:
        report = self._guards_seen  # the intent check's calls, when it ran, searched for guards too
        if report is None:
            run = CompletenessRun(self.handle, seed=self.seed, calls_per_tool=self._calls(),
                                  search_budget=int(budget * self.effort), executor=self.executor)
            report = run.run()
        ok = report["guards_triggered"] == report["guards_total"]
        return CheckResult("every_guard_reachable", ok, None if ok else {"untriggered": report["untriggered_guards"]},
                           f"{report['guards_triggered']}/{report['guards_total']} guards triggered")

    def check_tasks(self) -> CheckResult:
        for task in self.handle.tasks():
            job = Job.for_env(self.handle, [], state_name=task.state)
            job.task = task.model_dump(mode="json")
            outcome = self.pool.run(job).task or {"error": "no answer"}
            if outcome.get("error") or outcome.get("initial") is not False or \
                    (task.solution and (outcome.get("solution_failed") or outcome.get("final") is not True)):
                why = outcome.get("error") or ("already satisfied initially" if outcome.get("initial") else
                                               f"not solved by its solution: {outcome.get('solution_failed')}")
                return CheckResult("tasks_unsolved_then_solved", False, {"task": task.id}, why)
        return CheckResult("tasks_unsolved_then_solved", True, detail=f"{len(self.handle.tasks())} tasks")

    def check_intent_dynamic(self, plan: Plan, budget: int = 1500) -> CheckResult:
        """The plan interpreter's predictions must agree with execution on generated calls.

        Two searches: hypothesis (shrinks what it finds), then the guard-directed generator of
        the completeness measurement, which reaches deep successes (a checkout with a coupon,
        a late return) that random sequences rarely build.
        """
        simulator = PlanSimulator(plan)
        found = self._intent_search(simulator)
        if not found.ok:
            return found
        run = CompletenessRun(self.handle, seed=self.seed, calls_per_tool=self._calls(),
                              search_budget=int(budget * self.effort), executor=self.executor, simulator=simulator)
        report = run.run()
        self._guards_seen = report  # the same calls tell which guards fired
        if report["wrong"]:
            example = report["wrong_examples"][0]
            return CheckResult("code_agrees_with_plan", False, example,
                               f"{report['wrong']} of {report['steps']} generated calls disagree with the plan")
        return CheckResult("code_agrees_with_plan", True,
                           detail=f"{report['exact']} of {report['steps']} calls predicted exactly, "
                                  f"{report['abstained']} abstained")

    def _intent_search(self, simulator: PlanSimulator) -> CheckResult:

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
        return self.search("code_agrees_with_plan", violated)

    def _calls(self) -> int:
        return max(2, round(8 * self.effort))

    def all(self) -> list[CheckResult]:
        return [self.check_initial_states(), self.check_no_crash(), self.check_failure_changes_nothing(),
                self.check_writes_in_write_set(), self.check_read_tools_write_nothing(), self.check_determinism(),
                self.check_schema_constraints(), self.check_guards_reachable(), self.check_tasks(),
                self.check_hidden_writes_in_reads(), self.check_global_state(), self.check_error_results(),
                self.check_hidden_writes(), self.check_ill_typed_accepted()]
