"""Benchmarks: each prints its figures next to its budget (DESIGN §6). Run from the repo root:
``.venv/bin/python -m bench.<name>``. They measure; tests never assert timings.
"""
