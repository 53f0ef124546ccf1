"""Measure draw feature frequencies of a glTF corpus with the scanner; write them as JSON.

    python bench/corpus_stats.py [--corpus DIR] [-o bench/corpus_frequencies.json]

Every draw of every file the scanner accepts counts once.  The table holds, for
the features that decide a permutation key, the fraction of draws that have it
(``p``) or the distribution of its values (``dist``), plus the shape of the
files (draws per file).  :mod:`bench.worldgen` samples its synthetic worlds from
this file, so a regenerated table regenerates the same kind of world.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.keys.required import optional_facts
from pipeline.rules.load import load_rulesets  # noqa: E402
from pipeline.scan import scanner  # noqa: E402
from pipeline.world import open_world  # noqa: E402

DEFAULT_CORPUS = ROOT / "corpus"
DEFAULT_OUT = Path(__file__).resolve().parent / "corpus_frequencies.json"

EXTENSIONS = ("clearcoat", "sheen", "transmission", "volume", "ior", "specular", "iridescence",
              "anisotropy", "emissiveStrength", "pbrSpecularGlossiness", "dispersion", "diffuseTransmission")
TEXTURES = ("baseColorTexture", "metallicRoughnessTexture", "normalTexture", "occlusionTexture",
            "emissiveTexture")


def draw_features(facts) -> dict:
    """The per-draw values the table counts (bools and small categorical values)."""
    mesh, mat, node = facts.mesh, facts.material, facts.node
    pbr = mat.pbrMetallicRoughness
    found = {
        "material.default": mat.default,
        "material.baseColorTexture": pbr.baseColorTexture is not None,
        "material.metallicRoughnessTexture": pbr.metallicRoughnessTexture is not None,
        "material.normalTexture": mat.normalTexture is not None,
        "material.occlusionTexture": mat.occlusionTexture is not None,
        "material.emissiveTexture": mat.emissiveTexture is not None,
        "material.doubleSided": mat.doubleSided,
        "material.unlit": mat.unlit,
        "material.textureTransform": mat.textureTransform,
        "material.clearcoatFactorPositive": mat.clearcoat is not None and mat.clearcoat.clearcoatFactor > 0,
        "mesh.normals": mesh.normals,
        "mesh.tangents": mesh.tangents,
        "mesh.indexed": mesh.indexed,
        "mesh.colorAllWhite": bool(mesh.colorAllWhite),
        "node.skin": node.skin,
        "node.instancing": node.instancing,
        "node.mirrored": node.mirrored,
        "mesh.morphNormal": "NORMAL" in mesh.morphAttributes,
        "mesh.morphTangent": "TANGENT" in mesh.morphAttributes,
    }
    found.update({f"material.{name}": getattr(mat, name) is not None for name in EXTENSIONS})
    categorical = {
        "material.alphaMode": mat.alphaMode,
        "material.maxUv": max(-1, min(mat.maxUv, 1)),
        "mesh.texcoordSets": min(mesh.texcoordSets, 2),
        "mesh.colorType": mesh.colorType or "NONE",
        "mesh.jointSets": min(mesh.jointSets, 2),
        "mesh.morphTargets": min(mesh.morphTargets, 8),
        "mesh.mode": mesh.mode,
    }
    return found, categorical


def measure(corpus: Path) -> dict:
    rulesets = load_rulesets(ROOT / "rules")
    result = scanner.scan(open_world(corpus), optional_facts=optional_facts(rulesets))
    flags: Counter = Counter()
    dists: dict[str, Counter] = {}
    per_file: Counter = Counter()
    for draw in result.draws:
        per_file[draw.source.file] += 1
        found, categorical = draw_features(draw.facts)
        flags.update(name for name, value in found.items() if value)
        for name, value in categorical.items():
            dists.setdefault(name, Counter())[str(value)] += 1
        flags.update(())
    n = len(result.draws)
    names = sorted(draw_features(result.draws[0].facts)[0])
    counts = sorted(per_file.values())
    return {
        "source": "bench/corpus_stats.py over corpus/ (pipeline.scan.scanner with the optional facts of rules/)",
        "files": len(result.files),
        "files_with_draws": len(per_file),
        "draws": n,
        "unique_signatures": result.unique_signatures,
        "draws_per_file": {"median": statistics.median(counts), "mean": round(n / len(per_file), 3),
                           "p90": counts[int(0.9 * (len(counts) - 1))], "max": counts[-1]},
        "p": {name: round(flags[name] / n, 4) for name in names},
        "dist": {name: {k: round(v / n, 4) for k, v in sorted(c.items())} for name, c in sorted(dists.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    table = measure(args.corpus)
    args.output.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{args.output}: {table['draws']} draws of {table['files_with_draws']} files")


if __name__ == "__main__":
    main()
