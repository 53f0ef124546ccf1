"""The no-op cook stamp (cook/noop.py): which arguments it covers, what it records, when it answers for a cook."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.cook import noop
from pipeline.stamps import stamp_of

BAD = "world/forest/c00/a.gltf:1:1: error: bad\n"  # the located errors a stamped cook printed


@pytest.fixture
def site(tmp_path: Path, monkeypatch) -> SimpleNamespace:
    """A world, rule sets and a shader library in the working folder, and a cook's arguments over them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PIPELINE_CACHE", raising=False)
    monkeypatch.delenv("PIPELINE_SCHEDULER", raising=False)
    for folder in ("world/forest/c00", "rules", "materials", "out/forest", "package/cook"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "package/cook/noop.py").write_text("VERSION = 4\n")
    # the package's own code is stamped too: a copy here, so that no other test importing a module meanwhile
    # (a new __pycache__ folder changes its parent's stat) can touch what these stamps cover
    monkeypatch.setattr(noop, "_PACKAGE", str(tmp_path / "package"))
    (tmp_path / "world/forest/c00/a.gltf").write_text("{}")
    (tmp_path / "out/forest/c00.json").write_text("{}\n")
    args = noop.parse_args(["world", "--out", "out", "--cache", "cache"])
    return SimpleNamespace(root=tmp_path, args=args)


def stamp(site, args=None, **given) -> None:
    """Write the stamp of a cook that started now (every file here is older) and printed ``cooked``."""
    fields = dict(world_root="world", rules_dir="rules", materials_dir="materials", compiler_dir=None,
                  doc='{\n  "duration": 9.5,\n  "errors": []\n}\n', text="cooked\n", started_ns=time.time_ns() + 1)
    noop.write_stamp(args or site.args, **(fields | given))


def stamp_files(site) -> list[Path]:
    return sorted((site.root / "cache" / noop.STAMPS).glob("*.json"))


# ---------------------------------------------------------------- the arguments a stamp covers
def test_parse_args_reads_every_form_of_the_options_it_knows() -> None:
    args = noop.parse_args(["-o", "build", "--cache=c", "-l", "forest", "--json", "-q", "w", "-j", "2",
                            "--backend=capi", "--rules", "r", "--materials=m"])
    assert args == {"json": True, "quiet": True, "out": "build", "cache": "c", "level": "forest", "world": "w",
                    "jobs": "2", "backend": "capi", "rules": "r", "materials": "m"}
    assert noop.parse_args(["-"]) == {"json": False, "quiet": False, "world": "-"}


@pytest.mark.parametrize("argv", [
    [], ["w1", "w2"], ["w", "--verify"], ["w", "--out"], ["w", "-o", "a", "--out", "b"], ["w", "--backend", "cli"],
    ["w", "-j", "0"], ["w", "--jobs=x"], ["w", "--json=1"], ["w", "--chunk", "c", "-c", "d"],
])
def test_parse_args_refuses_what_a_stamp_cannot_vouch_for(argv) -> None:
    assert noop.parse_args(argv) is None


def test_the_stamp_key_follows_the_arguments_the_folder_and_the_environment(site, monkeypatch) -> None:
    cache, key = noop.stamp_key(site.args)
    assert cache == str(site.root / "cache") and noop.stamp_key(dict(site.args)) == (cache, key)
    assert noop.stamp_key(site.args | {"level": "forest"})[1] != key
    assert noop.stamp_key(site.args | {"json": True})[1] == key  # one stamp answers either form of the summary
    monkeypatch.setenv("PIPELINE_SCHEDULER", "tcp://127.0.0.1:1")
    assert noop.stamp_key(site.args)[1] != key
    monkeypatch.delenv("PIPELINE_SCHEDULER")
    monkeypatch.chdir(site.root / "world")
    assert noop.stamp_key(site.args)[1] != key
    monkeypatch.setenv("PIPELINE_CACHE", str(site.root / "elsewhere"))
    assert noop.stamp_key({"world": "w"})[0] == str(site.root / "elsewhere")


# ---------------------------------------------------------------- write, check, forget
def test_a_stamp_answers_until_an_output_changes(site) -> None:
    stamp(site, errors=BAD, code=1)
    answer = noop.check(site.args)
    assert (answer["text"], answer["errors"], answer["code"]) == ("cooked\n", BAD, 1)
    (site.root / "cache" / "notes.txt").write_text("the cache folder is not watched, but for its database")
    assert noop.check(site.args) is not None
    (site.root / "out/forest/c00.json").write_text("{} \n")  # an output edited by hand: the cook must repair it
    assert noop.check(site.args) is None


def test_a_missed_check_leaves_its_walk_to_the_cook_of_the_same_arguments_once(site) -> None:
    stamp(site)
    assert noop.check(site.args) is not None and noop.walked(site.args) is None  # a hit leaves nothing
    edited = site.root / "world/forest/c00/a.gltf"
    edited.write_text('{"asset": {"version": "2.0"}}')
    before = time.time_ns()
    assert noop.check(site.args) is None
    walk = noop.walked(site.args)
    assert walk.stamps[str(edited)] == [str(edited), *stamp_of(edited)]  # what the cook would have stat-ed
    assert str(site.root / "out/forest/c00.json") in walk.stamps and before <= walk.started_ns <= time.time_ns()
    assert noop.walked(site.args) is None  # taken once
    assert noop.check(site.args) is None
    assert noop.walked(noop.parse_args(["world", "--out", "out", "--cache", "cache", "-l", "forest"])) is None
    noop.drop_walks()
    assert noop.walked(site.args) is None  # good for the command that walked only


def test_a_stamp_after_a_missed_check_keeps_its_input_walks_and_walks_the_outputs_again(site, monkeypatch) -> None:
    stamp(site)
    edited, output = site.root / "world/forest/c00/a.gltf", site.root / "out/forest/c00.json"
    edited.write_text('{"asset": {"version": "2.0"}}')
    assert noop.check(site.args) is None
    walk = noop.walked(site.args)
    output.write_text('{"cooked": 1}\n')  # what the cook then writes
    walked, real = [], noop._walk
    monkeypatch.setattr(noop, "_walk", lambda root, skip, *rest: walked.append(root) or real(root, skip, *rest))
    stamp(site, started_ns=walk.started_ns, walk=walk)
    assert walked == [str(site.root / "out")]  # the world, rules, library and code as the check walked them
    assert noop.check(site.args) is not None  # and the outputs as written: the next cook is a no-op
    assert noop.check(site.args) is not None
    edited.write_text('{"asset": {"version": "2.0"}, "nodes": []}')  # changed after the walk the stamp keeps
    assert noop.check(site.args) is None
    walk = noop.walked(site.args)
    edited.write_text('{"asset": {"version": "2.0"}, "nodes": [], "scenes": []}')  # during the cook
    stamp(site, started_ns=walk.started_ns, walk=walk)
    assert noop.check(site.args) is None  # stamped as the cook began: this change takes the full path


def test_a_missed_check_s_walk_lists_the_folders_of_a_root_it_walked_whole(site) -> None:
    (site.root / "world/forest/c00/b.glb").write_bytes(b"")
    (site.root / "world/forest/.hidden").mkdir()
    stamp(site)
    (site.root / "world/town").mkdir()  # a change: the check misses
    assert noop.check(site.args) is None
    world = str(site.root / "world")
    listing = noop.walked(site.args).listing(world)
    assert listing == {"": [], "forest": [], "forest/c00": ["a.gltf", "b.glb"], "forest/.hidden": [], "town": []}
    stamp(site)
    (site.root / "world/town/__pycache__").mkdir()  # a folder the walk leaves out: it cannot say what is there
    assert noop.check(site.args) is None
    walk = noop.walked(site.args)
    assert walk.listing(world) is None and walk.listing(str(site.root / "world/forest")) is None  # not a root


def test_a_changed_cache_database_takes_the_full_path(site) -> None:
    stamp(site)
    (site.root / "cache" / "cache.db").write_bytes(b"another database")
    assert noop.check(site.args) is None


@pytest.mark.parametrize("edited", ["package/cook/noop.py", "rules/t.yaml", "materials/t.frag", "compiler/lib.so"])
def test_an_edit_to_the_code_rules_library_or_compiler_takes_the_full_path(site, edited) -> None:
    (site.root / "compiler").mkdir()
    for name in ("rules/t.yaml", "materials/t.frag", "compiler/lib.so"):
        (site.root / name).write_text("first\n")
    stamp(site, compiler_dir="compiler")
    assert noop.check(site.args) is not None
    with open(site.root / edited, "a") as f:  # an existing file grows: its folder's stat stays
        f.write("# edited\n")
    assert noop.check(site.args) is None


def test_forget_removes_the_stamp(site) -> None:
    stamp(site)
    assert len(stamp_files(site)) == 1
    noop.forget(site.args)
    assert stamp_files(site) == [] and noop.check(site.args) is None
    noop.forget(site.args)  # nothing to remove: no error


def test_a_stamp_of_another_day_or_version_or_unreadable_is_no_answer(site, monkeypatch) -> None:
    stamp(site)
    [path] = stamp_files(site)
    monkeypatch.setattr(noop, "_today", lambda: int(time.time() // 86400) + 1)
    assert noop.check(site.args) is None  # the first cook of a day refreshes the use records
    monkeypatch.undo()
    monkeypatch.chdir(site.root)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc | {"version": noop.VERSION - 1}))
    assert noop.check(site.args) is None
    path.write_text(json.dumps(doc)[:-5])
    assert noop.check(site.args) is None
    path.write_text(json.dumps(doc))
    assert noop.check(site.args) is not None


def test_a_symlink_in_the_world_means_no_stamp_and_drops_the_old_one(site) -> None:
    stamp(site)
    assert stamp_files(site)
    (site.root / "world/forest/c00/b.gltf").symlink_to(site.root / "world/forest/c00/a.gltf")
    stamp(site)
    assert stamp_files(site) == []


def test_a_world_link_re_pointed_elsewhere_is_another_cook(site) -> None:
    (site.root / "other/forest/c00").mkdir(parents=True)
    (site.root / "link").symlink_to("world")
    args = noop.parse_args(["link", "--out", "out", "--cache", "cache"])
    stamp(site, args)
    assert noop.check(args)["resolved"]["world"] == str(site.root / "world")
    (site.root / "link").unlink()
    (site.root / "link").symlink_to("other")
    assert noop.check(args) is None
    stamp(site, args)  # the world cooked is not where the path given leads now
    assert stamp_files(site) == []


# ---------------------------------------------------------------- the fast answer
class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_fast_cook_prints_the_recorded_answer_and_returns_its_exit_code(site, capsys, monkeypatch) -> None:
    argv = ["world", "--out", "out", "--cache", "cache"]
    assert noop.fast_cook(argv) is None  # no stamp yet
    stamp(site, errors=BAD, code=1)
    assert noop.fast_cook(argv) == 1
    printed = capsys.readouterr()
    assert (printed.out, printed.err) == ("cooked\n", BAD)
    assert noop.fast_cook([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == [] and doc["duration"] != 9.5 and 0 <= doc["duration"] < 9.5
    monkeypatch.setattr(noop.sys, "stderr", Terminal())
    assert noop.fast_cook(argv) is None  # a terminal may want the errors coloured: the full path prints them
    assert capsys.readouterr().out == ""


def test_fast_cook_leaves_a_scheduler_or_another_option_to_the_full_path(site, monkeypatch, capsys) -> None:
    argv = ["world", "--out", "out", "--cache", "cache"]
    stamp(site)
    assert noop.fast_cook([*argv, "--verify"]) is None
    monkeypatch.setenv("PIPELINE_SCHEDULER", "none")
    assert noop.fast_cook(argv) == 0 and capsys.readouterr().out == "cooked\n"
    monkeypatch.setenv("PIPELINE_SCHEDULER", "tcp://127.0.0.1:1")
    assert noop.fast_cook(argv) is None and capsys.readouterr().out == ""
