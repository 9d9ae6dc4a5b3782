"""What resumable runs write and read: atomic files, JSONL journals, whether a run's process still lives."""
