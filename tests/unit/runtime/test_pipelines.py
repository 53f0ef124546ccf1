"""Vulkan objects from manifest pipeline states: descriptor merging, caching by content, cleanup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime_helpers import SAMPLE, cook, needs_vulkan
from pipeline.outputs.read_outputs import load_chunk
from pipeline.runtime.device import Device
from pipeline.runtime.pipelines import PipelineError, PipelineFactory


def descriptor(set_: int, binding: int, kind: str = "uniform_buffer", count: int = 1) -> dict:
    return {"set": set_, "binding": binding, "kind": kind, "count": count, "name": f"b{set_}{binding}"}


def reflection(*descriptors: dict) -> dict:
    return {"descriptors": list(descriptors), "push_constants": [], "specialization_constants": [], "entry": "main"}


def test_descriptors_merge_the_stages_of_a_shared_binding() -> None:
    factory = PipelineFactory(device=None)  # merging needs no device
    sets = factory.descriptors({"vertex": reflection(descriptor(0, 0), descriptor(1, 2, "storage_buffer")),
                                "fragment": reflection(descriptor(0, 0), descriptor(0, 1, "combined_image_sampler"))})
    assert sorted(sets) == [0, 1]
    assert sets[0][0]["stages"] == {"vertex", "fragment"}
    assert sets[0][1]["stages"] == {"fragment"} and sets[1][2]["stages"] == {"vertex"}
    assert sets[1][2]["kind"] == "storage_buffer"


@pytest.mark.parametrize("other", [descriptor(0, 0, "storage_buffer"), descriptor(0, 0, count=4)])
def test_stages_that_disagree_on_a_binding_are_a_contract_error(other: dict) -> None:
    with pytest.raises(PipelineError, match="set 0 binding 0: stages disagree"):
        PipelineFactory(device=None).descriptors({"vertex": reflection(descriptor(0, 0)),
                                                  "fragment": reflection(other)})


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("pipelines")
    shutil.copytree(SAMPLE / "forest" / "c02", tmp / "world" / "c02")
    return cook(tmp / "world", tmp)


@needs_vulkan
def test_every_state_of_a_chunk_becomes_a_pipeline_and_close_leaves_nothing(out: Path) -> None:
    doc, pak = load_chunk(out, "c02")  # the index, with the reflection of its blobs from the library
    with Device(validation=True) as device:
        factory = PipelineFactory(device)
        created = {}
        for pid, state in sorted(doc.pipelines.items()):
            stages = doc.keys[state["key"]].stages
            modules = {s: factory.module(d, pak.get(d)) for s, d in stages.items()}
            reflections = {s: doc.reflection[d] for s, d in stages.items()}
            created[pid] = factory.create(state, modules, reflections)
            expect_color = bool(reflections.get("fragment", {}).get("outputs"))
            assert created[pid].color == expect_color
            assert sorted(created[pid].set_layouts) == list(range(max(created[pid].bindings, default=-1) + 1))
        digests = {d for s in doc.pipelines.values() for d in doc.keys[s["key"]].stages.values()}
        assert set(factory.modules) == digests  # one module per blob, however many states use it
        assert factory.module(next(iter(digests)), b"ignored: cached by digest") is factory.modules[next(iter(digests))]
        assert len(factory.pipelines) == len(doc.pipelines)
        colors = {c.color for c in created.values()}
        assert set(factory.render_passes) == colors  # one render pass per kind of target
        assert len(factory.layouts) < len(doc.pipelines)  # layouts are shared by content
        factory.close()
        assert (factory.pipelines, factory.modules, factory.layouts) == ([], {}, {})
    assert device.messages == []  # the layer reports any object left at device destruction
