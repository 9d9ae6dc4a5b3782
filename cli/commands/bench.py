"""`bench export|import`: verified benchmark samples out of the catalog, and EnvSimBench files in."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import Field

from catalog.jsonmodel import JsonModel
from cli.arguments import POSITIVE, SHARE
from cli.errors import UserError
from cli.executor_options import add_executor_options, executor_spec
from cli.output import print_json
from cli.samples import default_bench, export_with_progress


def _write_items(items: list[Any], path: Path, fmt: str) -> int:
    from catalog.bench.envsimbench import write_envsimbench, write_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(items, path) if fmt == "jsonl" else write_envsimbench(items, path)


def _split_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(f"{out.stem}.train{out.suffix}"), out.with_name(f"{out.stem}.test{out.suffix}")


def cmd_bench_export(args: argparse.Namespace) -> int:
    from catalog.bench.envsimbench import split_by_env
    from verifier.samples.compositions import Composition, CompositionError
    from verifier.samples.export import export_failures
    from verifier.samples.report import ExportReport, FailuresReport, render_export_report, render_written
    from verifier.simaudit.export import is_property_audit, load_counterexamples

    fmt = args.format
    suffix = ".jsonl" if fmt == "jsonl" else ".json"
    out = Path(args.out) if args.out else default_bench(args, write=True).with_suffix(suffix)
    report: ExportReport | FailuresReport
    if args.from_audit:
        if not args.failures:
            raise UserError("--from-audit needs --failures (the steps the audited simulator got wrong)")
        try:
            audit_dir = Path(args.from_audit)  # a property audit's are its minimal counterexamples
            items = load_counterexamples(audit_dir) if is_property_audit(audit_dir) else export_failures(audit_dir)
        except FileNotFoundError as exc:
            raise UserError(f"{args.from_audit}: no audit results there ({exc})") from exc
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
