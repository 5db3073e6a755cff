"""On-demand benchmarks: `python -m benchmarks` (or `make benchmarks`) runs every bench_*.py.

Each prints its measurements and ratios against a reference measured in the same run; none
is a test, and none fails on a slow machine.
"""
