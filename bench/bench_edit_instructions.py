"""A one-file edit's whole process counted in instructions, versions of the code side by side.

    python bench/bench_edit_instructions.py WORLD TREE:CACHE:OUT [TREE:CACHE:OUT ...] [--runs 2] [--props 400]
                                            [--out FILE]

CPU seconds of a short process on a shared machine vary by about 20% from run to run; the
instructions it executes (valgrind's callgrind, ``Collected``) vary by about 0.1%.  So two
versions of the code are compared here by the instructions of the same edit:

- ``WORLD``: a ``bench/worldgen.py`` world (``--props``: its palette, what the edit draws from);
  ``TREE``: a checkout of this project, whose
  ``pipeline`` package, rules and materials cook it; ``CACHE`` and ``OUT``: that tree's
  own cache and output folder (a code change may make a tree's records another's misses).
- Per tree, one edit is cooked first without counting (its new jobs compile and are stored),
  then each run rewrites the first file of the first chunk the same way
  (:func:`worldgen.edit_chunk`), counts ``pipeline cook --chunk`` of that chunk under
  callgrind (the cook's own process: every job is cached by then, so no pool starts), puts
  the file back and cooks the chunk again uncounted.  Trees take turns, run by run.

The table (median instructions per tree, against the first tree) is printed and, with
``--out``, written as Markdown.  Needs ``valgrind`` on ``PATH``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import worldgen  # noqa: E402

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
_COMPILED = re.compile(r"(\d+) compiled")


def _cook(tree: Path, world: Path, chunk: str, cache: Path, out: Path, count: bool) -> tuple[int | None, int]:
    """(instructions when ``count``, jobs compiled) of ``pipeline cook --chunk`` with ``tree``'s code."""
    cmd = [sys.executable, "-m", "pipeline", "cook", str(world), "--chunk", chunk, "--cache", str(cache),
           "--out", str(out), "-q", "-j", "2", "--rules", str(tree / "rules"), "--materials", str(tree / "materials")]
    if count:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for name in ("PIPELINE_CACHE", "PIPELINE_SCHEDULER"):
        env.pop(name, None)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the cook failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    compiled = _COMPILED.search(done.stdout)
    found = _COLLECTED.search(done.stderr) if count else None
    return (int(found.group(1)) if found else None), int(compiled.group(1)) if compiled else 0


def measure(world: Path, setups: list[tuple[Path, Path, Path]], runs: int, props: int = 400) -> list[dict]:
    """Per setup: its instructions per run and the jobs its counted cooks compiled; the world is left as it was."""
    chunks = sorted(p for p in world.glob("l*/c*") if p.is_dir())
    spec = worldgen.WorldSpec(chunks=len(chunks), files_per_chunk=len(list(chunks[0].iterdir())), props=props)
    chunk = worldgen.chunk_name(spec, 0)
    path = sorted((world / chunk).iterdir())[0]
    original = path.read_bytes()
    rows = [{"tree": tree, "counts": [], "compiled": 0} for tree, _, _ in setups]
    try:
        for warm in (True, *([False] * runs)):
            for row, (tree, cache, out) in zip(rows, setups):
                worldgen.edit_chunk(world, spec, 0)
                count, compiled = _cook(tree, world, chunk, cache, out, count=not warm)
                if not warm:
                    row["counts"].append(count)
                    row["compiled"] += compiled
                path.write_bytes(original)
                _cook(tree, world, chunk, cache, out, count=False)
    finally:
        path.write_bytes(original)
    return rows


def table(rows: list[dict], world: Path) -> str:
    first = statistics.median(rows[0]["counts"])
    lines = [f"One-file edit of `{world.name}` (`pipeline cook --chunk`, the cook's process), instructions:", "",
             "| tree | runs | instructions (median) | vs first | jobs compiled in counted runs |",
             "|---|---:|---:|---:|---:|"]
    for row in rows:
        median = statistics.median(row["counts"])
        lines.append(f"| {_describe(row['tree'])} | {len(row['counts'])} | {median / 1e9:.3f} G | "
                     f"{median / first:.3f}x | {row['compiled']} |")
    return "\n".join(lines) + "\n"


def _describe(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return f"{tree} ({done.stdout.strip()})" if done.returncode == 0 else str(tree)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("world", type=Path)
    parser.add_argument("setups", nargs="+", metavar="TREE:CACHE:OUT")
    parser.add_argument("--runs", type=int, default=2, help="counted runs per tree (default 2)")
    parser.add_argument("--props", type=int, default=400, help="the world's prop palette (default 400)")
    parser.add_argument("--out", type=Path, default=None, help="write the table here as well")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not on PATH (it counts the instructions)")
    setups = []
    for text in args.setups:
        parts = text.split(":")
        if len(parts) != 3:
            parser.error(f"expected TREE:CACHE:OUT, got {text!r}")
        setups.append(tuple(Path(p).resolve() for p in parts))
    rows = measure(args.world.resolve(), setups, args.runs, args.props)
    text = table(rows, args.world)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
