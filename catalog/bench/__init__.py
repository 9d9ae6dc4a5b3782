"""Benchmark data: items and simulator answers, the strata ladder, EnvSimBench's formats."""
