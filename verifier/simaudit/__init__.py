"""Property-based simulator audits: hypothesis drives the inputs, execution and properties judge the answers.

`run_property_audit(catalog, simulator, out, PropertyAudit(...))` searches each env for minimal
(state, action) inputs on which the simulator breaks a property of `PROPERTIES` (checks.py, a
registry), within a call/token `Budget`, and writes the report; `load_counterexamples(out)` turns
its counterexamples into benchmark items.
"""

from verifier.simaudit.answers import Budget
from verifier.simaudit.checks import PROPERTIES, SimProperty, simulator_property
from verifier.simaudit.export import is_property_audit, load_counterexamples
from verifier.simaudit.report import property_summary, render_markdown, render_summary
from verifier.simaudit.run import PropertyAudit, run_property_audit

__all__ = ["Budget", "PROPERTIES", "PropertyAudit", "SimProperty", "is_property_audit", "load_counterexamples",
           "property_summary", "render_markdown", "render_summary", "run_property_audit", "simulator_property"]
