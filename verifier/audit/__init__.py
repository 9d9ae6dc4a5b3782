"""Simulator audits on benchmark samples: feeding a simulator, FM/CM metrics, resumable results, reports."""
