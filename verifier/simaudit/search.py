"""Search each env for inputs on which a simulator breaks a property, and shrink them with hypothesis.

One hypothesis run per (env, property), all with the same seed and the same drawing code, so the
runs generate the same inputs in the same order until one finds a violation; with the answer
cache that means every property reads the answers already paid for, and only the metamorphic
ones (and shrinking) ask new questions. A violation is raised inside the run, so hypothesis
shrinks it to a minimal (state, action); the final replay re-raises it with that input, which
is the counterexample kept (with the simulator's answer and the executed truth).

Budget: when a question cannot be paid for it gets no answer and the input is skipped. Before
any violation is found that ends the run at once (nothing more can be learned); during a shrink
it ends the shrink with the smallest input found so far, and the counterexample says
`shrunk: false`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from catalog.bench.items import SimResult
from catalog.bench.strata import delta_band
from catalog.models import Action, Outcome
from constraints.spec import ConstraintSpec
from verifier.simaudit.answers import AnswerBook
from verifier.simaudit.cases import Case, CaseSource
from verifier.simaudit.checks import PROPERTIES, Judged, SimProperty, Verdict

__all__ = ["Counterexample", "EnvSearch", "Tally"]


@dataclass
class Counterexample:
    """A minimal input on which the simulator breaks a property, with its answer and the executed truth."""

    property: str
    detail: str
    case: Case
    answer: SimResult
    shrunk: bool

    def summary(self) -> dict[str, Any]:
        """The compact form the report lists."""
        return {"property": self.property, "env": self.case.env_id, "tool": self.case.action.name,
                "arguments": self.case.action.arguments, **self.case.describe(), "detail": self.detail,
                "shrunk": self.shrunk}


@dataclass
class Tally:
    """Inputs (question ids) a property was tried on and violated by, over every run that judged them."""

    tried: set[str] = field(default_factory=set)
    violations: set[str] = field(default_factory=set)


class _Violation(Exception):
    """Raised inside a hypothesis run so that it shrinks the input."""

    def __init__(self, judged: Judged, verdict: Verdict) -> None:
        super().__init__(verdict.problem)
        self.judged, self.verdict = judged, verdict


class _Stop(Exception):
    """Raised inside a run that found nothing yet once the budget refused a question: nothing more to learn.

    Hypothesis then shrinks this input too, but every new question is refused at once.
    """


class EnvSearch:
    """The property searches of one env: draws cases, asks the simulator through the answer book, tallies."""

    def __init__(self, source: CaseSource, spec: ConstraintSpec, book: AnswerBook, *, examples: int,
                 seed_value: int) -> None:
        self.source, self.spec, self.book = source, spec, book
        self.examples, self.seed = examples, seed_value
        self.tallies: dict[str, Tally] = {name: Tally() for name in PROPERTIES}
        self.inputs: dict[str, dict[str, Any]] = {}  # question id -> tool, band, violated properties
        self.abstained: set[str] = set()
        self.counterexamples: list[Counterexample] = []

    # --- one input ----------------------------------------------------------------------------------
    def ask(self, state: dict[str, Any], action: Action, ask: int) -> SimResult | None:
        return self.book.ask(self.source.question(state, action), ask)

    def judge(self, case: Case, prop: SimProperty) -> tuple[Judged, Verdict] | None:
        """The property's verdict on the simulator's answer to `case`; None if there is no answer."""
        answer = self.ask(case.state, case.action, 0)
        if answer is None:
            return None
        if answer.abstained or answer.error:
            self.abstained.add(case.key)
            return None
        judged = Judged(case, answer, self.spec, self.ask)
        verdict = prop.check(judged)
        record = self.inputs.setdefault(case.key, {
            "tool": case.action.name, "violated": set(),
            "band": "failure" if case.outcome == Outcome.FAILURE.value else delta_band(len(case.delta))})
        if verdict.applies:
            self.tallies[prop.name].tried.add(case.key)
        if verdict.violated:
            self.tallies[prop.name].violations.add(case.key)
            record["violated"].add(prop.name)
        return judged, verdict

    # --- one property -------------------------------------------------------------------------------
    def search(self, prop: SimProperty) -> Counterexample | None:
        """Look for an input breaking `prop`; shrink it; the minimal one, or None."""
        refused_before = self.book.refused
        found: list[_Violation] = []

        def body(data: st.DataObject) -> None:
            case = self.source.draw(data)
            if case is None:
                return
            refused = self.book.refused
            outcome = self.judge(case, prop)
            if self.book.refused > refused and not found:
                raise _Stop  # after every draw, so hypothesis sees the same draws for the same input
            if outcome is not None and outcome[1].violated:
                found.append(_Violation(*outcome))
                raise found[-1]

        run: Callable[[], None] = settings(
            max_examples=self.examples, database=None, deadline=None, derandomize=False,
            suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet,
            phases=(Phase.generate, Phase.shrink))(seed(self.seed)(given(st.data())(body)))
        try:
            run()
        except _Violation as violation:
            minimal = violation
        except _Stop:
            return None
        except Exception:  # hypothesis could not replay the last failure (flaky): keep the smallest seen
            if not found:
                raise
            minimal = found[-1]
        else:
            return None
        example = Counterexample(prop.name, minimal.verdict.problem or "", minimal.judged.case, minimal.judged.answer,
                                 shrunk=self.book.refused == refused_before)
        self.counterexamples.append(example)
        return example

    def run(self, properties: list[SimProperty]) -> None:
        for prop in properties:
            self.search(prop)
