"""Vulkan objects from the runtime contract: shader modules, layouts, render passes, pipelines.

A :class:`PipelineFactory` turns one pipeline state of a manifest (key + vertex layout +
render state + specialization values, docs/formats.md) and the reflection of its stage
blobs into a ``VkPipeline``, with nothing else to go on: descriptor set layouts and push
constant ranges come from the reflection, vertex bindings from the vertex layout,
rasterization, depth and blending from the render state.  Passes whose fragment stage
writes no color draw into a depth-only render pass; the others into RGBA8 + D32.
Modules, layouts and render passes are cached by content.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Mapping

from pipeline.runtime.device import Device

COLOR_FORMAT = "VK_FORMAT_R8G8B8A8_UNORM"
DEPTH_FORMAT = "VK_FORMAT_D32_SFLOAT"
_DESCRIPTOR_TYPES = {
    "uniform_buffer": "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER", "storage_buffer": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
    "combined_image_sampler": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
    "sampled_image": "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE", "sampler": "VK_DESCRIPTOR_TYPE_SAMPLER",
    "storage_image": "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE", "input_attachment": "VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT",
}
_STAGES = {"vertex": "VK_SHADER_STAGE_VERTEX_BIT", "fragment": "VK_SHADER_STAGE_FRAGMENT_BIT"}
_CULL = {"none": "VK_CULL_MODE_NONE", "back": "VK_CULL_MODE_BACK_BIT", "front": "VK_CULL_MODE_FRONT_BIT"}
_FRONT = {"ccw": "VK_FRONT_FACE_COUNTER_CLOCKWISE", "cw": "VK_FRONT_FACE_CLOCKWISE"}


class PipelineError(Exception):
    """A pipeline state cannot be turned into Vulkan objects (a contract problem, not a driver one)."""


@dataclass
class Created:
    """A created pipeline and what drawing with it needs."""

    pipeline: object
    layout: object
    set_layouts: dict[int, object]
    bindings: dict[int, dict[int, dict]]  # set -> binding -> reflection descriptor (merged over stages)
    color: bool


@dataclass
class PipelineFactory:
    device: Device
    modules: dict[str, object] = field(default_factory=dict)
    render_passes: dict[bool, object] = field(default_factory=dict)
    set_layouts: dict[bytes, object] = field(default_factory=dict)
    layouts: dict[bytes, object] = field(default_factory=dict)
    pipelines: list[object] = field(default_factory=list)
    _keep: list[object] = field(default_factory=list)  # cffi buffers the create infos point at

    @property
    def vk(self):
        return self.device.vk

    def _enum(self, name: str) -> int:
        return getattr(self.vk, name)

    # ------------------------------------------------------------------ modules
    def module(self, digest: str, spirv: bytes):
        found = self.modules.get(digest)
        if found is None:
            vk = self.vk
            found = self.modules[digest] = vk.vkCreateShaderModule(
                self.device.device, vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv), None)
        return found

    # ------------------------------------------------------------------ layouts
    def descriptors(self, reflections: Mapping[str, dict]) -> dict[int, dict[int, dict]]:
        """set -> binding -> descriptor, merged over stages (stage flags united)."""
        sets: dict[int, dict[int, dict]] = {}
        for stage, refl in reflections.items():
            for d in refl["descriptors"]:
                slot = sets.setdefault(d["set"], {}).setdefault(d["binding"], dict(d, stages=set()))
                if (slot["kind"], slot["count"]) != (d["kind"], d["count"]):
                    raise PipelineError(f"set {d['set']} binding {d['binding']}: stages disagree on its type")
                slot["stages"].add(stage)
        return sets

    def _set_layout(self, bindings: Mapping[int, dict]):
        vk = self.vk
        spec = tuple(sorted((b, d["kind"], max(d["count"], 1), tuple(sorted(d["stages"]))) for b, d in bindings.items()))
        ident = repr(spec).encode()
        found = self.set_layouts.get(ident)
        if found is None:
            infos = [vk.VkDescriptorSetLayoutBinding(
                binding=b, descriptorType=self._enum(_DESCRIPTOR_TYPES[kind]), descriptorCount=count,
                stageFlags=self._flags(stages)) for b, kind, count, stages in spec]
            found = self.set_layouts[ident] = vk.vkCreateDescriptorSetLayout(
                self.device.device, vk.VkDescriptorSetLayoutCreateInfo(pBindings=infos), None)
        return found

    def _flags(self, stages) -> int:
        flags = 0
        for s in stages:
            flags |= self._enum(_STAGES[s])
        return flags

    def _pipeline_layout(self, sets: dict[int, dict[int, dict]], reflections: Mapping[str, dict]):
        vk = self.vk
        set_layouts = {n: self._set_layout(sets.get(n, {})) for n in range(max(sets, default=-1) + 1)}
        ranges = []
        for stage, refl in sorted(reflections.items()):
            for block in refl["push_constants"]:
                if block.get("size"):
                    ranges.append((stage, block["size"]))
        ident = repr((sorted((n, id(l)) for n, l in set_layouts.items()), ranges)).encode()
        found = self.layouts.get(ident)
        if found is None:
            push = [vk.VkPushConstantRange(stageFlags=self._flags([s]), offset=0, size=size) for s, size in ranges]
            found = self.layouts[ident] = vk.vkCreatePipelineLayout(self.device.device, vk.VkPipelineLayoutCreateInfo(
                pSetLayouts=[set_layouts[n] for n in sorted(set_layouts)], pPushConstantRanges=push), None)
        return found, set_layouts

    # ------------------------------------------------------------------ render passes
    def render_pass(self, color: bool):
        found = self.render_passes.get(color)
        if found is not None:
            return found
        vk = self.vk
        attachments, color_refs = [], []
        if color:
            attachments.append(vk.VkAttachmentDescription(
                format=self._enum(COLOR_FORMAT), samples=vk.VK_SAMPLE_COUNT_1_BIT,
                loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR, storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
                stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
                initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED, finalLayout=vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL))
            color_refs.append(vk.VkAttachmentReference(0, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL))
        attachments.append(vk.VkAttachmentDescription(
            format=self._enum(DEPTH_FORMAT), samples=vk.VK_SAMPLE_COUNT_1_BIT,
            loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR, storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE, stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
            initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            finalLayout=vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL))
        depth_ref = vk.VkAttachmentReference(len(attachments) - 1, vk.VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL)
        subpass = vk.VkSubpassDescription(pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
                                          pColorAttachments=color_refs, pDepthStencilAttachment=depth_ref)
        found = self.render_passes[color] = vk.vkCreateRenderPass(self.device.device, vk.VkRenderPassCreateInfo(
            pAttachments=attachments, pSubpasses=[subpass]), None)
        return found

    # ------------------------------------------------------------------ pipelines
    def create(self, state: Mapping, modules: Mapping[str, object], reflections: Mapping[str, dict]) -> Created:
        """A graphics pipeline for one pipeline state; ``modules``/``reflections`` by stage name."""
        vk = self.vk
        sets = self.descriptors(reflections)
        layout, set_layouts = self._pipeline_layout(sets, reflections)
        color = bool(reflections.get("fragment", {}).get("outputs"))
        stages = [vk.VkPipelineShaderStageCreateInfo(
            stage=self._enum(_STAGES[name]), module=modules[name], pName=reflections[name]["entry"],
            pSpecializationInfo=self._specialization(state, reflections[name]))
            for name in sorted(modules, key=lambda n: n != "vertex")]
        rs = state["render_state"]
        info = vk.VkGraphicsPipelineCreateInfo(
            pStages=stages, pVertexInputState=self._vertex_input(state["vertex_layout"]),
            pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(
                topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST),
            pViewportState=vk.VkPipelineViewportStateCreateInfo(viewportCount=1, scissorCount=1),
            pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
                polygonMode=vk.VK_POLYGON_MODE_FILL, lineWidth=1.0,
                cullMode=self._enum(_CULL[rs.get("cull", "back")]),
                frontFace=self._enum(_FRONT[rs.get("front_face", "ccw")])),
            pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(
                rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT),
            pDepthStencilState=vk.VkPipelineDepthStencilStateCreateInfo(
                depthTestEnable=bool(rs.get("depth_test", True)), depthWriteEnable=bool(rs.get("depth_write", True)),
                depthCompareOp=vk.VK_COMPARE_OP_LESS_OR_EQUAL),
            pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(
                pAttachments=[self._blend(bool(rs.get("blend")))] if color else []),
            pDynamicState=vk.VkPipelineDynamicStateCreateInfo(
                pDynamicStates=[vk.VK_DYNAMIC_STATE_VIEWPORT, vk.VK_DYNAMIC_STATE_SCISSOR]),
            layout=layout, renderPass=self.render_pass(color), subpass=0)
        try:
            pipeline = vk.vkCreateGraphicsPipelines(self.device.device, None, 1, [info], None)[0]
        finally:
            self._keep.clear()
        self.pipelines.append(pipeline)
        return Created(pipeline, layout, set_layouts, sets, color)

    def _vertex_input(self, layout: list[dict]):
        vk = self.vk
        bindings = [vk.VkVertexInputBindingDescription(
            binding=a["binding"], stride=a["stride"],
            inputRate=vk.VK_VERTEX_INPUT_RATE_INSTANCE if a["rate"] == "instance" else vk.VK_VERTEX_INPUT_RATE_VERTEX)
            for a in layout]
        attributes = [vk.VkVertexInputAttributeDescription(
            location=a["location"], binding=a["binding"], format=self._enum("VK_FORMAT_" + a["format"]), offset=0)
            for a in layout]
        return vk.VkPipelineVertexInputStateCreateInfo(pVertexBindingDescriptions=bindings,
                                                       pVertexAttributeDescriptions=attributes)

    def _blend(self, on: bool):
        vk = self.vk
        return vk.VkPipelineColorBlendAttachmentState(
            blendEnable=on, srcColorBlendFactor=vk.VK_BLEND_FACTOR_SRC_ALPHA,
            dstColorBlendFactor=vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA, colorBlendOp=vk.VK_BLEND_OP_ADD,
            srcAlphaBlendFactor=vk.VK_BLEND_FACTOR_ONE, dstAlphaBlendFactor=vk.VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA,
            alphaBlendOp=vk.VK_BLEND_OP_ADD, colorWriteMask=0xF)

    def _specialization(self, state: Mapping, reflection: dict):
        """The state's specialization values for the constants this stage declares (4 bytes each)."""
        vk = self.vk
        declared = {c["id"]: c for c in reflection["specialization_constants"]}
        entries, data = [], b""
        for name, spec in sorted(state["specialization"].items()):
            const = declared.get(spec["constant_id"])
            if const is None:
                continue
            value = spec["value"]
            packed = struct.pack("<f", value) if const["type"] == "float" else \
                struct.pack("<i" if const["type"] == "int" else "<I", int(value))
            entries.append(vk.VkSpecializationMapEntry(constantID=spec["constant_id"], offset=len(data), size=4))
            data += packed
        if not entries:
            return None
        buffer = vk.ffi.new("char[]", data)
        self._keep.append(buffer)
        return vk.VkSpecializationInfo(pMapEntries=entries, dataSize=len(data), pData=buffer)

    def close(self) -> None:
        vk, dev = self.vk, self.device.device
        for p in self.pipelines:
            vk.vkDestroyPipeline(dev, p, None)
        for layout in self.layouts.values():
            vk.vkDestroyPipelineLayout(dev, layout, None)
        for layout in self.set_layouts.values():
            vk.vkDestroyDescriptorSetLayout(dev, layout, None)
        for rp in self.render_passes.values():
            vk.vkDestroyRenderPass(dev, rp, None)
        for m in self.modules.values():
            vk.vkDestroyShaderModule(dev, m, None)
        self.pipelines, self.layouts, self.set_layouts, self.render_passes, self.modules = [], {}, {}, {}, {}
