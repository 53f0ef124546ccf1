"""What a cook does with the farm (compile/farm_session.py): nothing without a scheduler, else one connection
for its chunk work and compiles, made only when something is sent."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from pipeline.compile.farm_session import NoFarm, farm_cook
from paths import REPO


def test_without_a_scheduler_the_cook_is_this_machine_s_alone() -> None:
    farm = farm_cook(None)
    assert isinstance(farm, NoFarm) and farm.connection is None and farm.chunks is None
    result = SimpleNamespace(farm=None, warnings=[])
    with farm as entered:
        assert entered is farm and farm.report(result) is result and result == SimpleNamespace(farm=None, warnings=[])


def test_a_scheduler_gives_one_connection_made_when_first_used() -> None:
    farm = farm_cook("local:1")
    assert farm.chunks.connection is farm.connection and not farm.connection.connected
    with farm:
        pass
    assert not farm.connection.connected  # nothing was sent: no cluster started


def test_a_cook_without_a_scheduler_imports_no_dask() -> None:
    code = ("import sys; from pipeline import api; from pipeline.compile.farm_session import farm_cook; "
            "farm_cook(None); print('distributed' in sys.modules, 'dask' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert run.stdout.split() == ["False", "False"]
