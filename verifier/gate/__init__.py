"""The quality gate: property checks, intent and guard search, typed values, mutation testing, its report."""
