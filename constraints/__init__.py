"""Static understanding of tool code: libcst constraint specs and the spec-only simulator.

Depends only on `catalog`. Extraction reads source and never imports it; the completeness
measurement runs env code through the catalog runtime.
"""

from constraints.completeness import completeness, spec_of
from constraints.extract import ExtractionError, extract_spec, template_regex
from constraints.simulate import Prediction, SpecSimulator, item_spec
from constraints.spec import ConstraintSpec, Effect, Guard, Param, TableSpec, ToolSpec

__all__ = ["extract_spec", "ExtractionError", "template_regex", "SpecSimulator", "Prediction", "completeness",
           "spec_of", "item_spec", "ConstraintSpec", "ToolSpec", "TableSpec", "Param", "Guard", "Effect"]
