"""Loading what was cooked on a real Vulkan driver: devices, chunks, pipelines, renders, misses."""
