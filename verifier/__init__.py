"""Executing and checking: sandbox, FM/CM metrics, property tests, mutation testing, audits.

Not built yet (issue 4). Depends on `constraints` and `catalog`.
"""
