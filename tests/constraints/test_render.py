"""The command line's views of constraint specs and completeness reports."""

from catalog.store import Catalog
from constraints.completeness import spec_of
from constraints.render import (
    COMPLETENESS_TOTALS,
    completeness_summary,
    render_completeness,
    render_spec,
    spec_document,
)
from constraints.report import CompletenessReport


def test_spec_text_has_a_block_per_tool_with_guards_effects_and_sets(tmp_path):
    spec = spec_of(Catalog(tmp_path).get("library"))
    lines = render_spec(spec, "library")
    assert lines[0] == "Constraint spec of library (sql env, class LibraryEnv)"
    assert "get_member [declared read, inferred read]" in lines
    assert "  guard L98: if member is None -> 'Member {member_id} not found'" in lines
    assert any(line.startswith("  effect L") for line in lines)
    assert lines.count("") == len(spec.tools)  # one blank line before each tool
    document = spec_document(spec, "library")
    assert document["env"] == "library" and set(document["tools"]) == set(spec.tools)


def _report(env, steps, wrong=0):
    return CompletenessReport(env=env, kind="sql", steps=steps, exact=steps - wrong, abstained=0, wrong=wrong,
                              exact_rate=1.0, guards_total=2, guards_triggered=1, failures=3, failures_explained=3,
                              crashes=0, untriggered_guards=["L9 if x"], top_abstain_reasons={"getattr": 2})


def test_completeness_of_one_env_is_its_report_and_of_several_their_sums():
    one = _report("a", 10)
    assert completeness_summary([one]) is one
    summed = completeness_summary([one, _report("b", 5, wrong=1)])
    document = summed.model_dump(mode="json")
    assert document["steps"] == 15 and document["wrong"] == 1 and document["guards_total"] == 4
    assert set(document) == set(COMPLETENESS_TOTALS) | {"envs"} and len(document["envs"]) == 2


def test_completeness_table_lists_each_env_and_its_gaps():
    lines = render_completeness([_report("clinic", 3208)])
    assert lines[0].split() == ["ENV", "STEPS", "EXACT", "ABST", "WRONG", "EXACT%", "GUARDS", "EXPLAINED"]
    assert lines[1].split()[:5] == ["clinic", "3208", "3208", "0", "0"] and "100.0%" in lines[1]
    assert lines[2:] == ["    never triggered: L9 if x", "    abstained 2x: getattr"]
