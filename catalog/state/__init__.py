"""States and deltas: canonical JSON, the lossless codec of class-env values, deltas, change tracking."""
