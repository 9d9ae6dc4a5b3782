"""The plug points of synth: backends and simulators by name, models resolved once."""

from __future__ import annotations

import dataclasses

import pytest

import cli
from synth import backends, simulators
from synth.backends import BACKENDS, backend_for, make_generator, register_backend
from synth.generators import ProceduralGenerator
from synth.llm import UnknownModel, load_registry
from synth.llm.embedded import serving
from synth.run import resolve_models
from synth.run_config import RunConfig, RunError
from synth.simulation import make_simulator
from synth.simulators import SIMULATORS, audit_label, register_simulator


def _help(*command: str) -> str:
    parser = cli.build_parser()
    sub = parser._subparsers._group_actions[0].choices[command[0]]  # type: ignore[union-attr]
    return " ".join(sub.format_help().split())


def test_synthesize_help_lists_every_registered_backend():
    text = _help("synthesize")
    for entry in BACKENDS.values():
        assert entry.name in text and " ".join(entry.summary.split()) in text


def test_audit_sim_help_lists_every_named_simulator():
    text = _help("audit-sim")
    for entry in SIMULATORS.values():
        assert f"`{entry.name}`" in text and " ".join(entry.summary.split()) in text


def test_a_registered_backend_is_a_choice_and_makes_the_generator(monkeypatch):
    monkeypatch.setattr(backends, "BACKENDS", BACKENDS.copy())
    made = []

    @register_backend("toy", summary="a toy generator for this test")
    def toy(config, model):
        made.append(config.seed)
        return ProceduralGenerator()

    assert isinstance(make_generator(RunConfig(n=1, backend="toy", seed=4)), ProceduralGenerator) and made == [4]
    assert "toy" in _help("synthesize")
    with pytest.raises(ValueError, match="registered twice"):
        register_backend("toy", summary="again")(toy)


def test_a_registered_simulator_is_built_by_name(monkeypatch):
    monkeypatch.setattr(simulators, "SIMULATORS", SIMULATORS.copy())
    monkeypatch.setattr("synth.simulation.SIMULATORS", simulators.SIMULATORS)
    sentinel = object()
    register_simulator("oracle", summary="answers from execution")(lambda: sentinel)  # type: ignore[arg-type, return-value]
    assert make_simulator("oracle") is sentinel
    assert audit_label("oracle", "plain") == "oracle-oracle" and audit_label("local-4b", "plain") == "local-4b-plain"
    assert make_simulator("spec").name == "spec"


def test_a_model_given_to_the_procedural_backend_picks_the_model_backend():
    assert backend_for("procedural", "local-4b") == "llm"
    assert backend_for("procedural", None) == "procedural" and backend_for("llm", "x") == "llm"


def test_models_are_resolved_once_into_specs():
    registry = load_registry(user=False)
    models = resolve_models(RunConfig(n=1, backend="llm", model="local-4b", judge_model="gpt-4o-mini"), registry)
    assert models.generator is not None and models.generator.spec == registry["local-4b"]
    assert models.judge is not None and models.judge.name == "gpt-4o-mini" and not models.embedded()
    assert resolve_models(RunConfig(n=1, judge_model=None)).generator is None  # procedural: no model, no registry


@pytest.mark.parametrize(("config", "error", "match"), [
    (RunConfig(n=1, backend="llm"), RunError, "--backend llm needs --model NAME"),
    (RunConfig(n=1, backend="nope"), RunError, "unknown backend 'nope'; backends: procedural, llm"),
    (RunConfig(n=1, backend="llm", model="gpt-9"), UnknownModel, "unknown model 'gpt-9'"),
    (RunConfig(n=1, judge_model="gpt-9"), UnknownModel, "unknown model 'gpt-9'"),
])
def test_bad_model_choices_are_one_clear_error(config, error, match):
    with pytest.raises(error, match=match):
        resolve_models(config, load_registry(user=False))


def test_serving_starts_nothing_for_a_model_with_an_address():
    spec = load_registry(user=False)["local-4b"]
    with serving(spec) as url:
        assert url == spec.base_url
    with serving(dataclasses.replace(spec, embedded=True, base_url=""), "http://127.0.0.1:1/v1") as url:
        assert url == "http://127.0.0.1:1/v1"  # a server this session already runs is reused, not restarted
