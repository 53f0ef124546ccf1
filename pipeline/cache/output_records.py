"""Output records: how the cook recognises outputs that are already exactly right.

``outputs:<absolute chunk manifest path>`` (version 2)::

    ["<inputs digest>" | null, <manifest stat>, "<pak file name>", <pak stat>]

where a stat is ``[mtime_ns, size, inode]`` or null (no file), and the pak file name is
the content-addressed name the manifest gives (``c00.<16 hex>.pak``).  The inputs digest
covers the chunk's keys, its job results, its level and errors; equal digest and
stats mean the chunk's files need not be read or written.

``level-outputs:<absolute level manifest path>`` (version 1)::

    ["<digest of the stats of the level's chunk manifests>", <level manifest stat>]
"""

from __future__ import annotations

from pipeline.cache.store import RecordKind

OUTPUTS = RecordKind("outputs", 2)
LEVEL_OUTPUTS = RecordKind("level-outputs", 1)
