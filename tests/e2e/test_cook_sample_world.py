"""End-to-end cooks of the sample world with the real compiler (glslang in-process).

Every cook counts its compiles through the ``scheduler.JobRunner`` seam, so
"nothing left to compile" is an assertion.  One cold cook runs per module; the
other tests start from copies of its world, shader library, cache and outputs.
Every test runs on two layouts of the sample world: as it is (``level_depth = 1``,
chunk ``forest/c00``) and moved under ``levels/`` with ``level_depth = 2`` (chunk
``levels/forest/c00``, level manifest ``levels/forest.level.json``).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import run_cli as run_pipeline

from library_helpers import write_library
from pipeline import api
from pipeline.cache.job_records import JOB
from pipeline.cache.store import Store
from pipeline.cli.cook import command as cook_command
from pipeline.compilers import SourceTree, validate
from pipeline.outputs.manifest import load_chunk_manifest, load_level_manifest, stage_hashes
from pipeline.outputs.chunk_table import table_path
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from pipeline.outputs.read_outputs import load_chunk
from pipeline.compile.scheduler import JobRunner
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"
FRAGMENT_INCLUDE = "pbr/brdf.glsl"      # included by pbr.frag only
EDITED_FILE = "forest/c00/terrain.gltf"
LAYOUTS = {"level_depth_1": "", "level_depth_2": "levels/"}  # layout -> folder holding the sample's levels


@dataclass
class Site:
    """One cook's inputs and outputs, all under a temp folder."""

    world: Path
    materials: Path
    cache: Path
    out: Path
    prefix: str = ""  # where the sample's levels are in the world ("levels/" with level_depth = 2)

    def at(self, name: str) -> str:
        """A sample-world name (chunk, level, output file) in this layout."""
        return self.prefix + name

    def copy_to(self, folder: Path) -> "Site":
        site = Site(folder / "world", folder / "materials", folder / "cache", folder / "out", self.prefix)
        for src, dst in zip(self.paths(), site.paths()):
            if src.exists():
                shutil.copytree(src, dst)
        return site

    def paths(self) -> tuple[Path, ...]:
        return (self.world, self.materials, self.cache, self.out)


def fresh_site(folder: Path, prefix: str = "") -> Site:
    site = Site(folder / "world", folder / "materials", folder / "cache", folder / "out", prefix)
    shutil.copytree(SAMPLE, site.world / prefix)
    if prefix:
        (site.world / "pipeline.toml").write_text("level_depth = 2\n")
    shutil.copytree(MATERIALS, site.materials)
    return site


def cook(site: Site, jobs: int = 1, **options):
    """Cook ``site`` through a counting compiler: (result, compiler)."""
    compiler = JobRunner(site.materials, "capi", jobs)
    world = api.open_world(site.world, materials=site.materials)
    result = api.cook(world, cache=site.cache, out=site.out, jobs=jobs, compiler=compiler, **options)
    return result, compiler


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    """Every output file under ``out``: relative path -> (bytes, mtime_ns)."""
    return {str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*")) if p.is_file()}


def rel(paths, out: Path) -> set[str]:
    return {str(Path(p).relative_to(out)) for p in paths}


def insert_lines(path: Path, after: int, lines: list[str]) -> int:
    """Insert ``lines`` after line ``after``; returns the 1-based line number of the first one."""
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:after] + [line + "\n" for line in lines] + text[after:]))
    return after + 1


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def cold(request, tmp_path_factory):
    """A cold cook of the sample world on 2 workers: (site, result, compiler)."""
    site = fresh_site(tmp_path_factory.mktemp("cold"), LAYOUTS[request.param])
    result, compiler = cook(site, jobs=2)
    return site, result, compiler


@pytest.fixture
def warm(cold, tmp_path):
    """A copy of the cold cook's world, shader library, cache and outputs."""
    site, result, _ = cold
    return site.copy_to(tmp_path), result


# ------------------------------------------------------------------ cold and warm
def test_cold_cook_compiles_every_unique_job_once(cold) -> None:
    site, result, compiler = cold
    assert result.errors == [] and result.warnings == []
    assert compiler.calls == len(result.plan.jobs) == len(result.run.compiled) > 0
    assert set(result.run.compiled) == set(result.plan.jobs)
    assert result.run.cache_hits == 0
    assert rel(result.written, site.out) == rel(result.outputs, site.out) == set(snapshot(site.out))


def test_cold_cook_outputs_hold_valid_spirv_for_every_key(cold) -> None:
    site, _, _ = cold
    manifests = sorted(p for p in site.out.rglob("*.json") if not p.name.endswith(".level.json"))
    assert [p.relative_to(site.out).as_posix() for p in manifests] == [
        site.at(f"{chunk}.json") for chunk in ("forest/c00", "forest/c01", "forest/c02", "forest/c03",
                                               "town/interior", "town/market", "town/square", "town/workshop")]
    library = PakReader(site.out / LIBRARY_NAME)
    library.verify()
    named = set()
    for manifest_path in manifests:
        manifest, _ = load_chunk(site.out, manifest_path.relative_to(site.out).with_suffix("").as_posix())
        assert manifest.library == "../" * site.at("").count("/") + "../" + LIBRARY_NAME
        assert not manifest.errors
        assert library.chunks[manifest.chunk] == stage_hashes(manifest)
        named |= stage_hashes(manifest)
        for entry in manifest.keys.values():
            assert set(entry.stages) == {"vertex", "fragment"}
            for digest in entry.stages.values():
                assert validate(library.get(digest)) == []
                assert manifest.reflection[digest] == library.reflection(digest) is not None
    assert set(library.hashes()) == named and set(library.chunks) == {load_chunk_manifest(p).chunk for p in manifests}
    levels = sorted(p.relative_to(site.out).as_posix() for p in site.out.rglob("*.level.json"))
    assert levels == [site.at("forest.level.json"), site.at("town.level.json")]
    level = load_level_manifest(site.out / site.at("forest.level.json"))
    assert level.level == site.at("forest")
    assert sorted(level.chunks) == [site.at("forest/c00"), site.at("forest/c01"), site.at("forest/c02"),
                                    site.at("forest/c03")]


def test_stage_reuse_is_reported(cold) -> None:
    _, result, _ = cold
    doc = result.to_json()
    stages = doc["stages"]
    assert set(stages) == {"vertex", "fragment"}
    assert sum(s["uses"] for s in stages.values()) == doc["stage_uses"] == 2 * doc["keys"]
    assert sum(s["jobs"] for s in stages.values()) == doc["jobs"]
    assert stages["vertex"]["jobs"] < stages["vertex"]["uses"]   # keys share vertex jobs
    assert stages["vertex"]["max_shared"] > 1


def test_json_document_has_the_issue_keys(cold) -> None:
    _, result, _ = cold
    doc = json.loads(json.dumps(result.to_json()))
    assert {"chunks", "draws", "keys", "jobs", "compiled", "cache_hits", "errors", "outputs",
            "stage_uses", "stages"} <= set(doc)
    assert (doc["chunks"], doc["compiled"], doc["cache_hits"]) == (8, doc["jobs"], 0)


def test_second_cook_compiles_nothing_and_rewrites_nothing(warm) -> None:
    site, first = warm
    before = snapshot(site.out)
    result, compiler = cook(site)
    assert compiler.calls == 0 and result.run.compiled == []
    assert result.run.cache_hits == len(result.plan.jobs) == len(first.plan.jobs)
    assert result.written == [] and result.errors == []
    assert snapshot(site.out) == before                     # same bytes, same mtime_ns


# ------------------------------------------------------------------ incremental
def test_editing_one_gltf_recompiles_only_the_new_jobs(warm) -> None:
    site, first = warm
    before = snapshot(site.out)
    path = site.world / site.at(EDITED_FILE)
    doc = json.loads(path.read_text())
    doc["materials"][0].update(alphaMode="MASK", alphaCutoff=0.4, emissiveTexture={"index": 0})
    path.write_text(json.dumps(doc))
    result, compiler = cook(site)
    new_jobs = set(result.plan.jobs) - set(first.plan.jobs)
    assert new_jobs and set(result.run.compiled) == new_jobs and compiler.calls == len(new_jobs)
    rewritten = {site.at("forest/c00.json"), LIBRARY_NAME, "shaders.chunks", site.at("forest.level.json")}
    assert rel(result.written, site.out) == rewritten
    after = snapshot(site.out)
    assert set(after) == set(before)
    assert all(after[p][0] != before[p][0] for p in rewritten)
    untouched = set(before) - rewritten
    assert {p: after[p] for p in untouched} == {p: before[p] for p in untouched}
    library = PakReader(site.out / LIBRARY_NAME)       # the new blobs in, the ones no index names any more out
    c00 = load_chunk_manifest(site.out / site.at("forest/c00.json"))
    assert library.chunks[c00.chunk] == stage_hashes(c00)
    assert set(library.hashes()) == set().union(*library.chunks.values())
    assert {d for k in new_jobs if (d := result.run.results[k].blob)} <= set(library.hashes())
    assert all(result.run.reasons[k].startswith("new:") for k in new_jobs)


def test_changing_a_fragment_include_recompiles_exactly_its_jobs(warm) -> None:
    site, first = warm
    tree = SourceTree(site.materials)
    assert FRAGMENT_INCLUDE in tree.files("pbr/pbr.frag") and FRAGMENT_INCLUDE not in tree.files("pbr/pbr.vert")
    with (site.materials / FRAGMENT_INCLUDE).open("a") as handle:
        handle.write("\n// tuned\n")
    result, compiler = cook(site)
    touched = {j.identity for j in first.plan.jobs.values() if FRAGMENT_INCLUDE in dict(j.closure)}
    compiled = [result.plan.jobs[k] for k in result.run.compiled]
    # jobs are keyed by their preprocessed text: exactly those whose text the edit changed recompile
    # (a job whose closure names the include only under a branch it does not take keeps its key)
    assert set(result.run.compiled) == set(result.plan.jobs) - set(first.plan.jobs)
    assert compiled and {j.identity for j in compiled} <= touched and compiler.calls == len(compiled)
    kept = {j.identity for k, j in result.plan.jobs.items() if k in first.plan.jobs}
    assert touched - {j.identity for j in compiled} <= kept
    assert {j.request.stage for j in compiled} == {"fragment"}
    assert {line["reason"] for line in result.explain_lines()} == {f"source changed: {FRAGMENT_INCLUDE}"}


def test_cooking_one_chunk_after_a_shader_change_marks_its_level_siblings_stale(warm) -> None:
    site, _ = warm
    common = site.materials / "pbr" / "common.glsl"
    common.write_text(common.read_text().replace("3.14159265358979", "3.0"))  # new binaries
    one, _ = cook(site, chunk=site.at("forest/c01"))
    assert one.errors == []
    level = load_level_manifest(site.out / site.at("forest.level.json"))
    stale = sorted(e["chunk"] for e in level.errors if e["message"].startswith("stale:"))
    assert stale == [site.at("forest/c00"), site.at("forest/c02")]
    fresh = load_chunk_manifest(site.out / site.at("forest/c01.json"))
    for text, entry in fresh.keys.items():                # the level names the fresh chunk's blobs
        assert dict(level.keys[text].stages) == dict(entry.stages)
    everything, _ = cook(site)
    assert everything.errors == [] and load_level_manifest(site.out / site.at("forest.level.json")).errors == ()


def chunk_indexes(out: Path) -> dict[str, frozenset[str]]:
    """Every chunk index under ``out``: chunk -> the blobs it names."""
    found = {}
    for path in sorted(out.rglob("*.json")):
        if not path.name.endswith(".level.json"):
            manifest = load_chunk_manifest(path)
            found[manifest.chunk] = stage_hashes(manifest)
    return found


def test_a_one_chunk_cook_after_a_shader_edit_leaves_the_library_exactly_the_blobs_of_the_indexes(warm, tmp_path) -> None:
    site, _ = warm
    before = PakReader(site.out / LIBRARY_NAME)
    before_table = dict(before.chunks)  # read now: the table is a file of its own, rewritten by the cook
    common = site.materials / "pbr" / "common.glsl"
    common.write_text(common.read_text().replace("3.14159265358979", "3.0"))  # new binaries
    one, _ = cook(site, chunk=site.at("forest/c01"))
    assert one.errors == [] and site.out / LIBRARY_NAME in map(Path, one.written)
    library = PakReader(site.out / LIBRARY_NAME)
    library.verify()
    indexes = chunk_indexes(site.out)
    assert len(indexes) == 8 and library.chunks == indexes
    assert set(library.hashes()) == set().union(*indexes.values())
    c01 = site.at("forest/c01")
    assert indexes[c01] != before_table[c01]                        # the edit changed the chunk's blobs
    assert before.hashes() != library.hashes()
    # the same bytes as a library packed from those blobs and their reflection, and the same table
    with Store(site.cache) as store:
        blobs = {d: store.get_blob(d) for d in library.hashes()}
    packed = tmp_path / "packed" / LIBRARY_NAME
    packed.parent.mkdir()
    assert write_library(packed, blobs, {d: library.reflection(d) for d in blobs}, indexes) \
        == (site.out / LIBRARY_NAME).read_bytes()
    assert table_path(packed).read_bytes() == table_path(site.out / LIBRARY_NAME).read_bytes()
    # then the whole world: every output equals a clean whole cook's, byte for byte
    everything, _ = cook(site)
    assert everything.errors == []
    clean = Site(site.world, site.materials, tmp_path / "clean-cache", tmp_path / "clean-out", site.prefix)
    cook(clean)
    mine = {p: data for p, (data, _) in snapshot(site.out).items()}
    assert mine == {p: data for p, (data, _) in snapshot(clean.out).items()}
    assert PakReader(site.out / LIBRARY_NAME).chunks == chunk_indexes(site.out)


# ------------------------------------------------------------------ compile errors
def break_forward_brdf(materials: Path) -> int:
    """A syntax error in brdf.glsl that only forward-pass fragments see; returns its line."""
    return insert_lines(materials / FRAGMENT_INCLUDE, 6, ["#ifdef PASS_FORWARD", "float broken = ;", "#endif"]) + 1


def test_compile_error_is_located_remembered_and_the_rest_still_cooks(warm) -> None:
    site, _ = warm
    original = (site.materials / FRAGMENT_INCLUDE).read_bytes()
    line = break_forward_brdf(site.materials)
    result, compiler = cook(site)
    failed = {k for k, r in result.run.results.items() if not r.ok}
    forward_fragments = {k for k, j in result.plan.jobs.items()
                         if j.request.stage == "fragment" and ("PASS_FORWARD", "1") in j.request.defines}
    # jobs are keyed by preprocessed text: only those whose text the edit changed recompile (all of them fail)
    assert failed == forward_fragments and compiler.calls == len(failed)
    assert len(result.run.results) > len(failed)
    assert result.errors and all(e.file == f"{site.materials.resolve()}/{FRAGMENT_INCLUDE}" and e.line == line
                                 for e in result.errors)
    assert all(e.key.startswith("pbr/forward{") for e in result.errors)
    with Store(site.cache) as store:                         # nothing cached as a success
        assert all(store.get(JOB, k)["blob"] is None for k in failed)
    c00 = load_chunk_manifest(site.out / site.at("forest/c00.json"))
    assert any(set(e.stages) == {"vertex", "fragment"} for e in c00.keys.values())
    broken = {text for text, e in c00.keys.items() if set(e.stages) == {"vertex"}}
    assert broken and all(text.startswith("pbr/forward{") for text in broken)
    assert {e["key"] for e in c00.errors} == broken
    # manifests name shader files from the world's root, whatever folder the cook ran from
    assert all((e["file"], e["line"], e["stage"]) == ("../materials/" + FRAGMENT_INCLUDE, line, "fragment")
               for e in c00.errors)

    again, compiler = cook(site)                             # remembered, still reported
    assert compiler.calls == 0 and again.errors == result.errors and again.written == []

    (site.materials / FRAGMENT_INCLUDE).write_bytes(original)  # fixed: the old jobs are cached
    fixed, compiler = cook(site)
    assert compiler.calls == 0 and fixed.errors == []


@pytest.mark.slow
def test_outputs_with_compile_errors_are_the_same_from_any_working_folder(warm) -> None:
    site, _ = warm
    break_forward_brdf(site.materials)
    manifests = []
    for cwd in (site.world, site.materials):
        shutil.rmtree(site.out, ignore_errors=True)
        done = run_pipeline("cook", site.world, "--materials", site.materials, "--cache", site.cache, "--out", site.out,
                       "-q", cwd=cwd)
        assert done.returncode == 1 and FRAGMENT_INCLUDE in done.stderr
        manifests.append({p.relative_to(site.out): p.read_bytes() for p in site.out.rglob("*") if p.is_file()})
    assert manifests[0] == manifests[1] and Path(LIBRARY_NAME) in manifests[0]
    c00 = load_chunk_manifest(site.out / site.at("forest/c00.json"))
    assert c00.errors and {e["file"] for e in c00.errors} == {"../materials/" + FRAGMENT_INCLUDE}


@pytest.mark.slow
def test_clean_cooks_from_different_working_folders_write_the_same_bytes(cold, tmp_path) -> None:
    site, _, _ = cold
    found = []
    for n, cwd in enumerate((site.world, tmp_path)):
        out, cache = tmp_path / f"out{n}", tmp_path / f"cache{n}"
        done = run_pipeline("cook", site.world, "--materials", site.materials, "--cache", cache, "--out", out,
                            "-q", "-j", "1", cwd=cwd, timeout=600)
        assert done.returncode == 0, done.stderr
        found.append({p: data for p, (data, _) in snapshot(out).items()})
    mine = {p: data for p, (data, _) in snapshot(site.out).items()}
    assert found[0] == found[1] == mine and LIBRARY_NAME in mine


@pytest.mark.parametrize("jobs", [1, 2])
def test_fail_fast_stops_at_the_first_error(warm, jobs) -> None:
    site, _ = warm
    insert_lines(site.materials / "pbr/coverage.glsl", 6, ["float broken = ;"])  # every fragment pass reads it
    result, compiler = cook(site, jobs=jobs, fail_fast=True)
    fragments = [k for k, j in result.plan.jobs.items()   # the pbr fragment jobs (generated ones stay cached)
                 if j.request.stage == "fragment" and j.request.source.startswith("pbr/")]
    assert 0 < compiler.calls < len(fragments)
    assert compiler.calls == 1 or jobs > 1
    assert len(result.run.cancelled) == len(fragments) - compiler.calls
    assert sum(len(e.jobs) for e in result.errors if "--fail-fast" in e.message) == len(result.run.cancelled)


# ------------------------------------------------------------------ determinism
def test_cooks_are_deterministic_across_caches_and_worker_counts(cold, tmp_path) -> None:
    site, _, _ = cold                                        # cooked on 2 workers
    other = fresh_site(tmp_path, site.prefix)
    result, compiler = cook(other, jobs=1)
    assert compiler.calls == len(result.plan.jobs)
    mine = {p: data for p, (data, _) in snapshot(site.out).items()}
    theirs = {p: data for p, (data, _) in snapshot(other.out).items()}
    assert mine == theirs
    assert all(str(other.world) not in data.decode("latin-1") for data in theirs.values())


# ------------------------------------------------------------------ command line
def run_cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(cook_command, list(args), env=env)


SUMMARY = re.compile(r"^cooked 8 chunks: 59 draws -> (\d+) keys(?: \(\+\d+ fallback\))? -> (\d+) stage uses -> "
                     r"(\d+) unique jobs "
                     r"\(fragment \d+->\d+, vertex \d+->\d+\); (\d+) compiled, (\d+) cached, (\d+) errors; "
                     r"(\d+) of 12 output files written$", re.M)


def test_cli_summary_and_exit_code_0(warm) -> None:
    site, first = warm
    run = run_cli(str(site.world), "--cache", str(site.cache), "--out", str(site.out),
                  "--materials", str(site.materials), "--jobs", "1", "-q")
    assert run.exit_code == 0, run.stderr
    match = SUMMARY.search(run.stdout)
    assert match, run.stdout
    assert match.group(4, 6, 7) == ("0", "0", "0") and int(match.group(5)) == len(first.plan.jobs)


def test_cli_compile_error_exit_1_located_and_explained(warm) -> None:
    site, _ = warm
    line = break_forward_brdf(site.materials)
    run = run_cli(str(site.world), "--cache", str(site.cache), "--out", str(site.out),
                  "--materials", str(site.materials), "--jobs", "1", "-q", "--explain")
    assert run.exit_code == 1
    errors = [ln for ln in run.stderr.splitlines() if ": error: " in ln]
    assert errors and all(re.match(rf"^.*materials/{FRAGMENT_INCLUDE}:{line}(:\d+)?: error: .+ \((key|breaks \d+ keys, e\.g\.) pbr/forward\{{", e)
                          for e in errors), run.stderr
    assert f"source changed: {FRAGMENT_INCLUDE}" in run.stdout
    doc = json.loads(run_cli(str(site.world), "--cache", str(site.cache), "--out", str(site.out),
                             "--materials", str(site.materials), "--json").stdout)
    assert doc["compiled"] == 0 and len(doc["errors"]) == len(errors)
    assert {"key", "file", "line", "message"} <= set(doc["errors"][0])


def test_pipeline_cache_env_moves_the_cache(warm, tmp_path, monkeypatch) -> None:
    site, first = warm
    moved = tmp_path / "elsewhere"
    site.cache.rename(moved)
    monkeypatch.chdir(tmp_path)
    run = run_cli(str(site.world), "--out", str(site.out), "--materials", str(site.materials), "--json",
                  env={"PIPELINE_CACHE": str(moved)})
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert (doc["compiled"], doc["cache_hits"]) == (0, len(first.plan.jobs))
    assert not (tmp_path / "cache").exists()
