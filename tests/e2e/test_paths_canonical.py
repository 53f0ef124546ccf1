"""Canonical paths inside, relative paths only where the command line prints.

The same world cooked from different working folders gives the same job keys, the same
job records in the cache and byte-identical outputs; only the lines ``pipeline cook``
prints differ, each naming shader files from the folder it ran in (absolute when the
shader library is outside it).  The world is the golden fragment chain with a type
clash (tests/golden/compile/fragment_type_clash): its error is found while the job is
planned, names two fragment files (one of them inside the message) and is part of the
failed job's key.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cache.job_records import JOB, JOB_EXACT, JOB_IDENTITY
from pipeline.cache.store import Store
from pipeline.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "compile"
CASE = GOLDEN / "fragment_type_clash"
SHOWN = ("{at}frag/coverage.glsl:2:12: error: type clash: import 'vec3 colour' meets export 'vec4 colour' of "
         "{at}frag/colour.glsl:3 (key golden/main{{MASKED=1}})",
         "{at}frag/output.glsl:2:12: error: type clash: import 'vec4 colour' meets export 'vec3 colour' of "
         "{at}frag/coverage.glsl:2 (key golden/main{{MASKED=1}})")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """``world/`` (one chunk, ``area/c00``, two keys), ``materials/`` (the clashing fragments), ``rules/``."""
    shutil.copytree(GOLDEN / "world", tmp_path / "world")
    shutil.copytree(CASE / "materials", tmp_path / "materials")
    shutil.copytree(CASE / "rules", tmp_path / "rules")
    (tmp_path / "world" / "pipeline.toml").write_text('rules = "../rules"\nmaterials = "../materials"\n')
    return tmp_path.resolve()


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def records(cache: Path, result: api.CookResult) -> dict:
    """Every job, job-identity and job-exact record the cook's jobs have."""
    with Store(cache) as store:
        jobs = {key: store.get(JOB, key) for key in sorted(result.plan.jobs)}
        identities = {job.identity: store.get(JOB_IDENTITY, job.identity) for job in result.plan.jobs.values()}
        exact = {key: store.get(JOB_EXACT, key) for key in sorted(store.keys(JOB_EXACT))}
    return {"jobs": jobs, "identities": identities, "exact": exact}


def cook_from(site: Path, cwd: Path, name: str, monkeypatch) -> api.CookResult:
    monkeypatch.chdir(cwd)
    return api.cook(site / "world", cache=site / f"cache-{name}", out=site / f"out-{name}", jobs=1)


def test_job_keys_records_and_outputs_do_not_depend_on_the_working_folder(site: Path, monkeypatch) -> None:
    beside = cook_from(site, site, "beside", monkeypatch)
    inside = cook_from(site, site / "world", "inside", monkeypatch)
    assert beside.errors and sorted(beside.plan.jobs) == sorted(inside.plan.jobs)
    assert records(site / "cache-beside", beside) == records(site / "cache-inside", inside)
    assert files_of(site / "out-beside") == files_of(site / "out-inside")
    # inside the package an error names its files canonically, whatever the working folder
    assert [e.to_json() for e in beside.errors] == [e.to_json() for e in inside.errors]
    assert beside.errors[0].file == f"{site}/materials/frag/coverage.glsl"
    # a manifest names them from the world's root, in the location and in the message
    manifest = json.loads((site / "out-beside" / "area" / "c00.json").read_text())
    assert {(e["file"], e["message"].rsplit(" ", 1)[-1]) for e in manifest["errors"]} == \
        {("../materials/frag/coverage.glsl", "../materials/frag/colour.glsl:3"),
         ("../materials/frag/output.glsl", "../materials/frag/coverage.glsl:2")}


def cli_cook(site: Path, cwd: Path, monkeypatch, *extra: str):
    monkeypatch.chdir(cwd)
    run = CliRunner().invoke(main, ["cook", str(site / "world"), "--cache", str(site / "cache"),
                                    "--out", str(site / "out"), "--jobs", "1", "-q", *extra])
    assert run.exit_code == 1 and "Traceback" not in run.output, run.output
    return run


@pytest.mark.parametrize("where, at", [(".", "materials/"), ("materials", ""), ("world", "{site}/materials/")],
                         ids=["beside", "in-the-library", "library-outside"])
def test_messages_name_shader_files_from_the_folder_the_command_runs_in(site: Path, monkeypatch, where, at) -> None:
    at = at.format(site=site)
    run = cli_cook(site, site / where, monkeypatch, "--json")
    assert [line for line in run.stderr.splitlines() if ": error: " in line] == [s.format(at=at) for s in SHOWN]
    doc = json.loads(run.stdout)
    assert [(e["file"], e["message"].rsplit(" ", 1)[-1]) for e in doc["errors"]] == \
        [(f"{at}frag/coverage.glsl", f"{at}frag/colour.glsl:3"), (f"{at}frag/output.glsl", f"{at}frag/coverage.glsl:2")]


def test_a_cook_from_another_folder_finds_everything_current(site: Path, monkeypatch) -> None:
    """Cache and outputs of a cook run beside the world serve a cook run inside it: nothing compiles
    or is rewritten, and the remembered errors print from the new folder."""
    cli_cook(site, site, monkeypatch)
    again = cli_cook(site, site / "world", monkeypatch)
    assert "0 compiled" in again.stdout and " 0 of " in again.stdout and "output files written" in again.stdout
    assert [line for line in again.stderr.splitlines() if ": error: " in line] == \
        [s.format(at=f"{site}/materials/") for s in SHOWN]
