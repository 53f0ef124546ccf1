"""The Vulkan device of the runtime: buffers, images, one-shot commands, validation messages, and why it cannot run."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest

from paths import REPO
from runtime_helpers import needs_vulkan
from pipeline.runtime.device import VALIDATION_LAYER, Device, available

pytestmark = needs_vulkan


def test_buffers_hold_their_bytes_zero_padded_to_at_least_four() -> None:
    with Device() as device:
        vk = device.vk
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        tiny = device.buffer(b"ab", usage)
        empty = device.buffer(0, usage)
        sized = device.buffer(10, usage)
        assert (tiny.size, device.read(tiny)) == (4, b"ab\0\0")
        assert (empty.size, device.read(empty)) == (4, bytes(4))
        assert (sized.size, device.read(sized)) == (10, bytes(10))
        for allocation in (tiny, empty, sized):
            device.free(allocation)
    assert device.messages == []


def test_submit_runs_the_recorded_commands_before_returning() -> None:
    with Device() as device:
        vk = device.vk
        both_ways = vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        source = device.buffer(bytes(range(16)), both_ways)
        target = device.buffer(16, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        device.submit(lambda cmd: vk.vkCmdFillBuffer(cmd, source.handle, 8, 8, 0xA1B2C3D4))
        assert device.read(source) == bytes(range(8)) + struct.pack("<I", 0xA1B2C3D4) * 2
        device.submit(lambda cmd: vk.vkCmdCopyBuffer(cmd, source.handle, target.handle, 1,
                                                     [vk.VkBufferCopy(srcOffset=4, dstOffset=0, size=12)]))
        assert device.read(target) == device.read(source)[4:] + bytes(4)
        device.free(source)
        device.free(target)
    assert device.messages == []  # every command buffer and fence was released


@pytest.mark.parametrize("cube, layers", [(False, 1), (True, 6)])
def test_images_get_memory_for_every_layer_and_a_view(cube: bool, layers: int) -> None:
    with Device() as device:
        vk = device.vk
        allocation, view = device.image(8, 8, vk.VK_FORMAT_R8G8B8A8_UNORM,
                                        vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                        vk.VK_IMAGE_ASPECT_COLOR_BIT, layers=layers, cube=cube)
        assert allocation.size >= 8 * 8 * 4 * layers and view is not None
        vk.vkDestroyImageView(device.device, view, None)
        device.free(allocation, image=True)
    assert device.messages == []


def test_a_depth_image_is_created_with_its_aspect() -> None:
    with Device() as device:
        vk = device.vk
        allocation, view = device.image(4, 2, vk.VK_FORMAT_D32_SFLOAT, vk.VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                        vk.VK_IMAGE_ASPECT_DEPTH_BIT)
        assert allocation.size >= 4 * 2 * 4
        vk.vkDestroyImageView(device.device, view, None)
        device.free(allocation, image=True)
    assert device.messages == []


def test_objects_left_at_close_are_reported_while_the_messenger_still_listens() -> None:
    with Device() as device:
        device.buffer(16, device.vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)  # never freed
    leaked = sorted(device.messages)
    assert len(leaked) == 2 and all("VUID-vkDestroyDevice-device-00378" in m for m in leaked)
    assert "type = VK_OBJECT_TYPE_BUFFER;" in leaked[0] and "type = VK_OBJECT_TYPE_DEVICE_MEMORY;" in leaked[1]


def invalid_buffer(device: Device) -> None:
    vk = device.vk
    handle = vk.vkCreateBuffer(device.device, vk.VkBufferCreateInfo(
        size=16, usage=0, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)  # usage must not be 0
    vk.vkDestroyBuffer(device.device, handle, None)


def test_validation_messages_are_collected_only_with_validation_on() -> None:
    with Device(validation=True) as checked:
        invalid_buffer(checked)
        [message] = checked.messages
        assert "VUID-VkBufferCreateInfo-usage-requiredbitmask" in message
    with Device(validation=False) as unchecked:
        assert unchecked.messenger is None
        invalid_buffer(unchecked)
    assert unchecked.messages == []


def test_the_device_has_a_graphics_queue_and_closes_once() -> None:
    device = Device()
    vk = device.vk
    families = vk.vkGetPhysicalDeviceQueueFamilyProperties(device.physical)
    assert families[device.queue_family].queueFlags & vk.VK_QUEUE_GRAPHICS_BIT
    assert isinstance(device.name, str) and device.name
    device.close()
    assert device.device is None and device.instance is None and device.messenger is None
    device.close()  # a second close does nothing
    assert available() is None and available(validation=False) is None


def reason_in(env: dict[str, str]) -> tuple[str | None, str | None]:
    """``available()`` with and without validation in a fresh process run with ``env`` added."""
    code = ("import json; from pipeline.runtime.device import available; "
            "print(json.dumps([available(), available(validation=False)]))")
    done = subprocess.run([sys.executable, "-c", code], env=os.environ | env, cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    return tuple(json.loads(done.stdout.splitlines()[-1]))


def test_a_missing_validation_layer_is_the_reason_and_validation_off_still_runs(tmp_path) -> None:
    with_layer, without = reason_in({"VK_LAYER_PATH": str(tmp_path), "VK_ADD_LAYER_PATH": ""})
    assert with_layer == (f"{VALIDATION_LAYER}: error: the Khronos validation layer is not installed "
                          "(Debian package vulkan-validationlayers)")
    assert without is None


def test_no_driver_is_a_located_reason_not_a_crash(tmp_path) -> None:
    missing = str(tmp_path / "no_driver.json")
    reasons = reason_in({"VK_ICD_FILENAMES": missing, "VK_DRIVER_FILES": missing})
    expected = {"vulkan: error: cannot create a Vulkan instance: VkErrorIncompatibleDriver",
                "vulkan: error: no Vulkan device with a graphics queue (install mesa-vulkan-drivers "
                "for the lavapipe CPU driver)"}
    assert reasons[0] in expected and reasons[1] in expected  # available() turned the failure into its reason
