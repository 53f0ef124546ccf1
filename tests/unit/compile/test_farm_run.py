"""A farm run's sizing rules and what it reports (the loop itself runs on a cluster in tests/test_farm*.py)."""

from __future__ import annotations

import math

import pytest

from pipeline.compile.farm_run import (
    IN_FLIGHT_PER_WORKER,
    MAX_BATCH,
    OVERHEAD_SHARE,
    TIMEOUT_FACTOR,
    FarmStats,
    batch_deadline,
    batch_size,
)


def test_a_batch_of_one_before_anything_is_measured() -> None:
    assert batch_size(0.01, None, 100, 4) == 1
    assert batch_size(0.01, 0.001, 0, 4) == 1


def test_a_batch_amortises_the_overhead() -> None:
    overhead, per_job = 0.004, 0.01
    wanted = math.ceil(overhead / (OVERHEAD_SHARE * per_job))
    got = batch_size(overhead, per_job, 10_000, 2)
    assert got == min(MAX_BATCH, wanted)
    assert got * per_job * OVERHEAD_SHARE >= overhead  # the overhead stays within its share


def test_a_batch_leaves_work_for_every_worker() -> None:
    remaining, workers = 30, 5
    got = batch_size(1.0, 0.001, remaining, workers)  # the overhead alone would want the largest batch
    assert got == math.ceil(remaining / (workers * IN_FLIGHT_PER_WORKER)) == 3


def test_a_batch_never_passes_the_maximum_nor_drops_below_one() -> None:
    assert batch_size(10.0, 1e-9, 10**6, 1) == MAX_BATCH
    assert batch_size(0.0, 5.0, 10**6, 1) == 1
    assert batch_size(1.0, 0.01, 1, 0) == 1  # no workers counted yet


def test_batch_deadline_grows_with_the_measured_time_above_its_floor() -> None:
    assert batch_deadline(120.0, None, 10) == 120.0
    assert batch_deadline(120.0, 0.001, 10) == 120.0
    per_job, size = 2.0, 8
    assert batch_deadline(120.0, per_job, size) == TIMEOUT_FACTOR * per_job * size * IN_FLIGHT_PER_WORKER > 120.0


def test_farm_stats_document() -> None:
    stats = FarmStats("tcp://10.0.0.1:8786", workers=3, overhead_ms=2.34567, per_job_ms=10.0, batches=4,
                      batch_sizes=[1, 8, 8, 3], compile_s=2.0, banned_workers={"tcp://b": "x", "tcp://a": "y"})
    doc = stats.to_json()
    assert doc["scheduler"] == "tcp://10.0.0.1:8786" and doc["workers"] == 3
    assert (doc["max_batch"], doc["mean_batch"], doc["overhead_ms"]) == (8, 5.0, 2.346)
    assert doc["overhead_share"] == pytest.approx(round(4 * 2.34567 / 1000 / 2.0, 4))
    assert list(doc["banned_workers"]) == ["tcp://a", "tcp://b"]  # sorted: the document is stable


def test_farm_stats_of_a_run_that_compiled_nothing() -> None:
    stats = FarmStats("local")
    assert stats.overhead_share == 0.0
    doc = stats.to_json()
    assert (doc["max_batch"], doc["mean_batch"], doc["overhead_share"]) == (0, 0, 0.0)
