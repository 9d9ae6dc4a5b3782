"""Adapters for RL trainers: one small module per library over `serving.gym` (no second runtime).

Each module imports its trainer library only when used, so `import serving` never needs them.
"""
