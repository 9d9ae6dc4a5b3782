"""FM and CM; each known flaw of the EnvSimBench-compatible CM is pinned by a test."""

from hypothesis import given

from catalog.state.delta import Delta, diff
from tests.catalog.state.test_delta import states
from verifier.audit.metrics import (
    envsimbench_config_match,
    feedback_match,
    op_scores,
    parse_delta,
    strict_config_match,
)

BEFORE = {"users": {"u1": {"name": "Ada", "email": "ada@x.org"}, "u2": {"name": "Bo"}}, "count": {"n": {"v": 2}}}


def test_feedback_match_ignores_quote_style_spacing_and_key_order():
    gold = "{'success': True, 'data': {'b': 1, 'a': None}}"
    assert feedback_match('{"data": {"a": null, "b": 1}, "success": true}', gold)
    assert feedback_match({"success": True, "data": {"a": None, "b": 1}}, gold)
    assert not feedback_match('{"success": true, "data": {"a": 0, "b": 1}}', gold)
    assert feedback_match("  plain text ", "plain text")
    assert not feedback_match("{'success': True}", "{'success': 1}")  # True is not 1


def test_an_extra_wrong_edit_passes_compat_but_fails_strict():
    after = {**BEFORE, "users": {**BEFORE["users"], "u1": {**BEFORE["users"]["u1"], "name": "Ada L."}}}
    predicted = [{"op": "modify", "path": ["users", "u1", "name"], "value": "Ada L."},
                 {"op": "modify", "path": ["users", "u2", "name"], "value": "WRONG"}]
    assert envsimbench_config_match(BEFORE, predicted, after) is True
    assert strict_config_match(BEFORE, predicted, after) is False


def test_no_change_samples_pass_compat_whatever_is_predicted():
    junk = [{"op": "delete", "path": ["users", "u1"]}]
    assert envsimbench_config_match(BEFORE, junk, BEFORE) is True
    assert strict_config_match(BEFORE, junk, BEFORE) is False
    assert strict_config_match(BEFORE, [], BEFORE) is True


def test_a_correct_deletion_fails_compat_but_passes_strict():
    after = {**BEFORE, "users": {"u1": BEFORE["users"]["u1"]}}
    predicted = [{"op": "delete", "path": ["users", "u2"]}]
    assert strict_config_match(BEFORE, predicted, after) is True
    assert envsimbench_config_match(BEFORE, predicted, after) is False


def test_keys_with_dots_are_split_by_compat_and_kept_by_strict():
    before = {"accounts": {"ada@x.org": {"balance": 1}}}
    after = {"accounts": {"ada@x.org": {"balance": 2}}}
    correct = [{"op": "modify", "path": ["accounts", "ada@x.org", "balance"], "value": 2}]
    nonsense = [{"type": "modified", "path": "accounts.ada@x.org.balance", "after": 2}]
    assert strict_config_match(before, correct, after) is True
    assert envsimbench_config_match(before, correct, after) is False  # gold path split on the dot
    assert envsimbench_config_match(before, nonsense, after) is True  # builds {"ada@x": {"org": ...}} and "matches"
    assert strict_config_match(before, nonsense, after) is False


def test_malformed_or_conflicting_deltas_score_false():
    assert strict_config_match(BEFORE, "not a list", BEFORE) is False
    assert strict_config_match(BEFORE, [{"op": "modify", "path": ["users", "nobody", "name"], "value": 1}], BEFORE) is False
    assert strict_config_match(BEFORE, [{"op": "teleport", "path": ["x"]}], BEFORE) is False
    assert envsimbench_config_match(BEFORE, "not a list", BEFORE) is False


def test_envsimbench_op_names_are_accepted_by_strict_with_key_list_paths():
    after = {**BEFORE, "count": {"n": {"v": 3}}}
    assert strict_config_match(BEFORE, [{"type": "modified", "path": ["count", "n", "v"], "after": 3}], after)
    assert parse_delta([{"type": "removed", "path": ["a"]}])[0].op == "delete"


def test_op_scores():
    gold = diff(BEFORE, {**BEFORE, "count": {"n": {"v": 3}}, "extra": {}})
    predicted = [{"op": "modify", "path": ["count", "n", "v"], "value": 3},
                 {"op": "modify", "path": ["users", "u1", "name"], "value": "x"}]
    scores = op_scores(predicted, gold)
    assert scores == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert op_scores([], []) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


@given(states, states)
def test_the_gold_delta_always_matches_under_strict_cm(before, after):
    ops = Delta.dump_python(diff(before, after), mode="json")
    assert strict_config_match(before, ops, after)
    assert op_scores(ops, diff(before, after))["f1"] == 1.0
