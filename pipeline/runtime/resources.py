"""GPU resources of one render: textures, a sampler, a descriptor pool, uniform and vertex buffers.

Everything created here is destroyed by :meth:`Resources.close`, so a render leaves no
Vulkan object behind (the validation layer would report it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipeline.runtime.device import Allocation, Device

RGBA8 = "VK_FORMAT_R8G8B8A8_UNORM"


@dataclass
class Texture:
    image: Allocation
    view: object


@dataclass
class Resources:
    device: Device
    buffers: list[Allocation] = field(default_factory=list)
    textures: list[Texture] = field(default_factory=list)
    samplers: list[object] = field(default_factory=list)
    pools: list[object] = field(default_factory=list)

    @property
    def vk(self):
        return self.device.vk

    def buffer(self, data: bytes | int, usage: str) -> Allocation:
        usage_bits = {"vertex": "VK_BUFFER_USAGE_VERTEX_BUFFER_BIT", "index": "VK_BUFFER_USAGE_INDEX_BUFFER_BIT",
                      "uniform": "VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT", "storage": "VK_BUFFER_USAGE_STORAGE_BUFFER_BIT",
                      "readback": "VK_BUFFER_USAGE_TRANSFER_DST_BIT",
                      "staging": "VK_BUFFER_USAGE_TRANSFER_SRC_BIT"}[usage]
        allocation = self.device.buffer(data, getattr(self.vk, usage_bits))
        self.buffers.append(allocation)
        return allocation

    def sampler(self):
        vk = self.vk
        if not self.samplers:
            self.samplers.append(vk.vkCreateSampler(self.device.device, vk.VkSamplerCreateInfo(
                magFilter=vk.VK_FILTER_LINEAR, minFilter=vk.VK_FILTER_LINEAR,
                mipmapMode=vk.VK_SAMPLER_MIPMAP_MODE_LINEAR, addressModeU=vk.VK_SAMPLER_ADDRESS_MODE_REPEAT,
                addressModeV=vk.VK_SAMPLER_ADDRESS_MODE_REPEAT, addressModeW=vk.VK_SAMPLER_ADDRESS_MODE_REPEAT,
                maxLod=0.0), None))
        return self.samplers[0]

    def texture(self, pixels: np.ndarray, cube: bool = False) -> Texture:
        """An RGBA8 texture from (h, w, 4) uint8 pixels (a cube repeats them on all six faces)."""
        vk = self.vk
        h, w = pixels.shape[:2]
        layers = 6 if cube else 1
        staging = self.buffer(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes() * layers, "staging")
        image, view = self.device.image(w, h, getattr(vk, RGBA8),
                                        vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT | vk.VK_IMAGE_USAGE_SAMPLED_BIT,
                                        vk.VK_IMAGE_ASPECT_COLOR_BIT, layers, cube)
        rng = vk.VkImageSubresourceRange(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers)

        def record(cmd):
            self.barrier(cmd, image.handle, rng, vk.VK_IMAGE_LAYOUT_UNDEFINED,
                         vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, vk.VK_ACCESS_TRANSFER_WRITE_BIT)
            region = vk.VkBufferImageCopy(
                bufferOffset=0, imageSubresource=vk.VkImageSubresourceLayers(vk.VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, layers),
                imageOffset=vk.VkOffset3D(0, 0, 0), imageExtent=vk.VkExtent3D(w, h, 1))
            vk.vkCmdCopyBufferToImage(cmd, staging.handle, image.handle, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      1, [region])
            self.barrier(cmd, image.handle, rng, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                         vk.VK_ACCESS_SHADER_READ_BIT)

        self.device.submit(record)
        texture = Texture(image, view)
        self.textures.append(texture)
        return texture

    def barrier(self, cmd, image, rng, old: int, new: int, src_access: int, dst_access: int) -> None:
        vk = self.vk
        vk.vkCmdPipelineBarrier(cmd, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                                0, None, 0, None, 1, [vk.VkImageMemoryBarrier(
                                    srcAccessMask=src_access, dstAccessMask=dst_access, oldLayout=old, newLayout=new,
                                    srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                                    dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED, image=image,
                                    subresourceRange=rng)])

    def descriptor_pool(self, sets: int):
        vk = self.vk
        sizes = [vk.VkDescriptorPoolSize(type=t, descriptorCount=sets * 20) for t in (
            vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER)]
        pool = vk.vkCreateDescriptorPool(self.device.device, vk.VkDescriptorPoolCreateInfo(
            maxSets=sets, pPoolSizes=sizes), None)
        self.pools.append(pool)
        return pool

    def close(self) -> None:
        vk, dev = self.vk, self.device.device
        for pool in self.pools:
            vk.vkDestroyDescriptorPool(dev, pool, None)
        for s in self.samplers:
            vk.vkDestroySampler(dev, s, None)
        for t in self.textures:
            vk.vkDestroyImageView(dev, t.view, None)
            self.device.free(t.image, image=True)
        for b in self.buffers:
            self.device.free(b)
        self.pools, self.samplers, self.textures, self.buffers = [], [], [], []
