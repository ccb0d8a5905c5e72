"""Quality benchmarks of the local engine (run by bench/bench_quality.py)."""
