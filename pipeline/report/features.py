"""Which static features, files and materials cost the most keys."""

from __future__ import annotations

from collections import Counter

from pipeline.facts import DrawSource
from pipeline.digest import canonical_bytes
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import AXES
from pipeline.keys.required import RequiredKeys
from pipeline.report.rows import ContributorRow, FeatureRow, KeyRow


def feature_rows(families, required: RequiredKeys) -> list[FeatureRow]:
    """For each static feature: the family's required keys, and how many would remain were it dynamic."""
    rows = []
    for shader, rs in sorted(families.items()):
        keys = [k for k in required.keys if k.shader == shader]
        static = sorted(f for f, mode in rs.compiled.modes.items() if mode == "static")
        for feature in static:
            used = {dict(k.features)[feature] for k in keys if feature in dict(k.features)}
            remaining = {drop_feature(k, feature) for k in keys}
            rows.append(FeatureRow(shader, feature, len(used), len(keys), len(remaining)))
    return sorted(rows, key=lambda r: (-r.saved, r.shader, r.feature))


def drop_feature(key: PermutationKey, feature: str) -> PermutationKey:
    """``key`` without ``feature`` (what the key would be were the feature dynamic)."""
    return PermutationKey(key.shader, key.pass_name, tuple(kv for kv in key.features if kv[0] != feature))


def contributor_rows(required: RequiredKeys, *, by_material: bool) -> list[ContributorRow]:
    """Files (or materials) by how many keys they alone need, then by keys needed."""
    owners: dict[PermutationKey, set[tuple]] = {}
    draws: Counter = Counter()
    for key, info in required.keys.items():
        owners[key] = {_owner(s, by_material) for s in info.draws}
        draws.update(_owner(s, by_material) for s in info.draws)
    keys = Counter(o for found in owners.values() for o in found)
    alone = Counter(next(iter(found)) for found in owners.values() if len(found) == 1)
    rows = [ContributorRow(o[0], o[1], keys[o], alone[o], draws[o]) for o in keys]
    return sorted(rows, key=lambda r: (-r.only_here, -r.keys, r.file, r.material or ""))


def _owner(source: DrawSource, by_material: bool) -> tuple[str, str | None]:
    if not by_material:
        return source.file, None
    name = "default" if source.material is None else f"material {source.material}"
    return source.file, name + (f" [{source.variant}]" if source.variant else "")


def key_rows(required: RequiredKeys, blobs=None) -> list[KeyRow]:
    """One row per required key; ``blobs(key)``: its stage blobs' sizes when cooked (else None)."""
    return [KeyRow(k.text, k.hash, k.shader, k.pass_name, len(i.draws),
                   tuple(sorted({s.chunk for s in i.draws})), tuple(sorted({s.file for s in i.draws})),
                   pipeline_states(i), blobs(k) if blobs else None)
            for k, i in required.sorted()]


def pipeline_states(uses) -> int:
    """The distinct (render state, specialization values) a key's draws are drawn with: its pipeline states."""
    return len({canonical_bytes([state, {n: v for n, v in spec.items() if n != AXES}])
                for _, state, spec in uses.bindings}) or len(uses.render_states)
