"""Smriti's rerunnable benchmark: seed a database directly, measure through the real app.

Run ``python -m bench --help`` (or ``make bench ARGS=...``); see docs/benchmarks.md.
"""
