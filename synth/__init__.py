"""Everything generative: backends, the synthesis pipeline, the LLM simulator.

LLM backends, the LangGraph pipeline, the procedural backend, the LLM simulator.

Not built yet (issues 5 and 6). Depends on `verifier`, `constraints` and `catalog`.
"""
