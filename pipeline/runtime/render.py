"""Offscreen render of one glTF file of a cooked world with its cooked pipelines.

Each triangle primitive of the file is drawn with the pipeline the chunk manifest names
for its draw in the ``pbr/forward`` pass (or the pass's fallback, logged as a miss),
into an RGBA8 + D32 framebuffer: vertex data from the glTF (numpy), the node transform,
skin joint matrices and morph deltas at the file's rest pose, base color and other core
textures where the file carries images, one directional light and a flat ambient term,
a fixed camera looking at the centre of the file's bounds from the front-right-above.
"""

from __future__ import annotations

import io
import math
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.outputs.atomic import write_if_changed
from pipeline.runtime.device import Device
from pipeline.runtime.geometry import Primitive, Scene, decode_image, load_scene
from pipeline.runtime.loader import Loader
from pipeline.runtime.misses import MissLog
from pipeline.runtime.pipelines import COLOR_FORMAT, DEPTH_FORMAT, Created
from pipeline.runtime.resources import Resources
from pipeline.runtime.uniforms import CORE_SLOTS, frame_block, light_block, material_block, object_block

FORWARD = "pbr/forward"
VIEW_DIRECTION = np.array([0.45, 0.35, 1.0]) / np.linalg.norm([0.45, 0.35, 1.0])  # from the target to the eye
LIGHT_DIRECTION = np.array([-0.3, -1.0, -0.5]) / np.linalg.norm([-0.3, -1.0, -0.5])  # the way light travels
FOV_Y = math.radians(40.0)
# the pbr family's vertex interface (materials/README.md, "Vertex inputs"): location -> glTF attribute
LOCATIONS = {0: "POSITION", 1: "NORMAL", 2: "TANGENT", 3: "TEXCOORD_0", 4: "TEXCOORD_1", 5: "COLOR_0",
             6: "JOINTS_0", 7: "WEIGHTS_0", 8: "JOINTS_1", 9: "WEIGHTS_1",
             10: "TRANSLATION", 11: "ROTATION", 12: "SCALE"}


@dataclass
class RenderResult:
    file: str
    chunk: str
    size: tuple[int, int]
    image: np.ndarray                  # (h, w, 4) uint8
    view_projection: np.ndarray        # world -> clip (GL-style y up, z in [0, 1])
    drawn: int = 0
    fallbacks: int = 0
    not_drawn: list[str] = field(default_factory=list)
    validation_messages: list[str] = field(default_factory=list)

    @property
    def mask(self) -> np.ndarray:
        return self.image[:, :, 3] > 0

    def to_json(self) -> dict:
        return {"file": self.file, "chunk": self.chunk, "size": list(self.size), "drawn": self.drawn,
                "fallbacks": self.fallbacks, "not_drawn": self.not_drawn,
                "validation_messages": self.validation_messages, "covered_pixels": int(self.mask.sum())}


def camera(points: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(view, projection, eye) framing the bounding sphere of ``points``."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    center = (lo + hi) / 2
    radius = max(float(np.linalg.norm(hi - lo)) / 2, 1e-6)
    distance = radius / math.sin(FOV_Y / 2) * 1.05
    eye = center + VIEW_DIRECTION * distance
    forward = (center - eye) / distance
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = right, up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    near, far = max(distance - radius * 1.5, distance * 1e-3), distance + radius * 1.5
    f = 1 / math.tan(FOV_Y / 2)
    w, h = size
    projection = np.array([[f * h / w, 0, 0, 0], [0, f, 0, 0],
                           [0, 0, far / (near - far), near * far / (near - far)], [0, 0, -1, 0]])
    return view, projection, eye


def relative_file(root: Path, file: str) -> str:
    """A file named on the command line (absolute, or relative to here or to the world root) from the root."""
    path = Path(file)
    if path.is_absolute() or path.exists():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return Path(file).as_posix()


def render(world_root: Path, file: str, out: Path, size: tuple[int, int] = (256, 256),
           miss_log: Path | None = None, limits=None, axes: dict | None = None) -> RenderResult:
    """``axes``: the runtime axis values the renderer draws with (each draw's pass picks its row)."""
    scene = load_scene(world_root, file, limits)
    chunk = posixpath.dirname(file)
    points = np.concatenate([p.world_positions() for p in scene.primitives]) if scene.primitives else np.zeros((1, 3))
    view, projection, eye = camera(points, size)
    with Device(validation=True) as device:
        loader = Loader(device, out, MissLog(miss_log) if miss_log else None)
        res = Resources(device)
        try:
            renderer = _Renderer(device, loader, res, scene, chunk, size)
            renderer.axes = axes
            result = renderer.run(view, projection, eye)
        finally:
            res.close()
            loader.close()
    result.validation_messages = list(device.messages)
    result.not_drawn = scene.skipped + result.not_drawn
    return result


class _Renderer:
    def __init__(self, device: Device, loader: Loader, res: Resources, scene: Scene, chunk: str, size):
        self.device, self.vk, self.loader, self.res = device, device.vk, loader, res
        self.scene, self.chunk, self.size = scene, chunk, size
        self.white = res.texture(np.full((1, 1, 4), 255, np.uint8))
        self.black_cube = res.texture(np.zeros((1, 1, 4), np.uint8), cube=True)
        self.images: dict[int, object] = {}
        self.axes: dict | None = None  # runtime axis values (None: each pass's first combination)

    def run(self, view, projection, eye) -> RenderResult:
        vk, w, h = self.vk, *self.size
        result = RenderResult(self.scene.file, self.chunk, self.size, np.zeros((h, w, 4), np.uint8), projection @ view)
        frame = self.res.buffer(frame_block(view, projection, eye, self.size, LIGHT_DIRECTION), "uniform")
        lights = self.res.buffer(light_block(LIGHT_DIRECTION), "uniform")
        draws = []
        for prim in self.scene.primitives:
            created, state, fell_back = self.loader.pipeline_for(self.chunk, prim.draw_id, FORWARD, self.axes)
            if created is None or not created.color:
                result.not_drawn.append(f"{prim.draw_id}: no pipeline for {FORWARD}")
                continue
            result.fallbacks += fell_back
            draws.append((prim, created, state))
        pool = self.res.descriptor_pool(max(1, 3 * len(draws)))
        prepared = [self._prepare(prim, created, state, pool, frame, lights) for prim, created, state in draws]
        color, color_view = self.device.image(w, h, getattr(vk, COLOR_FORMAT), vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT
                                              | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT, vk.VK_IMAGE_ASPECT_COLOR_BIT)
        depth, depth_view = self.device.image(w, h, getattr(vk, DEPTH_FORMAT),
                                              vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                              vk.VK_IMAGE_ASPECT_DEPTH_BIT)
        render_pass = self.loader.factory.render_pass(True)
        framebuffer = vk.vkCreateFramebuffer(self.device.device, vk.VkFramebufferCreateInfo(
            renderPass=render_pass, pAttachments=[color_view, depth_view], width=w, height=h, layers=1), None)
        readback = self.res.buffer(w * h * 4, "readback")
        try:
            self.device.submit(lambda cmd: self._record(cmd, render_pass, framebuffer, prepared, color, readback))
            result.image = np.frombuffer(self.device.read(readback)[: w * h * 4], np.uint8).reshape(h, w, 4).copy()
            result.drawn = len(prepared)
        finally:
            vk.vkDestroyFramebuffer(self.device.device, framebuffer, None)
            for image, view_ in ((color, color_view), (depth, depth_view)):
                vk.vkDestroyImageView(self.device.device, view_, None)
                self.device.free(image, image=True)
        return result

    def _record(self, cmd, render_pass, framebuffer, prepared, color, readback) -> None:
        vk, (w, h) = self.vk, self.size
        clears = [vk.VkClearValue(color=vk.VkClearColorValue(float32=[0.0, 0.0, 0.0, 0.0])),
                  vk.VkClearValue(depthStencil=vk.VkClearDepthStencilValue(depth=1.0, stencil=0))]
        vk.vkCmdBeginRenderPass(cmd, vk.VkRenderPassBeginInfo(
            renderPass=render_pass, framebuffer=framebuffer, renderArea=vk.VkRect2D((0, 0), (w, h)),
            pClearValues=clears), vk.VK_SUBPASS_CONTENTS_INLINE)
        vk.vkCmdSetViewport(cmd, 0, 1, [vk.VkViewport(x=0, y=h, width=w, height=-h, minDepth=0.0, maxDepth=1.0)])
        vk.vkCmdSetScissor(cmd, 0, 1, [vk.VkRect2D((0, 0), (w, h))])
        order = sorted(prepared, key=lambda d: bool(d["state"]["render_state"].get("blend")))  # opaque first
        for d in order:
            vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, d["created"].pipeline)
            if d["sets"]:
                vk.vkCmdBindDescriptorSets(cmd, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, d["created"].layout, 0,
                                           len(d["sets"]), d["sets"], 0, None)
            if d["vertex"]:
                vk.vkCmdBindVertexBuffers(cmd, 0, len(d["vertex"]), d["vertex"], [0] * len(d["vertex"]))
            if d["index"] is not None:
                vk.vkCmdBindIndexBuffer(cmd, d["index"], 0, vk.VK_INDEX_TYPE_UINT32)
                vk.vkCmdDrawIndexed(cmd, d["count"], d["instances"], 0, 0, 0)
            else:
                vk.vkCmdDraw(cmd, d["count"], d["instances"], 0, 0)
        vk.vkCmdEndRenderPass(cmd)
        region = vk.VkBufferImageCopy(
            bufferOffset=0, bufferRowLength=0, bufferImageHeight=0,
            imageSubresource=vk.VkImageSubresourceLayers(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1),
            imageOffset=vk.VkOffset3D(0, 0, 0), imageExtent=vk.VkExtent3D(w, h, 1))
        vk.vkCmdCopyImageToBuffer(cmd, color.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.handle, 1,
                                  [region])

    # ------------------------------------------------------------------ per draw
    def _prepare(self, prim: Primitive, created: Created, state: dict, pool, frame, lights) -> dict:
        vertex, instances = self._vertex_buffers(prim, state["vertex_layout"])
        index = None
        if prim.indices is not None:
            index = self.res.buffer(prim.indices.astype("<u4").tobytes(), "index").handle
        count = len(prim.indices) if prim.indices is not None else prim.vertex_count
        sets = self._descriptor_sets(prim, created, pool, frame, lights)
        return {"created": created, "state": state, "vertex": vertex, "index": index, "count": count,
                "instances": instances, "sets": sets}

    def _vertex_buffers(self, prim: Primitive, layout: list[dict]) -> tuple[list, int]:
        buffers, instances = [], 1
        for a in sorted(layout, key=lambda a: a["binding"]):
            name = LOCATIONS.get(a["location"])
            components = a["stride"] // 4
            dtype = {"SFLOAT": "<f4", "UINT": "<u4", "SINT": "<i4"}[a["format"].rsplit("_", 1)[1]]
            if a["rate"] == "instance":
                values = (prim.instances or {}).get(name)
                if values is None:
                    values = np.array([[0, 0, 0, 1] if name == "ROTATION" else [1, 1, 1] if name == "SCALE"
                                       else [0, 0, 0]], float)
                instances = len(values)
            else:
                values = prim.attributes.get(name)
                if values is None:
                    values = _flat_normals(prim) if name == "NORMAL" else np.zeros((prim.vertex_count, components))
            values = _fit(values, components, name)
            buffers.append(self.res.buffer(np.ascontiguousarray(values, dtype=dtype).tobytes(), "vertex").handle)
        return buffers, instances

    def _descriptor_sets(self, prim: Primitive, created: Created, pool, frame, lights) -> list:
        vk = self.vk
        layouts = [created.set_layouts[n] for n in sorted(created.set_layouts)]
        if not layouts:
            return []
        sets = vk.vkAllocateDescriptorSets(self.device.device, vk.VkDescriptorSetAllocateInfo(
            descriptorPool=pool, pSetLayouts=layouts))
        writes = []
        blocks = self._blocks(prim, created, frame, lights)
        for n, bindings in created.bindings.items():
            for b, d in bindings.items():
                if d["kind"] in ("uniform_buffer", "storage_buffer"):
                    buffer = blocks.get(d["name"]) or self.res.buffer(d.get("block_size") or 64, "storage")
                    info = vk.VkDescriptorBufferInfo(buffer=buffer.handle, offset=0, range=buffer.size)
                    kind = vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER if d["kind"] == "uniform_buffer" \
                        else vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                    writes.append(vk.VkWriteDescriptorSet(dstSet=sets[n], dstBinding=b, descriptorCount=1,
                                                          descriptorType=kind, pBufferInfo=[info]))
                elif d["kind"] == "combined_image_sampler":
                    texture = self.black_cube if d.get("type") == "samplerCube" else self._texture(prim, n, b)
                    info = vk.VkDescriptorImageInfo(sampler=self.res.sampler(), imageView=texture.view,
                                                    imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
                    writes.append(vk.VkWriteDescriptorSet(
                        dstSet=sets[n], dstBinding=b, descriptorCount=1,
                        descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, pImageInfo=[info]))
        if writes:
            vk.vkUpdateDescriptorSets(self.device.device, len(writes), writes, 0, None)
        return list(sets)

    def _blocks(self, prim: Primitive, created: Created, frame, lights) -> dict:
        sizes = {d["name"]: d.get("block_size") for bs in created.bindings.values() for d in bs.values()}
        count = prim.vertex_count
        slots = (sizes.get("MorphWeights") or 0) // 4
        blocks = {"FrameBlock": frame, "LightBlock": lights,
                  "MaterialBlock": self.res.buffer(material_block(prim.material, {}), "uniform"),
                  "ObjectBlock": self.res.buffer(object_block(prim.model, count, slots * count, 2 * slots * count),
                                                 "uniform")}
        if "JointMatrices" in sizes:
            joints = prim.joints if prim.joints is not None else np.eye(4)[None]
            blocks["JointMatrices"] = self.res.buffer(joints.transpose(0, 2, 1).astype("<f4").tobytes(), "storage")
        if "MorphDeltas" in sizes:
            blocks["MorphDeltas"] = self.res.buffer(_morph_deltas(prim, slots), "storage")
            weights = np.zeros(max(slots, 4), "<f4")
            weights[: min(len(prim.weights), slots)] = prim.weights[:slots]
            blocks["MorphWeights"] = self.res.buffer(weights.tobytes(), "uniform")
        return blocks

    def _texture(self, prim: Primitive, set_: int, binding: int):
        slot = binding - 1
        if set_ != 1 or slot not in CORE_SLOTS:
            return self.white
        parent, name = CORE_SLOTS[slot]
        info = (prim.material.get(parent, {}) if parent else prim.material).get(name)
        if info is None or info.get("index") is None or info["index"] >= len(self.scene.textures):
            return self.white
        source = self.scene.textures[info["index"]].get("source")
        if source not in self.scene.images:
            return self.white
        if source not in self.images:
            pixels = decode_image(self.scene.images[source])
            self.images[source] = self.res.texture(pixels) if pixels is not None else self.white
        return self.images[source]


def _fit(values: np.ndarray, components: int, name: str | None) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.shape[1] < components:  # e.g. an RGB COLOR_0 read as vec4: alpha 1
        pad = np.ones((len(values), components - values.shape[1]))
        values = np.concatenate([values, pad], axis=1)
    return values[:, :components]


def _flat_normals(prim: Primitive) -> np.ndarray:
    """Area-weighted vertex normals from the triangles (for meshes without NORMAL)."""
    p = prim.attributes["POSITION"]
    tri = prim.indices.reshape(-1, 3) if prim.indices is not None else np.arange(len(p) - len(p) % 3).reshape(-1, 3)
    n = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    out = np.zeros_like(p)
    for k in range(3):
        np.add.at(out, tri[:, k], n)
    length = np.linalg.norm(out, axis=1, keepdims=True)
    return np.where(length > 0, out / np.maximum(length, 1e-12), [0.0, 0.0, 1.0])


def _morph_deltas(prim: Primitive, slots: int) -> bytes:
    """vec4 per (section, target, vertex): positions, then normals, then tangents (materials/README.md)."""
    count = prim.vertex_count
    out = np.zeros((3, slots, count, 4), "<f4")
    for s, name in enumerate(("POSITION", "NORMAL", "TANGENT")):
        for t, target in enumerate(prim.targets[:slots]):
            if name in target:
                out[s, t, :, :3] = target[name][:, :3]
    return out.tobytes()


def write_png(path: Path | str, image: np.ndarray) -> None:
    """Write RGBA8 pixels as a PNG (Pillow), atomically."""
    from PIL import Image  # the runtime extra; imported on use like the Vulkan bindings

    buffer = io.BytesIO()
    Image.fromarray(image, "RGBA").save(buffer, format="PNG")
    write_if_changed(Path(path), buffer.getvalue())
