"""The spec-only simulator decodes the states of bench samples on the host: it builds no foreign class."""

import gc

import pytest

from catalog.state.codec import TAG
from constraints.values import UnmodelledValue, decode_state

GADGET = "tempfile:_TemporaryFileCloser"


def test_a_sample_state_naming_a_foreign_class_is_unmodelled_and_builds_nothing(tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("host file")
    closer = {TAG: "object", "type": GADGET, "attrs": {"file": 1, "name": str(canary), "delete": True}}
    hidden_in_a_generator = {TAG: "random", "type": "random:Random", "state": {TAG: "tuple", "items": [3, closer]}}
    for state in ({"a": closer}, {"rng": hidden_in_a_generator}, {"rng": {TAG: "random", "type": GADGET, "state": []}}):
        with pytest.raises(UnmodelledValue):
            decode_state(state)
    gc.collect()
    assert canary.read_text() == "host file"
