"""envforge command line (`python cli.py --help`): one module per command in cli/commands/, the shared parts here.

`main` is what the root `cli.py`, `python -m cli` and the `envforge` script run.
"""

from cli.entry import main
from cli.errors import UserError
from cli.parser import build_parser

__all__ = ["UserError", "build_parser", "main"]
