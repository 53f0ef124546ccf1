"""``pipeline explain``: why one permutation key exists."""

from __future__ import annotations

from collections import Counter

import click

from pipeline import api
from pipeline.cli._common import (
    output_options,
    EXIT_OK,
    cache_option,
    echo_json,
    guarded,
    materials_option,
    rules_option,
)
from pipeline.rules.compiled import format_value

MAX_DRAWS = 25
MAX_FACT_SETS = 3


@click.command("explain")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.argument("key")
@click.option("--level", "-l", metavar="L", help="Look only at the draws of this level.")
@click.option("--chunk", "-c", metavar="C", help="Look only at the draws of this chunk.")
@rules_option
@materials_option
@cache_option
@click.option("--backend", type=click.Choice(["capi", "cli", "auto"]), default="capi", show_default=True,
              help="The compiler whose cached blobs to show (as given to pipeline cook).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@guarded
def command(world, key, level, chunk, rules, materials, cache, backend, as_json):
    """Explain why KEY exists in WORLD.

    KEY is the canonical text (pbr/forward{ALPHA_MODE=MASK,...}, as pipeline keys
    prints it) or a prefix of its hash; a prefix matching several keys is an error
    listing them.  Shows every draw that needs the key (chunk, file, node, mesh,
    primitive, material, variant), the derive rule that set each feature (YAML
    location and the fact values it read), the normalize rules that fired, the
    render states and specialization values, and the stage blobs once cooked.
    """
    w = api.open_world(world, rules=rules, materials=materials)
    result = api.explain(w, key, level=level, chunk=chunk, cache=cache, backend=backend)
    doc = result.to_json()
    if as_json:
        echo_json(doc)
    else:
        click.echo("\n".join(render_text(doc)))
    return EXIT_OK


def render_text(doc: dict) -> list[str]:
    return _head(doc) + _folded(doc) + _draws(doc) + _rules(doc) + _normalize(doc) + _states(doc) + _stages(doc)


def _folded(doc: dict) -> list[str]:
    """Where a key folded from a runtime miss log (or key list) came from."""
    lines = [f"folded from {f['source']} into {f['chunk']}"
             + (" at " + ",".join(f"{n}={format_value(v)}" for n, v in sorted(f["axes"].items())) if f["axes"] else "")
             for f in doc.get("folded") or ()]
    return lines + [""] if lines else []


def _head(doc: dict) -> list[str]:
    files = len({d["file"] for d in doc["draws"]})
    chunks = len({d["chunk"] for d in doc["draws"]})
    return [f"key   {doc['key']}", f"hash  {doc['hash']}",
            f"needed by {len(doc['draws'])} draws in {files} files, {chunks} chunks", ""]


def _draws(doc: dict) -> list[str]:
    lines = ["draws (chunk, file, node, mesh, primitive, material, variant)"]
    for d in doc["draws"][:MAX_DRAWS]:
        material = "default" if d["material"] is None else d["material"]
        variant = f"  variant {d['variant']}" if d["variant"] else ""
        lines.append(f"  {d['chunk']}  {d['file']}  node {d['node']}  mesh {d['mesh']}  "
                     f"primitive {d['primitive']}  material {material}{variant}")
    if len(doc["draws"]) > MAX_DRAWS:
        lines.append(f"  ... {len(doc['draws']) - MAX_DRAWS} more (--json lists every draw)")
    return lines + [""]


def _rules(doc: dict) -> list[str]:
    lines = ["features: the derive rule that set each one, and the facts it read"]
    for r in doc["rules"]:
        value = _show(r["value"])
        if r["key_value"] is not None and r["key_value"] != r["value"]:
            value += f" -> {_show(r['key_value'])} after normalize"
        where = r["rule"] or "no derive rule: default"
        case = f" case {r['case']}" if r["case"] is not None else ""
        mode = "" if r["mode"] == "static" else f" ({r['mode']})"
        lines.append(f"  {r['feature']}{mode} = {value}   {where}{case}  [{r['draws']} draws]")
        if r["expression"]:
            lines.append(f"      {' '.join(r['expression'].split())}")
        lines += _fact_sets(r["facts"])
    return lines + [""]


def _fact_sets(sets: list[dict]) -> list[str]:
    lines = []
    for item in sets[:MAX_FACT_SETS]:
        shown = ", ".join(f"{p} = {_show(v)}" for p, v in item["values"].items())
        if shown:
            lines.append(f"      {shown}  [{item['draws']}]")
    if len(sets) > MAX_FACT_SETS:
        lines.append(f"      ... {len(sets) - MAX_FACT_SETS} more fact combinations (--json)")
    return lines


def _show(value) -> str:
    if isinstance(value, (bool, int)) or value is None:
        return "None" if value is None else format_value(value)
    return repr(value) if isinstance(value, str) else str(value)


def _normalize(doc: dict) -> list[str]:
    if not doc["normalize"]:
        return ["normalize: no rule fired", ""]
    lines = ["normalize rules that fired"]
    for n in doc["normalize"]:
        where = f"{n['rule']}" + (f" (pass {n['pass']})" if n["pass"] else "")
        sets = ", ".join(f"{k}={_show(v)}" for k, v in n["set"].items())
        lines.append(f"  {where}  when {' '.join(n['when'].split())}: set {sets}  [{n['draws']} draws]")
        if n["description"]:
            lines.append(f"      {n['description']}")
    return lines + [""]


def _states(doc: dict) -> list[str]:
    lines = ["render states"]
    for state in doc["render_states"]:
        lines.append("  " + ", ".join(f"{k}={_show(v)}" for k, v in sorted(state.items())))
    for name, values in doc["specialization"].items():
        lines.append(f"specialization {name}: {', '.join(_show(v) for v in values)}")
    return lines + [""]


def _stages(doc: dict) -> list[str]:
    states = Counter(s["state"] for s in doc["stages"])
    lines = [f"stages ({', '.join(f'{n} {s}' for s, n in sorted(states.items()))})"]
    for s in doc["stages"]:
        blob = f"blob {s['blob']}" if s["blob"] else s["state"]
        through = f"  through {', '.join(s['plugins'])}" if s.get("plugins") else ""
        lines.append(f"  {s['stage']:<8}  {s['source']}  job {s['job'][:12]}  {blob}{through}")
    return lines
