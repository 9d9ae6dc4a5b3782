"""The base of the typed values that cross a file or process boundary (reports, specs, summaries).

A `JsonModel` is a pydantic model whose `model_dump(mode="json")` is the value's JSON form and
`model_validate` reads it back, so no type writes its own to_dict/from_dict. Non-finite floats
stay floats in that form (`json.dumps` writes them as `Infinity`/`NaN`, as it did for the
dataclasses these models replaced) instead of pydantic's default of turning them into null:
a boundary value hypothesis drew, kept in a counterexample, must read back as itself.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["JsonModel"]


class JsonModel(BaseModel):
    """A value with one JSON form: its fields in declaration order."""

    model_config = ConfigDict(ser_json_inf_nan="constants")
