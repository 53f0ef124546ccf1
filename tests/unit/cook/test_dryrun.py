"""A dry run takes the one cook input, whichever way its keys were found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline import api

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_world"


@pytest.mark.parametrize("cooked", [False, True])
def test_a_dry_run_of_a_full_evaluation_says_what_the_incremental_one_says(tmp_path: Path, cooked: bool) -> None:
    world, cache, out = tmp_path / "world", tmp_path / "cache", tmp_path / "out"
    shutil.copytree(SAMPLE, world)
    if cooked:
        api.cook(world, cache=cache, out=out, jobs=1)
        (world / "town" / "square" / "plaza.gltf").touch()  # outputs checked again, nothing to compile
    docs = [api.cook(world, cache=cache, out=out, dry_run=True, **how).to_json()
            for how in ({}, {"incremental": False}, {"verify": True})]
    assert docs[0] == docs[1] == docs[2]
    assert docs[0]["keys"] > 0 and (docs[0]["cached"] == docs[0]["jobs"]) == cooked
