"""The command line's views of catalog objects, checked on the shipped reference envs (no subprocess)."""

import json

from catalog.models import FailureConvention
from catalog.render import (
    call_document,
    env_document,
    format_op,
    render_call,
    render_env,
    render_env_list,
    render_failure,
    render_search_hits,
)
from catalog.state.delta import DeltaOp
from catalog.store import Catalog


def test_env_list_is_a_table_with_the_reference_envs_marked(tmp_path):
    summaries, _ = Catalog(tmp_path).list()
    lines = render_env_list(summaries)
    assert lines[0].split() == ["ID", "KIND", "TOOLS", "STATES", "NAME"]
    library = next(line for line in lines if line.startswith("library "))
    assert library.endswith("(reference)") and " sql " in library
    assert render_env_list([]) == ["No environments."]


def test_show_lists_rules_tools_with_optional_params_states_and_tasks(tmp_path):
    handle = Catalog(tmp_path).get("library")
    lines = render_env(handle)
    assert lines[0].startswith(f"{handle.manifest.name} [library] - sql env")
    assert "Rules:" in lines and f"Tools ({len(handle.manifest.tools)}):" in lines
    assert any(line.startswith("  search_books(available_only?: boolean, query: string) [read]") for line in lines)
    tasks = lines.index(f"Tasks ({len(handle.tasks())}):")
    first = handle.tasks()[0]
    assert lines[tasks + 1].startswith(f"  {first.id} [{first.state}]: ")
    assert lines[tasks + 2] == f"    1. {first.solution[0].name}(" + json.dumps(
        first.solution[0].arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + ")"
    document = env_document(handle)
    assert document["id"] == "library" and document["path"] == str(handle.path)
    assert len(document["tasks"]) == len(handle.tasks())


def test_failure_convention_is_one_line_per_kind():
    failure = FailureConvention(exceptions=["ValueError"], error_prefixes=["Error:"], error_keys=["error"])
    assert render_failure(failure) == ["  failure: raised exceptions: ValueError",
                                       "  failure: returned strings starting with: 'Error:'",
                                       "  failure: returned dicts with keys: error"]
    assert render_failure(None) == [] and render_failure(FailureConvention()) == []


def test_a_call_shows_outcome_observation_and_key_list_paths(tmp_path):
    handle = Catalog(tmp_path).get("library")
    runtime = handle.runtime()
    runtime.reset(handle.state("default"))
    action = {"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}}
    result = runtime.call(action, snapshot=True)
    lines = render_call("library", "default", action, result, show_state=True)
    assert lines[0] == 'env library, state default: borrow_book({"book_id":"B010","member_id":"M002"})'
    assert lines[1] == "outcome: success"
    assert '  modify ["books", "B010", "status"] = "on_loan"' in lines
    assert lines[-2] == "next state:" and '"books": {' in lines[-1]
    document = call_document("library", "default", action, result, show_state=False)
    assert document["outcome"] == "success" and "next_state" not in document
    assert {"op": "modify", "path": ["books", "B010", "status"], "value": "on_loan"} in document["delta"]


def test_a_key_with_a_dot_stays_one_key():
    assert format_op(DeltaOp("add", ("settings", "a.b"), {"x": 1})) == '  add    ["settings", "a.b"] = {"x":1}'


def test_search_hits():
    assert render_search_hits([]) == ["no environments match"]
    assert render_search_hits([{"score": 0.91234, "id": "hotel", "name": "Hotel"}]) == [f"0.912  {'hotel':<32} Hotel"]


def test_an_optional_parameter_reads_as_its_type_or_null():
    from catalog.render import _schema_type

    assert _schema_type({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}) == "integer|null"
    assert _schema_type({"type": "string"}) == "string" and _schema_type({}) == "any"
