"""Compile: running a plan's jobs (the scheduler with the job cache, the local pool, a Dask farm, the shared tier)."""
