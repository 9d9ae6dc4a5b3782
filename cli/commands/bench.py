"""`bench export|import|sft`: verified benchmark samples out of the catalog, EnvSimBench files in, SFT sets out."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import Field

from catalog.jsonmodel import JsonModel
from cli.arguments import POSITIVE, SHARE
from cli.common import check_out, open_catalog
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from cli.samples import default_bench, export_with_progress, load_bench


def _write_items(items: list[Any], path: Path, fmt: str) -> int:
    from catalog.bench.envsimbench import write_envsimbench, write_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(items, path) if fmt == "jsonl" else write_envsimbench(items, path)


def _split_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(f"{out.stem}.train{out.suffix}"), out.with_name(f"{out.stem}.test{out.suffix}")


def _audit_items(folder: str) -> list[Any]:
    """The samples an audit got wrong: a property audit's minimal counterexamples, else its wrong answers."""
    from verifier.samples.export import export_failures
    from verifier.simaudit.export import is_property_audit, load_counterexamples

    try:
        audit_dir = Path(folder)
        return load_counterexamples(audit_dir) if is_property_audit(audit_dir) else export_failures(audit_dir)
    except FileNotFoundError as exc:
        raise UserError(f"{folder}: no audit results there ({exc})") from exc


def _bench_envs(where: str) -> set[str]:
    """The envs of a benchmark file or an audit folder (exported samples', or a property audit's envs)."""
    from verifier.audit.results import RESULTS_FILE, load_results
    from verifier.simaudit.export import is_property_audit, load_counterexamples

    path = Path(where)
    if path.is_file():
        envs = {item.env_id for item in load_bench(path)}
    elif is_property_audit(path):
        envs = {item.env_id for item in load_counterexamples(path)}
        try:  # the envs it searched, not only those where it found a counterexample
            envs |= set(json.loads((path / "report.json").read_text(encoding="utf-8")).get("envs", []))
        except (OSError, ValueError, AttributeError, TypeError):
            pass
    elif (path / RESULTS_FILE).is_file():
        envs = {str(record["item"]["env_id"]) for record in load_results(path).values()}
    else:
        raise UserError(f"--exclude-envs-of {where}: neither a benchmark file nor an audit folder")
    if not envs:
        raise UserError(f"--exclude-envs-of {where}: no samples there, so no envs to keep out")
    return envs


def _with_margin(composition: Any) -> Any:
    """The quotas an export fills for a split: ~10% more than the mixture, so dropped samples leave none short."""
    from verifier.samples.compositions import Composition

    counts = {b: c + math.ceil(c / 10) + 1 if c else 0 for b, c in composition.counts.items()}
    return Composition(composition.name, counts, composition.optional, composition.groups)


def cmd_bench_sft(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import split_envs
    from synth.simulation.sft import chars_counter, tokenizer_counter
    from synth.simulation.sft_set import SftSet, SftSettings, build_split, check_out_dir, write_set
    from verifier.samples.compositions import Composition, CompositionError

    out = Path(args.out)
    check_out_dir(out)
    check_out(out, "--out")
    n_test = round(args.n * args.test_share)
    try:
        wanted = {"train": Composition.parse(args.mixture, args.n), "test": Composition.parse(args.mixture, n_test)}
    except CompositionError as exc:
        raise UserError(str(exc)) from exc
    counter = tokenizer_counter(args.tokenizer) if args.tokenizer else chars_counter()
    held_out: set[str] = set()
    for where in args.exclude_envs_of or []:
        held_out |= _bench_envs(where)
    added = _audit_items(args.from_audit) if args.from_audit else []
    fraction = args.test_share / (1 + args.test_share)  # test holds n*share of n*(1+share) samples
    pools: dict[str, list[Any]] = {"train": [], "test": []}
    if args.samples:
        items = load_bench(Path(args.samples))
        sizes = dict(Counter(item.env_id for item in items))
        test_envs = split_envs(sizes, fraction, args.seed)
        for item in items:
            side = "test" if item.env_id in test_envs else "train"
            if side == "test" or item.env_id not in held_out:
                pools[side].append(item)
    else:
        summaries, _ = open_catalog(args).list()
        ids = sorted(s.id for s in summaries)
        test_envs = split_envs({env: 1 for env in ids}, fraction, args.seed)
        envs = {"train": [e for e in ids if e not in test_envs and e not in held_out],
                "test": [e for e in ids if e in test_envs]}
        for side in ("train", "test"):
            if envs[side] and wanted[side].total:
                print(f"exporting the {side} split's samples from {len(envs[side])} envs", file=sys.stderr)
                pools[side] = export_with_progress(args, _with_margin(wanted[side]), seed=args.seed,
                                                   workers=args.workers, env_ids=envs[side],
                                                   executor=executor_spec(args)).items
    extra = {"train": [i for i in added if i.env_id not in test_envs and i.env_id not in held_out],
             "test": [i for i in added if i.env_id in test_envs]}
    settings = SftSettings(args.mixture, args.n, args.mode, args.test_share, args.seed, args.format, args.max_tokens,
                           args.samples or "export")
    splits = {side: build_split(pools[side], wanted[side], args.mode, counter, seed=args.seed,
                                max_tokens=args.max_tokens, added=extra[side]) for side in ("train", "test")}
    report = write_set(out, SftSet(settings, splits, counter.name, held_out), wanted)
    short = {side: report["splits"][side]["short"] for side in ("train", "test") if report["splits"][side]["short"]}
    if args.json:
        print_json(report)
    else:
        for side in ("train", "test"):
            split = report["splits"][side]
            groups = ", ".join(f"{g} {c['written']}/{c['wanted']}" for g, c in split["groups"].items())
            print(f"{side}: {split['samples']} samples from {split['envs']} envs ({groups})"
                  + (f", {split['added_from_audit']} from --from-audit" if split["added_from_audit"] else ""))
            if split["short"]:
                print(f"  short: {split['short']}")
            if split["dropped"]:
                print(f"  dropped: {split['dropped']}")
        print(f"tokens by {report['token_counter']}; env-disjoint: {report['env_disjoint']}")
        print(f"wrote {out}/train.jsonl, test.jsonl, *_samples.jsonl (audit-sim --bench), dataset_info.json "
              "(LLaMA-Factory), report.json")
    return 1 if short else 0


def cmd_bench_export(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import split_by_env
    from verifier.samples.compositions import Composition, CompositionError
    from verifier.samples.report import ExportReport, FailuresReport, render_export_report, render_written

    fmt = args.format
    suffix = ".jsonl" if fmt == "jsonl" else ".json"
    out = Path(args.out) if args.out else default_bench(args, write=True).with_suffix(suffix)
    report: ExportReport | FailuresReport
    if args.from_audit:
        if not args.failures:
            raise UserError("--from-audit needs --failures (the steps the audited simulator got wrong)")
        items = _audit_items(args.from_audit)
        report = FailuresReport(from_audit=args.from_audit, failures=len(items))
    else:
        if args.n is None:
            raise UserError("give --n N (how many samples), or --from-audit DIR --failures")
        try:
            composition = Composition.parse(args.composition, args.n)
        except CompositionError as exc:
            raise UserError(str(exc)) from exc
        result = export_with_progress(args, composition, seed=args.seed, workers=args.workers,
                                       env_ids=args.env or None, executor=executor_spec(args))
        items, report = result.items, result.report
    written = {}
    if args.split_by == "env":
        train, test = split_by_env(items, test_fraction=args.test_fraction, seed=args.seed)
        for part, path in zip((train, test), _split_paths(out), strict=True):
            written[str(path)] = _write_items(part, path, fmt)
    else:
        written[str(out)] = _write_items(items, out, fmt)
    report.written = written
    if args.json:
        print_json(report.model_dump(mode="json"))
    else:
        if isinstance(report, ExportReport):
            print(render_export_report(report))
        print(render_written(written, fmt))
    return 0 if report.quotas_met else 1


class ImportSummary(JsonModel):
    """What `bench import --json` prints: the file, its usable and unusable samples, and (with --out) how many were written."""

    file: str
    usable: int
    unusable: int
    problems: list[str]
    envs: int
    written: int | None = Field(default=None, exclude_if=lambda v: v is None)


def cmd_bench_import(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import read_envsimbench, read_jsonl

    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    items, problems = read_jsonl(path) if path.suffix == ".jsonl" else read_envsimbench(path)
    summary = ImportSummary(file=str(path), usable=len(items), unusable=len(problems),
                            problems=[str(p) for p in problems], envs=len({i.env_id for i in items}))
    if args.out:
        summary.written = _write_items(items, Path(args.out), "jsonl")
    if args.json:
        print_json(summary.model_dump(mode="json"))
    else:
        print(f"{path}: {len(items)} usable samples from {summary.envs} envs, {len(problems)} unusable")
        for problem in problems[:20]:
            print(f"  {problem}")
        if args.out:
            print(f"wrote {summary.written} samples to {args.out} (jsonl)")
    return 0 if items else 1


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`bench` and its actions."""
    bench = commands.add_parser("bench", parents=[common], help="export/import verified benchmark samples "
                                                                "(EnvSimBench format, JSONL)")
    bench_actions = bench.add_subparsers(dest="bench_command", metavar="ACTION", required=True)
    export = bench_actions.add_parser(
        "export", parents=[common], help="verified samples from catalog envs, to stratum quotas",
        description="Search the catalog's envs for calls that land in each stratum (failure, no-change by argument "
                    "count, |Δ| 1..12), execute them in the sandbox, re-execute each chosen sample twice (kept only "
                    "if identical), and fill the composition's quotas spread over as many envs as possible. "
                    "Exit status 1 if a quota could not be met.")
    export.add_argument("--n", type=POSITIVE, help="how many samples (quotas scale; envsimbench is exact at 400)")
    export.add_argument("--composition", default="envsimbench", metavar="envsimbench|uniform|FILE",
                        help="stratum quotas: envsimbench (default), uniform, or a JSON file {bucket: count}")
    export.add_argument("--format", choices=("jsonl", "envsimbench"), default="jsonl",
                        help="jsonl: envforge's own (key-list paths; SFT data is built from it); envsimbench: their "
                             "JSON fields (dotted changes, change_count, env_code)")
    export.add_argument("--out", metavar="FILE", help="output file (default: <catalog>/.bench/samples.jsonl, which "
                                                     "audit-sim reads by default)")
    export.add_argument("--split-by", choices=("env",), help="write FILE.train / FILE.test with disjoint envs")
    export.add_argument("--test-fraction", type=SHARE, default=0.3, help="with --split-by env (default: 0.3)")
    export.add_argument("--env", action="append", metavar="ENV_ID", help="only these envs (repeatable)")
    export.add_argument("--from-audit", metavar="DIR", help="with --failures: the samples an audit got wrong")
    export.add_argument("--failures", action="store_true", help="with --from-audit")
    export.add_argument("--seed", type=int, default=0, help="seed of the search (default: 0)")
    export.add_argument("--workers", type=POSITIVE, default=2, help="sandbox workers (default: 2)")
    add_executor_options(export, "sandbox jobs")
    export.add_argument("--json", action="store_true", help="print the export report as JSON")
    export.set_defaults(handler=cmd_bench_export)
    importing = bench_actions.add_parser("import", parents=[common], help="read EnvSimBench JSON (or envforge "
                                                                          "JSONL) and report unusable samples")
    importing.add_argument("file", metavar="FILE")
    importing.add_argument("--out", metavar="FILE.jsonl", help="also write the usable samples as envforge JSONL")
    importing.add_argument("--json", action="store_true", help="print JSON")
    importing.set_defaults(handler=cmd_bench_import)
    _add_sft_parser(bench_actions, common)


def _add_sft_parser(bench_actions: Any, common: argparse.ArgumentParser) -> None:
    sft = bench_actions.add_parser(
        "sft", parents=[common], help="SFT sets for simulators: the audit's prompts, the executed truth as targets",
        description="Build chat-format SFT sets for a simulator from verified samples: each prompt is what audit-sim "
                    "sends in that --mode (the same prompt builders), each target the sample's executed observation "
                    "and state change in that mode's answer schema, kept only if it scores FM and strict CM on the "
                    "audit's own scorer. Train and test never share an env. Writes DIR/train.jsonl and "
                    "DIR/test.jsonl (OpenAI messages: TRL SFT, HF datasets), their samples for audit-sim --bench "
                    "(DIR/train_samples.jsonl, DIR/test_samples.jsonl), DIR/dataset_info.json (LLaMA-Factory) "
                    "and DIR/report.json (counts per stratum and split, what ran short). Exit status 1 if a quota "
                    "could not be met (the files are still written).")
    sft.add_argument("--mixture", default="balance2", metavar="balance2|uniform|FILE.json",
                     help="stratum counts: balance2 (default; EnvSimBench's SFT mix, 1K failure + 1K no-change + 2K "
                          "simple + 2.23K complex change of 6.23K, scaled), uniform, or a JSON file {stratum: count}")
    sft.add_argument("--n", type=POSITIVE, required=True, help="train samples (the mixture scaled to N)")
    sft.add_argument("--mode", choices=("constrained", "plain"), default="constrained",
                     help="the simulator prompt mode the set trains (audit-sim --mode); default: constrained")
    sft.add_argument("--out", required=True, metavar="DIR", help="the set's folder (new, empty, or an earlier set)")
    sft.add_argument("--samples", metavar="FILE", help="take the samples from this bench file (envforge JSONL or "
                                                      "EnvSimBench JSON, e.g. <catalog>/.bench/samples.jsonl) instead "
                                                      "of exporting them from the catalog")
    sft.add_argument("--test-share", type=SHARE, default=0.1,
                     help="test samples as a share of N, from envs train never sees (default: 0.1)")
    sft.add_argument("--max-tokens", type=POSITIVE, metavar="T", help="drop samples longer than T tokens (prompt + "
                                                                      "target), counted in the report")
    sft.add_argument("--tokenizer", metavar="FILE|DIR", help="count tokens with this tokenizers file (tokenizer.json, "
                                                            "or a folder holding one); default: characters / 3")
    sft.add_argument("--from-audit", metavar="DIR", help="also add the samples this audit got wrong (a property "
                                                         "audit's minimal counterexamples), on their env's side")
    sft.add_argument("--exclude-envs-of", action="append", metavar="BENCH|AUDIT_DIR",
                     help="keep the envs of this bench file or audit folder out of train (repeatable); the set is "
                          "refused if its train split would hold one")
    sft.add_argument("--format", choices=("openai", "sharegpt"), default="openai",
                     help="openai: {messages: [{role, content}]} (default); sharegpt: {conversations: [{from, "
                          "value}], system}")
    sft.add_argument("--seed", type=int, default=0, help="seed of the split, the export and the order (default: 0)")
    sft.add_argument("--workers", type=POSITIVE, default=2, help="sandbox workers of the export (default: 2)")
    add_executor_options(sft, "sandbox jobs of the export")
    sft.add_argument("--json", action="store_true", help="print the report as JSON")
    sft.set_defaults(handler=cmd_bench_sft)
