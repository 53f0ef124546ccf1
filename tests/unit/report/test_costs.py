"""What the required keys cost: distinct blob bytes per chunk, level and total; compile time per job and family."""

from __future__ import annotations

import zlib
from types import SimpleNamespace

from library_helpers import write_library
from pipeline.cook.timings import append_cook
from pipeline.digest import bytes_hash
from pipeline.outputs.pak_write import write_pak
from pipeline.report.costs import ZLIB_LEVEL, binary_sizes, compile_times

BLOBS = {"b1": b"\x03\x02\x23\x07" * 50, "b2": bytes(range(256)) * 3, "b3": b"x" * 1000}


class Store:
    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs, self.asked = blobs, []

    def get_blob(self, digest: str) -> bytes | None:
        self.asked.append(digest)
        return self.blobs.get(digest)


class Plan:
    """key -> {stage: job}; jobs -> a request with its source and stage."""

    def __init__(self, uses: dict[str, dict[str, str]], jobs: dict[str, tuple[str, str]] | None = None) -> None:
        self.uses = uses
        self.jobs = {j: SimpleNamespace(request=SimpleNamespace(source=s, stage=st)) for j, (s, st) in (jobs or {}).items()}

    def jobs_for(self, key: str) -> dict[str, str]:
        return self.uses.get(key, {})


def found(**chunks: list[str]):
    return SimpleNamespace(by_chunk={c.replace("__", "/"): SimpleNamespace(keys=keys) for c, keys in chunks.items()})


def sizes(*names: str) -> tuple[int, int]:
    return (sum(len(BLOBS[n]) for n in names), sum(len(zlib.compress(BLOBS[n], ZLIB_LEVEL)) for n in names))


def test_binary_sizes_count_each_blob_once_per_scope() -> None:
    plan = Plan({"k1": {"vertex": "j1", "fragment": "j2"}, "k2": {"vertex": "j1", "fragment": "j3"},
                 "k3": {"vertex": "j4"}})
    states = {"j1": SimpleNamespace(blob="b1"), "j2": SimpleNamespace(blob="b2"), "j3": SimpleNamespace(blob="b3"),
              "j4": SimpleNamespace(blob=None)}  # j4 failed: no blob
    store = Store(BLOBS)
    got = binary_sizes(found(L__c1=["k1", "k2"], L__c2=["k1"], M__c3=["k3", "k1"]), plan, states, store,
                       {"L/c1": "L", "L/c2": "L", "M/c3": "M"})
    rows = {r["name"]: (r["blobs"], r["bytes"], r["compressed"]) for r in got["chunks"]}
    assert rows == {"L/c1": (3, *sizes("b1", "b2", "b3")), "L/c2": (2, *sizes("b1", "b2")),
                    "M/c3": (2, *sizes("b1", "b2"))}
    assert [r["level"] for r in got["chunks"]] == ["L", "L", "M"]
    assert [(r["name"], r["blobs"]) for r in got["levels"]] == [("L", 3), ("M", 2)]
    assert (got["total"]["blobs"], got["total"]["bytes"], got["total"]["compressed"]) == (3, *sizes("b1", "b2", "b3"))
    assert sorted(store.asked) == ["b1", "b2", "b3"]  # each blob read once
    assert str(ZLIB_LEVEL) in got["compression"]


def test_binary_sizes_without_a_cook() -> None:
    plan = Plan({"k1": {"vertex": "j1"}})
    assert binary_sizes(found(c=["k1"]), plan, {"j1": SimpleNamespace(blob="b1")}, None, {}) is None
    assert binary_sizes(found(c=["k1"]), plan, {}, Store(BLOBS), {}) is None
    # blobs named by the records but gone from the store: nothing to measure
    assert binary_sizes(found(c=["k1"]), plan, {"j1": SimpleNamespace(blob="gone")}, Store(BLOBS), {}) is None


def test_the_total_is_the_shipped_library_when_it_holds_every_blob(tmp_path) -> None:
    blobs = {bytes_hash(data): data for data in BLOBS.values()}
    by_name = {name: bytes_hash(data) for name, data in BLOBS.items()}
    plan = Plan({"k1": {"vertex": "j1", "fragment": "j2"}})
    states = {"j1": SimpleNamespace(blob=by_name["b1"]), "j2": SimpleNamespace(blob=by_name["b2"])}
    store = Store(blobs)

    def total(library):
        got = binary_sizes(found(c=["k1"]), plan, states, store, {"c": "c"}, library)
        return got["total"], got["chunks"][0]

    full, partial, missing = tmp_path / "full.pak", tmp_path / "partial.pak", tmp_path / "missing.pak"
    write_library(full, blobs, chunks={"c": [by_name["b1"], by_name["b2"]], "other": [by_name["b3"]]})
    partial.write_bytes(write_pak({by_name["b1"]: BLOBS["b1"]}))
    blob_sum = (2, *sizes("b1", "b2"))
    shipped, chunk = total(full)
    assert (shipped["blobs"], shipped["bytes"], shipped["compressed"]) == (2, full.stat().st_size, blob_sum[2])
    assert shipped["library"] is True and shipped["bytes"] > blob_sum[1]  # every blob of the folder, and tables
    assert (chunk["blobs"], chunk["bytes"], chunk["compressed"]) == blob_sum  # a chunk: its distinct blobs
    for library in (None, partial, missing):  # no outputs, or outputs lacking a blob: the blobs' sum
        counted, _ = total(library)
        assert (counted["blobs"], counted["bytes"], counted["compressed"]) == blob_sum and "library" not in counted


def row(cook: str, job: str, seconds: float, family: str = "pbr", key: str | None = None) -> dict:
    return {"cook": cook, "job": job, "seconds": seconds, "family": family, "key": key, "ok": True}


def test_compile_times_take_each_jobs_last_logged_compile(tmp_path) -> None:
    append_cook(tmp_path, [row("2026-01-01T00:00:00Z", "j1" * 20, 9.0), row("2026-01-01T00:00:00Z", "j2" * 20, 1.0),
                           row("2026-01-01T00:00:00Z", "other", 50.0)])
    append_cook(tmp_path, [row("2026-01-02T00:00:00Z", "j1" * 20, 0.5, key="log/key"),
                           row("2026-01-02T00:00:00Z", "j3" * 20, 2.0, family="mtlx", key="mtlx/x{A=1}")])
    plan = Plan({}, {"j1" * 20: ("pbr.vert", "vertex"), "j2" * 20: ("pbr.frag", "fragment"),
                     "j3" * 20: ("mx.frag", "fragment"), "j4" * 20: ("pbr.frag", "fragment")})
    got = compile_times(tmp_path, plan, {"j2" * 20: "pbr/forward{A=0}"})
    assert (got["jobs_timed"], got["jobs_planned"]) == (3, 4)  # "other" is not the plan's; j4 never timed
    assert got["seconds"] == 0.5 + 1.0 + 2.0
    assert [(j["job"], j["seconds"], j["key"], j["source"]) for j in got["slowest"]] == [
        ("j3" * 6, 2.0, "mtlx/x{A=1}", "mx.frag"), ("j2" * 6, 1.0, "pbr/forward{A=0}", "pbr.frag"),
        ("j1" * 6, 0.5, "log/key", "pbr.vert")]
    # the family is the first key's, or the log's key when the plan names none; slowest family first
    assert got["families"] == [{"family": "mtlx", "jobs": 1, "seconds": 2.0, "max_seconds": 2.0},
                               {"family": "pbr", "jobs": 1, "seconds": 1.0, "max_seconds": 1.0},
                               {"family": "log", "jobs": 1, "seconds": 0.5, "max_seconds": 0.5}]


def test_compile_times_without_a_log(tmp_path) -> None:
    assert compile_times(tmp_path, Plan({}, {"j": ("a", "vertex")}), {}) is None
