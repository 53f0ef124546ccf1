"""Scan: glTF files -> draws with typed facts (reader in ``gltf/``, facts, optional buffer facts, the scanner)."""
