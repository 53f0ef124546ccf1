"""Outputs: what a cook writes (chunk and level manifests, paks, the runtime contract, reflection) and how (atomic writes, sweeping)."""
