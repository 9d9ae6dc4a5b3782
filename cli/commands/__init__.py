"""One module per command: its handler (`cmd_*`, which hands the work to a package) and its `add_parser`."""
