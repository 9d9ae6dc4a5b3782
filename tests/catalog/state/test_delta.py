"""Property tests of diff/apply over random nested JSON states (keys with dots, slashes, unicode)."""

import copy

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from catalog.state.delta import Delta, DeltaConflict, DeltaOp, apply_delta, diff
from catalog.state.jsonable import json_equal

keys = st.one_of(
    st.text(min_size=0, max_size=6),
    st.sampled_from(["a.b", "x/y", "ü.ñ", "", ".", "..", "k.0", "日本"]),
)
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(max_size=5),
)
json_values = st.recursive(
    leaves,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=4)),
    max_leaves=12,
)
states = st.dictionaries(keys, st.dictionaries(keys, json_values, max_size=4), max_size=4)


@given(states, states)
def test_apply_of_diff_gives_target(before, after):
    assert json_equal(apply_delta(before, diff(before, after)), after)


@given(states)
def test_diff_of_equal_states_is_empty(state):
    assert diff(state, copy.deepcopy(state)) == []


@given(states, states)
def test_apply_never_mutates_its_input(before, after):
    kept = copy.deepcopy(before)
    apply_delta(before, diff(before, after))
    assert json_equal(before, kept)


def _dict_paths(node, prefix=()):
    """All paths to keys of nested dicts (not into lists)."""
    for key, value in node.items():
        yield (*prefix, key)
        if isinstance(value, dict):
            yield from _dict_paths(value, (*prefix, key))


def _get(node, path):
    for key in path:
        node = node[key]
    return node


@settings(max_examples=200)
@given(states, st.data())
def test_size_follows_the_counting_rules(state, data):
    """Independent mutations at unrelated paths give exactly one op each, of the right kind."""
    paths = sorted(_dict_paths(state))
    chosen: list[tuple] = []
    for path in data.draw(st.lists(st.sampled_from(paths), max_size=5, unique=True) if paths else st.just([])):
        if not any(path[: len(c)] == c or c[: len(path)] == path for c in chosen):
            chosen.append(path)
    target = copy.deepcopy(state)
    expected = []
    for path in chosen:
        parent = _get(target, path[:-1])
        old = parent[path[-1]]
        kind = data.draw(st.sampled_from(["delete", "modify", "list"]))
        if kind == "delete":
            del parent[path[-1]]
            expected.append(DeltaOp("delete", path))
        else:
            new = ["changed", len(expected)] if kind == "list" else "\x00changed"
            if isinstance(old, list) and isinstance(new, list) and json_equal(old, new):
                new = new + [0]
            parent[path[-1]] = new
            expected.append(DeltaOp("modify", path, new))
    fresh = "\x01new"
    assume(fresh not in state)
    target[fresh] = {"k": {"nested": [1, 2]}}
    expected.append(DeltaOp("add", (fresh,), {"k": {"nested": [1, 2]}}))
    delta = diff(state, target)
    assert sorted(delta, key=lambda o: o.path) == sorted(expected, key=lambda o: o.path)
    assert len(delta) == len(chosen) + 1


@given(states, st.data())
def test_deletions_round_trip(state, data):
    paths = sorted(_dict_paths(state))
    if not paths:
        return
    path = data.draw(st.sampled_from(paths))
    smaller = copy.deepcopy(state)
    del _get(smaller, path[:-1])[path[-1]]
    removal = diff(state, smaller)
    assert removal == [DeltaOp("delete", path)]
    assert json_equal(apply_delta(state, removal), smaller)
    restore = diff(smaller, state)
    assert restore == [DeltaOp("add", path, _get(state, path))]
    assert json_equal(apply_delta(smaller, restore), state)


@given(st.lists(st.builds(DeltaOp, st.sampled_from(["add", "modify", "delete"]),
                          st.lists(keys, min_size=1, max_size=3).map(tuple), json_values)))
def test_ops_round_trip_through_json(ops):
    for op in ops:
        back = DeltaOp.model_validate(op.model_dump(mode="json"))
        assert back.op == op.op and back.path == op.path
        if op.op != "delete":
            assert json_equal(back.value, op.value)


def test_dotted_and_unicode_keys_are_separate_paths():
    before = {"cfg": {"a.b": 1, "a": {"b": 2}, "ü/x": 3}}
    after = {"cfg": {"a.b": 10, "a": {"b": 2}, "ü/x": 30}}
    assert diff(before, after) == [DeltaOp("modify", ("cfg", "a.b"), 10), DeltaOp("modify", ("cfg", "ü/x"), 30)]


def test_a_changed_list_is_one_modify_and_a_new_key_one_add():
    before = {"t": {"r": {"tags": [1, 2], "n": 1}}}
    after = {"t": {"r": {"tags": [1, 2, 3], "n": 1}, "s": {"x": {"y": 1}}}}
    assert Delta.dump_python(diff(before, after), mode="json") == [
        {"op": "modify", "path": ["t", "r", "tags"], "value": [1, 2, 3]},
        {"op": "add", "path": ["t", "s"], "value": {"x": {"y": 1}}},
    ]


def test_bool_and_int_differ_but_int_and_float_do_not():
    assert diff({"c": {"v": 1}}, {"c": {"v": True}}) == [DeltaOp("modify", ("c", "v"), True)]
    assert diff({"c": {"v": 1}}, {"c": {"v": 1.0}}) == []


@pytest.mark.parametrize("op", [DeltaOp("modify", ("c", "zz"), 1), DeltaOp("delete", ("c", "zz")),
                                DeltaOp("add", ("c", "k"), 1), DeltaOp("modify", ("c", "k", "deeper"), 1)])
def test_ops_that_do_not_fit_raise_a_conflict(op):
    with pytest.raises(DeltaConflict):
        apply_delta({"c": {"k": 5}}, [op])


def test_bad_ops_are_rejected_with_a_clear_message():
    with pytest.raises(ValueError, match="Unknown delta op"):
        DeltaOp("rename", ("a",))
    with pytest.raises(ValueError, match="non-empty tuple"):
        DeltaOp("add", ())
    with pytest.raises(ValueError, match="needs a 'value'"):
        DeltaOp.model_validate({"op": "add", "path": ["a"]})
