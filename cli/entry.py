"""`main`: parse, run the command's handler, and turn every error a user can fix into one line and exit status 1."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from catalog.errors import EnvforgeError
from catalog.store import EnvExists
from cli.parser import build_parser
from sandbox.isolation import set_default_isolation


def _bad_input(message: str) -> int:
    """Print bad input as one line on stderr (however the message was wrapped) and return exit status 1."""
    print(f"envforge: {' '.join(message.split())}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: the process's arguments) and return its exit status."""
    try:
        args = build_parser().parse_args(argv)
        if not hasattr(args, "catalog"):
            args.catalog = None
        if getattr(args, "unsafe_no_isolation", False):
            set_default_isolation("none")
            print("warning: --unsafe-no-isolation: env code runs without the OS sandbox", file=sys.stderr)
        return int(args.handler(args))
    except EnvExists as exc:  # only `import` writes without replacing: name its flag, not the Python keyword
        return _bad_input(f"env {exc.env_id!r} already exists in {exc.root}: pass --replace to overwrite it, or "
                          f"--id to import it under another id")
    except EnvforgeError as exc:  # every error a user can fix: one line, exit status 1
        return _bad_input(str(exc))
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the user gave cannot be read or written (permissions, a file for a folder)
        return _bad_input(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
