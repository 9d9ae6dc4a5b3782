"""The climb to unreached guards (verifier/gate/guards.py), in-process on a reference env (trusted code)."""

from __future__ import annotations

from constraints.completeness import CompletenessRun
from verifier.gate.guards import reach_guards


def test_the_climb_reaches_guards_random_calls_missed_and_runs_only_calls_that_fail_there(reference):
    run = CompletenessRun(reference.get("library"), seed=0, calls_per_tool=1, search_budget=0)
    run.run()  # one random call per tool and state: most deep guards are missed
    missed = run.guards.keys() - run.triggered
    failures, steps = run.counts["failures"], run.counts["steps"]
    executed = reach_guards(run, seed=0)
    reached = missed & run.triggered
    assert len(missed) >= 10 and len(reached) >= len(missed) - 2, run.report().untriggered_guards
    assert 0 < executed <= len(missed)  # one executed sequence per guard the simulator says it reaches
    assert run.counts["failures"] - failures == executed  # each one failed where the climb aimed
    assert run.counts["steps"] > steps
