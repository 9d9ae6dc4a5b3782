"""`python -m cli`: the same command line as `python cli.py`."""

from cli.entry import main

if __name__ == "__main__":  # not when a spawned worker process re-imports the main module
    raise SystemExit(main())
