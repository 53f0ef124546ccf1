"""``usable_cpus`` honours cgroup CPU quotas (v1 and v2, nested), read from a fake filesystem root."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import cpus
from pipeline.cpus import cgroup_cpu_limit, usable_cpus


@pytest.fixture(autouse=True)
def eight_cpus(monkeypatch) -> None:
    monkeypatch.setattr(cpus, "_cpus", lambda: 8)


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


V2 = "proc/self/cgroup"


@pytest.mark.parametrize(("files", "expected"), [
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "200000 100000\n"}, 2),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "150000 100000\n"}, 2),   # 1.5 CPUs: 2 workers
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "50000 100000\n"}, 1),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "max 100000\n"}, 8),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "2000000 100000\n"}, 8),  # more than the affinity
    # a parent's limit binds its children; the tightest level wins
    ({V2: "0::/a/b/c\n", "sys/fs/cgroup/a/cpu.max": "300000 100000", "sys/fs/cgroup/a/b/c/cpu.max": "max 100000"}, 3),
    ({V2: "0::/a/b\n", "sys/fs/cgroup/a/cpu.max": "600000 100000", "sys/fs/cgroup/a/b/cpu.max": "400000 100000"}, 4),
    ({V2: "0::/\n", "sys/fs/cgroup/cpu.max": "100000 100000"}, 1),            # a cgroup namespace: the root is ours
    # cgroup v1: the cpu controller's quota and period; -1: no limit
    ({V2: "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n", "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000",
      "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000"}, 3),
    ({V2: "1:cpu:/docker/abc\n", "sys/fs/cgroup/cpu/docker/cpu.cfs_quota_us": "200000\n",
      "sys/fs/cgroup/cpu/docker/cpu.cfs_period_us": "100000\n",
      "sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us": "-1\n",
      "sys/fs/cgroup/cpu/docker/abc/cpu.cfs_period_us": "100000\n"}, 2),
    ({V2: "2:cpu,cpuacct:/abc\n", "sys/fs/cgroup/cpu/abc/cpu.cfs_quota_us": "500000",   # mounted as "cpu" only
      "sys/fs/cgroup/cpu/abc/cpu.cfs_period_us": "100000"}, 5),
    # garbage and missing files: no limit, never an exception
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "lots of cpus\n"}, 8),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "0 100000\n"}, 8),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": "100000 0\n"}, 8),
    ({V2: "0::/job\n", "sys/fs/cgroup/job/cpu.max": ""}, 8),
    ({V2: "0::/job\n"}, 8),
    ({V2: "garbage without colons\n0::\n:::\n"}, 8),
    ({V2: "1:cpu:/x\n", "sys/fs/cgroup/cpu/x/cpu.cfs_quota_us": "200000"}, 8),          # no period
    ({V2: "0::/../../escape\n", "sys/fs/cgroup/escape/cpu.max": "200000 100000"}, 2),  # no way above the mount
    ({}, 8),
])
def test_quota(tmp_path: Path, files: dict, expected: int) -> None:
    assert usable_cpus(tree(tmp_path, files)) == expected


def test_unreadable_files_are_no_limit(tmp_path: Path) -> None:
    root = tree(tmp_path, {V2: "0::/job\n"})
    (root / "sys/fs/cgroup/job/cpu.max").mkdir(parents=True)  # a folder where the file should be
    (root / "sys/fs/cgroup/cpu.max").write_bytes(b"\xff\xfe 100000")  # not ASCII
    assert cgroup_cpu_limit(root) is None and usable_cpus(root) == 8


def test_this_machine_gives_an_answer() -> None:
    """On the real root: a positive count within the affinity (whatever the machine's cgroups say)."""
    assert 1 <= usable_cpus() <= 8
