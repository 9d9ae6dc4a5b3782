"""Static understanding of tool code: libcst extraction of constraint specs, the spec-only simulator.

Not built yet (issue 3). Depends only on `catalog`.
"""
