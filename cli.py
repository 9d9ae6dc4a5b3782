"""envforge command line: `python cli.py --help` (the commands are in the cli/ package)."""

from cli import main

if __name__ == "__main__":  # not when a spawned worker process re-imports the main module
    raise SystemExit(main())
