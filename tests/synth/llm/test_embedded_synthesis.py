"""Synthesis with the real embedded model (SmolLM2-135M via xllamacpp). Excluded by default:

    .venv/bin/python -m pytest -m embedded_llm tests/synth/llm/test_embedded_synthesis.py
"""

from __future__ import annotations

import pytest

from synth.run import RunConfig, synthesize

pytestmark = pytest.mark.embedded_llm


def test_three_envs_with_the_embedded_model_end_to_end(tmp_path):
    report = synthesize(RunConfig(n=3, backend="llm", model="smollm2-135m", catalog=str(tmp_path)), progress=False)
    assert report.proposed == sum(getattr(report, k) for k in ("registered", "rejected", "deduplicated", "existing", "failed"))
    assert report.stages["mine"].llm_calls >= 3 and report.tokens_in > 0 and report.tokens_out > 0
    assert report.mining.statements >= 3
    assert report.cost_usd == 0.0  # local model: no price
