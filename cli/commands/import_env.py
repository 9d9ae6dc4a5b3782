"""`import` (and `catalog import`): an external environment in one of four conventions becomes a catalog env."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.common import open_catalog
from cli.output import print_json, print_lines


def cmd_import(args: argparse.Namespace) -> int:
    from catalog.importing.importer import import_env
    from catalog.names import check_env_id
    from catalog.render import import_document, render_import
    from sandbox.loadcheck import sandbox_load_check

    if args.id is not None:
        check_env_id(args.id)  # before the catalog folder is created
    report = import_env(Path(args.path), open_catalog(args, write=True), class_name=args.class_name,
                        configs=[Path(c) for c in args.config or []], env_id=args.id, replace=args.replace,
                        check=None if args.trusted else sandbox_load_check, convention=args.convention,
                        package_root=Path(args.package_root) if args.package_root else None,
                        allow_modules=args.allow_module or [], failure_exceptions=args.failure_exception or [],
                        error_prefixes=args.error_prefix or [])
    if report.optional_missing:
        print(f"warning: optional imports not installed (the module's fallback is used): "
              f"{', '.join(report.optional_missing)}", file=sys.stderr)
    if args.json:
        print_json(import_document(report))
    else:
        print_lines(render_import(report))
    return 0


IMPORT_DESCRIPTION = (
    "Copy PATH.py (and the sibling modules it imports, with their package path) into a new catalog env, load it "
    "with each init config in the sandbox to check it works, and register it. Conventions: class (state in instance "
    "attributes), tool_classes (one class per tool with invoke(data, ...) and get_info()), toolkit (a class whose "
    "decorated methods are tools, built with a pydantic db), functions (module-level functions over a module-level "
    "dict); detected unless --convention is given. How the env signals failure (exceptions, error dicts, error "
    "string prefixes) is read from its code and can be added to with --failure-exception and --error-prefix.")


def add_import_arguments(importer: argparse.ArgumentParser) -> None:
    importer.add_argument("path", metavar="PATH.py", help="module defining the environment")
    importer.add_argument("--convention", choices=("class", "tool_classes", "toolkit", "functions"),
                          help="force a convention (default: detected from the code)")
    importer.add_argument("--class", dest="class_name", metavar="NAME", help="the entry when several fit: the env "
                          "or toolkit class, the tool list, or the state dict (default: the only one)")
    importer.add_argument("--config", action="append", metavar="CONFIG.json|DIR",
                          help="init config (repeatable); one state per file, or per item of a JSON list; an "
                               "EnvScaler record's init_config is used; a folder of JSON files is one state with "
                               "a key per file (users.json -> users)")
    importer.add_argument("--package-root", metavar="DIR", help="the folder the package path starts from (the one "
                          "holding pkg/ for `from pkg.sub.module import X`; default: found by walking up while "
                          "__init__.py exists)")
    importer.add_argument("--allow-module", action="append", metavar="NAME", help="an installed third-party module "
                          "this env may import in the sandbox (repeatable)")
    importer.add_argument("--failure-exception", action="append", metavar="NAME",
                          help="an exception type the env raises to refuse a call (repeatable; added to those found)")
    importer.add_argument("--error-prefix", action="append", metavar="TEXT",
                          help="a returned string starting with TEXT is a failure (repeatable; added to those found)")
    importer.add_argument("--id", metavar="ENV_ID", help="catalog id (default: from the class name)")
    importer.add_argument("--replace", action="store_true", help="overwrite an existing env with this id")
    importer.add_argument("--json", action="store_true", help="print the result as JSON")
    importer.add_argument("--trusted", action="store_true", help="load the module in this process to check it, "
                          "outside the sandbox (only for code you vouch for)")
    importer.set_defaults(handler=cmd_import)


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`import PATH.py`."""
    importer = commands.add_parser(
        "import", parents=[common], help="turn an external environment (four conventions) into a catalog env",
        description=IMPORT_DESCRIPTION)
    add_import_arguments(importer)
