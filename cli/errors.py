"""The CLI's own error for bad input (main prints every EnvforgeError as one line, exit status 1)."""

from __future__ import annotations

from catalog.errors import EnvforgeError


class UserError(EnvforgeError):
    """An error caused by input; printed without a traceback, exit status 1."""
