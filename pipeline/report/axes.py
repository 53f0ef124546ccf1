"""Each runtime axis's multiplier: how many of a pass's required keys the axes make.

For every family and pass with runtime axes (:mod:`pipeline.rules.axes`), the keys the
content needs at one axis combination (``content_keys``: the required keys with every
axis taken out), the keys required over every allowed combination (``required``) and
their ratio; per axis, the required keys over the keys without that axis.  An axis of
mode ``specialization`` or ``dynamic`` multiplies no key (its multiplier is 1).
"""

from __future__ import annotations

from pipeline.keys.required import RequiredKeys
from pipeline.rules.axes import axes_of, pass_axes


def _without(key, names) -> tuple:
    return key.shader, key.pass_name, tuple(kv for kv in key.features if kv[0] not in names)


def axis_rows(families, required: RequiredKeys) -> list[dict]:
    by_pass: dict[tuple[str, str], list] = {}
    for key in required.keys:
        by_pass.setdefault((key.shader, key.pass_name), []).append(key)
    rows = []
    for (shader, pass_name), keys in sorted(by_pass.items()):
        rs = families.get(shader)
        if rs is None or not axes_of(rs):
            continue
        axes = pass_axes(rs, rs.compiled.passes[pass_name])
        if not axes:
            continue
        content = len({_without(k, axes) for k in keys})
        per_axis = [{"axis": name, "values": list(values), "mode": rs.compiled.modes[name],
                     "multiplier": round(len(keys) / len({_without(k, (name,)) for k in keys}), 3)}
                    for name, values in sorted(axes.items())]
        rows.append({"shader": shader, "pass": pass_name, "content_keys": content, "required": len(keys),
                     "multiplier": round(len(keys) / content, 3), "axes": per_axis})
    return rows
