"""Everything generative: LLM backends, the synthesis pipeline, the procedural backend, simulators.

- `synth.llm`: the model registry, the OpenAI-compatible client with cost accounting, the
  embedded SmolLM2 server;
- `synth.procedural` (its ontology, blueprint and compiler): the procedural (no-model) backend;
- `synth.pipeline`, `synth.run`, `synth.report`: the LangGraph graph, the resumable run driver
  and the yield/cost report;
- `synth.simulation`: the spec-only and LLM simulators that `audit-sim` measures.

The top layer: depends on every package below it (verifier, serving, executors, sandbox,
constraints, catalog), never the other way round.
"""
