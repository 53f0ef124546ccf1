"""The ``--scheduler`` value and ``--audit`` checked before any work, with no Dask import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.compile.farm_address import (
    LOCAL_PER_CPU,
    FarmError,
    check_audit,
    local_workers,
    parse_scheduler,
)
from pipeline.cpus import usable_cpus
from pipeline.errors import PipelineError


@pytest.mark.parametrize("text,expected", [
    ("local:3", ("local", 3)),
    ("tcp://farm:8786", ("remote", "tcp://farm:8786")),
    ("tls://10.0.0.1:8786", ("remote", "tls://10.0.0.1:8786")),
    ("tcp://[::1]:8786", ("remote", "tcp://[::1]:8786")),
])
def test_good_addresses(text: str, expected) -> None:
    assert parse_scheduler(text) == expected


@pytest.mark.parametrize("text,message", [
    ("local:0", "expected local:N with N >= 1 worker processes"),
    ("local:x", "expected local:N with N >= 1 worker processes"),
    ("farm:8786", "expected a Dask scheduler address (tcp://HOST:8786) or local:N"),
    ("tcp://[::1", "not a Dask scheduler address (Invalid IPv6 URL)"),
    ("tcp://host:99999", "not a Dask scheduler address (Port out of range"),
    ("http://farm:8786", "unknown protocol 'http'"),
    ("tcp://farm:0", "port 0 is no scheduler's port"),
    ("tcp://farm:8786/jobs", "not a Dask scheduler address; expected tcp://HOST:8786"),
])
def test_a_bad_address_is_one_line_naming_it(text: str, message: str) -> None:
    with pytest.raises(FarmError) as info:
        parse_scheduler(text)
    assert str(info.value).startswith(f"{text}: error: {message}")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("percent", [-1, 100.5, True, "5"])
def test_audit_outside_0_to_100_names_the_argument(percent) -> None:
    with pytest.raises(PipelineError) as info:
        check_audit(percent)
    assert str(info.value) == f"audit: error: expected a percentage from 0 to 100, got {percent!r}"
    assert info.value.diagnostics[0].location.parameter


def test_audit_in_range_is_a_float() -> None:
    assert check_audit(0) == 0.0 and check_audit(12.5) == 12.5 and isinstance(check_audit(100), float)


def test_local_workers_are_capped_per_usable_cpu() -> None:
    limit = usable_cpus() * LOCAL_PER_CPU
    assert local_workers(limit) == (limit, None)
    started, warning = local_workers(limit + 5)
    assert started == limit and warning.startswith(f"local:{limit + 5}: {limit + 5} worker processes for ")


def test_no_dask_is_imported() -> None:
    code = ("import sys; import pipeline.compile.farm_address as f; f.parse_scheduler('tcp://h:1'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
