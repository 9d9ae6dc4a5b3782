"""Verified benchmark samples: call compositions, export by stratum, the export report."""
