"""Valid-key counting: variable elimination vs brute-force enumeration.

Generates rule sets of N features (every fifth a 3-valued int, the rest bools)
with chained normalize rules (``when: not F[i]`` sets ``F[i+2]`` off, plus a
pairwise rule every seventh feature), then times :func:`count_space` (median of
several runs) and, where feasible, a brute force that normalizes every full
assignment.  Prints a markdown table.

    python bench/bench_validcount.py [--runs 5]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import yaml

from pipeline.rules.counts import count_space
from pipeline.rules.load import load_ruleset_text
from pipeline.rules.normalize import run_normalize

BRUTE_FORCE_LIMIT = 200_000


def generated(n: int):
    features, normalize = {}, []
    for i in range(n):
        features[f"F{i:02d}"] = {"values": [0, 1, 2]} if i % 5 == 0 else {"type": "bool"}
    for i in range(n - 2):
        a, b, c = f"F{i:02d}", f"F{i + 1:02d}", f"F{i + 2:02d}"
        off = 0 if "values" in features[c] else False
        normalize.append({"when": f"not {a}" if i % 5 else f"{a} == 0", "set": {c: off}})
        if i % 7 == 0:
            normalize.append({"when": f"{a} and {b}" if i % 5 else f"{a} == 2 and {b}", "set": {c: off}})
    data = {"shader": "gen", "sources": {"vertex": "g.vert", "fragment": "g.frag"}, "features": features,
            "derive": {}, "normalize": normalize, "passes": {"main": {"features": "all"}}}
    return load_ruleset_text(yaml.safe_dump(data, sort_keys=False), f"generated-{n}.yaml")


def brute_force(rs) -> int:
    compiled = rs.compiled
    names = list(compiled.domains)
    rules = compiled.passes["main"].rules
    seen = set()
    for combo in itertools.product(*(compiled.domains[n].values for n in names)):
        values, _ = run_normalize(rules, dict(zip(names, combo)))
        seen.add(tuple(values[n] for n in names))
    return len(seen)


def timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| features | rules | possible | valid | count_space (median) | brute force |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (10, 14, 20, 40, 80):
        rs = generated(n)
        seconds, count = timed(lambda: count_space(rs, "main"), args.runs)
        brute = "-"
        if count.possible <= BRUTE_FORCE_LIMIT:
            b_seconds, b_valid = timed(lambda: brute_force(rs), 1)
            assert b_valid == count.valid, (n, b_valid, count.valid)
            brute = f"{b_seconds * 1000:.0f} ms"
        rules = len(rs.compiled.passes["main"].rules)
        print(f"| {n} | {rules} | {count.possible:.3e} | {count.valid:.3e} | {seconds * 1000:.1f} ms | {brute} |")


if __name__ == "__main__":
    main()
