"""The strata ladder: one table places every step, and the bands, buckets and groups all read it."""

import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.bench.strata import DELTA_BANDS, GROUPS, LADDER, RUNG_NAMES, delta_band, rung, rung_of, rung_of_strata
from catalog.models import Outcome, Strata


def test_bands():
    assert [delta_band(n) for n in (0, 1, 2, 3, 6, 7, 12, 13, 40)] == ["0", "1-2", "1-2", "3-6", "3-6", "7-12", "7-12",
                                                                        "13+", "13+"]
    assert DELTA_BANDS == typing.get_args(Strata.model_fields["delta_band"].annotation)  # the model's Literal agrees


def test_names_and_groups_in_report_order():
    assert RUNG_NAMES == ("failure", "no_change_args0", "no_change_args1", "no_change_args2+", "simple_1", "simple_2",
                          "medium_3", "medium_4", "medium_5", "medium_6", "difficult_7_12", "beyond_13+")
    assert GROUPS == ("failure", "no_change", "simple", "medium", "difficult", "beyond_13+")
    assert [r.name for r in LADDER if not r.envsimbench] == ["no_change_args2+", "beyond_13+"]


@given(st.sampled_from(["success", "failure"]), st.integers(0, 60), st.integers(0, 8))
def test_every_step_sits_on_exactly_one_rung_within_its_band(outcome, size, args):
    holders = [r for r in LADDER if r.holds(outcome, size, args)]
    assert len(holders) == 1 and rung_of(outcome, size, args) is holders[0]
    step = holders[0]
    if outcome == "success":
        assert step.band == delta_band(size) and step.changes_state == (size > 0)
        assert step.min_delta is not None and step.min_delta <= size
    else:
        assert step.name == "failure" and not step.changes_state  # a refusal is judged by its refusal, whatever its Δ


def test_strata_and_their_json_give_the_same_rung():
    strata = Strata.of(Outcome.SUCCESS, 0, 2)
    assert rung_of_strata(strata) is rung_of_strata(strata.model_dump()) is rung("no_change_args2+")


def test_bad_input_names_what_is_allowed():
    with pytest.raises(ValueError, match="'success' or 'failure'"):
        rung_of("crash", 0, 0)
    with pytest.raises(ValueError, match="negative"):
        delta_band(-1)
    with pytest.raises(KeyError, match="Known: failure"):
        rung("medium_9")
