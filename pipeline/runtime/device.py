"""A Vulkan device for the runtime, through the ``vulkan`` bindings (cffi over the loader).

One :class:`Device` holds an instance (with ``VK_LAYER_KHRONOS_validation`` and a debug
messenger collecting every warning and error message when ``validation`` is on), the
first physical device with a graphics queue (Mesa's lavapipe on a machine without a
GPU), a logical device, its queue and a command pool, plus small helpers for buffers,
images and one-shot command buffers.  :func:`available` says whether Vulkan can run
here and, when not, why (tests skip with that reason).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from pipeline.errors import PipelineError

VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"


class VulkanUnavailable(PipelineError):
    """No usable Vulkan driver (or bindings, or validation layer) on this machine."""


def _vk():
    try:
        import vulkan
    except (ImportError, OSError) as exc:  # OSError: the bindings load libvulkan.so.1 on import
        raise VulkanUnavailable.at("vulkan", f"the Vulkan bindings cannot load: {exc} "
                                             "(pip install '.[runtime]'; Debian packages libvulkan1, "
                                             "mesa-vulkan-drivers, vulkan-validationlayers)") from None
    return vulkan


@functools.cache
def available(validation: bool = True) -> str | None:
    """None when a device can be made here, else the reason it cannot."""
    try:
        Device(validation=validation).close()
    except VulkanUnavailable as exc:
        return str(exc)
    return None


@dataclass
class Allocation:
    handle: object
    memory: object
    size: int


@dataclass
class Device:
    validation: bool = True
    messages: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        vk = self.vk = _vk()
        self._callback = self._on_message  # kept alive as long as the messenger
        layers = [VALIDATION_LAYER] if self.validation else []
        if self.validation and VALIDATION_LAYER not in {p.layerName for p in vk.vkEnumerateInstanceLayerProperties()}:
            raise VulkanUnavailable.at(VALIDATION_LAYER, "the Khronos validation layer is not installed "
                                                         "(Debian package vulkan-validationlayers)")
        messenger_info = vk.VkDebugUtilsMessengerCreateInfoEXT(
            messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
            messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
            pfnUserCallback=self._callback)
        app = vk.VkApplicationInfo(pApplicationName="pipeline runtime", apiVersion=vk.VK_MAKE_VERSION(1, 2, 0))
        try:
            self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(
                pApplicationInfo=app, ppEnabledLayerNames=layers,
                ppEnabledExtensionNames=["VK_EXT_debug_utils"] if self.validation else [],
                pNext=messenger_info if self.validation else None), None)
        except vk.VkError as exc:
            raise VulkanUnavailable.at("vulkan", f"cannot create a Vulkan instance: {type(exc).__name__}") from None
        self.messenger = None
        if self.validation:
            create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
            self.messenger = create(self.instance, messenger_info, None)
        self._pick_device()

    def _pick_device(self) -> None:
        vk = self.vk
        try:
            physical = vk.vkEnumeratePhysicalDevices(self.instance)
        except vk.VkError:
            physical = []
        for pd in physical:
            families = vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)
            for index, fam in enumerate(families):
                if fam.queueFlags & vk.VK_QUEUE_GRAPHICS_BIT:
                    self.physical, self.queue_family = pd, index
                    break
            else:
                continue
            break
        else:
            self._destroy_instance()
            raise VulkanUnavailable.at("vulkan", "no Vulkan device with a graphics queue (install mesa-vulkan-drivers "
                                                 "for the lavapipe CPU driver)")
        self.properties = vk.vkGetPhysicalDeviceProperties(self.physical)
        self.name = self.properties.deviceName
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.queue_family, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(self.physical, vk.VkDeviceCreateInfo(pQueueCreateInfos=[queue]), None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.queue_family, 0)
        self.pool = vk.vkCreateCommandPool(self.device, vk.VkCommandPoolCreateInfo(
            queueFamilyIndex=self.queue_family, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT), None)
        self.memory_types = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)

    def _on_message(self, severity, types, data, user) -> int:
        self.messages.append(self.vk.ffi.string(data.pMessage).decode(errors="replace"))
        return self.vk.VK_FALSE

    # ------------------------------------------------------------------ memory
    def _memory_type(self, bits: int, flags: int) -> int:
        props = self.memory_types
        for i in range(props.memoryTypeCount):
            if bits & (1 << i) and (props.memoryTypes[i].propertyFlags & flags) == flags:
                return i
        raise VulkanUnavailable.at("vulkan", "no suitable memory type")

    def _bind(self, requirements, flags: int):
        vk = self.vk
        return vk.vkAllocateMemory(self.device, vk.VkMemoryAllocateInfo(
            allocationSize=requirements.size,
            memoryTypeIndex=self._memory_type(requirements.memoryTypeBits, flags)), None)

    def buffer(self, data: bytes | int, usage: int) -> Allocation:
        """A host-visible buffer holding ``data`` (or ``data`` zero bytes)."""
        vk = self.vk
        size = max(data if isinstance(data, int) else len(data), 4)
        buf = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage,
                                                                  sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
        memory = self._bind(vk.vkGetBufferMemoryRequirements(self.device, buf),
                            vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
        vk.vkBindBufferMemory(self.device, buf, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        payload = bytes(size) if isinstance(data, int) else bytes(data) + bytes(size - len(data))
        mapped[0:size] = payload  # the bindings map memory as a cffi buffer
        vk.vkUnmapMemory(self.device, memory)
        return Allocation(buf, memory, size)

    def read(self, allocation: Allocation) -> bytes:
        vk = self.vk
        mapped = vk.vkMapMemory(self.device, allocation.memory, 0, allocation.size, 0)
        data = bytes(mapped[0:allocation.size])
        vk.vkUnmapMemory(self.device, allocation.memory)
        return data

    def image(self, width: int, height: int, fmt: int, usage: int, aspect: int, layers: int = 1,
              cube: bool = False) -> tuple[Allocation, object]:
        """A device-local optimal-tiling 2D (or cube) image and a view of it."""
        vk = self.vk
        img = vk.vkCreateImage(self.device, vk.VkImageCreateInfo(
            imageType=vk.VK_IMAGE_TYPE_2D, format=fmt, extent=vk.VkExtent3D(width, height, 1), mipLevels=1,
            arrayLayers=layers, samples=vk.VK_SAMPLE_COUNT_1_BIT, tiling=vk.VK_IMAGE_TILING_OPTIMAL, usage=usage,
            flags=vk.VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT if cube else 0,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE, initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED), None)
        requirements = vk.vkGetImageMemoryRequirements(self.device, img)
        memory = self._bind(requirements, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
        vk.vkBindImageMemory(self.device, img, memory, 0)
        view = vk.vkCreateImageView(self.device, vk.VkImageViewCreateInfo(
            image=img, viewType=vk.VK_IMAGE_VIEW_TYPE_CUBE if cube else vk.VK_IMAGE_VIEW_TYPE_2D, format=fmt,
            subresourceRange=vk.VkImageSubresourceRange(aspect, 0, 1, 0, layers)), None)
        return Allocation(img, memory, requirements.size), view

    def free(self, allocation: Allocation, *, image: bool = False) -> None:
        vk = self.vk
        (vk.vkDestroyImage if image else vk.vkDestroyBuffer)(self.device, allocation.handle, None)
        vk.vkFreeMemory(self.device, allocation.memory, None)

    # ------------------------------------------------------------------ commands
    def submit(self, record) -> None:
        """Record one command buffer with ``record(cmd)``, submit it and wait for it."""
        vk = self.vk
        cmd = vk.vkAllocateCommandBuffers(self.device, vk.VkCommandBufferAllocateInfo(
            commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(
            flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT))
        record(cmd)
        vk.vkEndCommandBuffer(cmd)
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(pCommandBuffers=[cmd])], fence)
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, 60_000_000_000)
        vk.vkDestroyFence(self.device, fence, None)
        vk.vkFreeCommandBuffers(self.device, self.pool, 1, [cmd])

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        vk = self.vk
        if getattr(self, "device", None) is not None:
            vk.vkDeviceWaitIdle(self.device)
            vk.vkDestroyCommandPool(self.device, self.pool, None)
            vk.vkDestroyDevice(self.device, None)
            self.device = None
        self._destroy_instance()

    def _destroy_instance(self) -> None:
        vk = self.vk
        if getattr(self, "instance", None) is None:
            return
        if self.messenger is not None:
            vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")(self.instance, self.messenger,
                                                                                      None)
            self.messenger = None
        vk.vkDestroyInstance(self.instance, None)
        self.instance = None

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
