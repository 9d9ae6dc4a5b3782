"""Everything generative: LLM backends, the LangGraph synthesis pipeline, the procedural backend,
the LLM simulator.

Not built yet (issues 5 and 6). Depends on `verifier`, `constraints` and `catalog`.
"""
