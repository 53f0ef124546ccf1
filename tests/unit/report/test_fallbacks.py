"""The fallback keys a cook adds beside the required keys, and the fallbacks that cannot be made."""

from __future__ import annotations

import msgspec
import pytest

from runtime_helpers import SAMPLE
from pipeline import api
from pipeline.errors import RuleError
from pipeline.keys.fallback import fallback_key
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses, RequiredKeys
from pipeline.report.fallbacks import fallback_rows


@pytest.fixture(scope="module")
def families():
    return api.open_world(SAMPLE).families


def required(*keys: PermutationKey) -> RequiredKeys:
    return RequiredKeys({k: KeyUses() for k in keys})


def test_no_required_key_of_a_family_means_none_of_its_fallbacks(families) -> None:
    assert fallback_rows(families, required()) == ([], [])


def test_every_declared_fallback_of_a_used_family_that_no_draw_requires(families) -> None:
    pbr = families["pbr"]
    declared = {name: fallback_key(pbr, name) for name, p in pbr.passes.items() if p.fallback is not None}
    assert declared
    some = PermutationKey("pbr", "forward", (("ALPHA_MODE", "OPAQUE"),))
    rows, errors = fallback_rows(families, required(some))
    assert errors == []
    assert rows == sorted(({"key": k.text, "hash": k.hash, "shader": "pbr", "pass": name}
                           for name, k in declared.items()), key=lambda r: r["key"])
    # a fallback that a draw requires is a required key, not listed apart
    rows, _ = fallback_rows(families, required(some, declared["forward"]))
    assert {r["pass"] for r in rows} == set(declared) - {"forward"}


def test_a_fallback_that_cannot_be_made_is_an_error_and_the_others_are_still_listed(families) -> None:
    pbr = families["pbr"]
    broken_pass = sorted(pbr.passes)[0]
    broken_one = msgspec.structs.replace(pbr.passes[broken_pass], fallback={"NOT_A_FEATURE": 1})
    broken = msgspec.structs.replace(pbr, passes={**pbr.passes, broken_pass: broken_one})
    with pytest.raises(RuleError):
        fallback_key(broken, broken_pass)
    rows, errors = fallback_rows({**families, "pbr": broken, "other": families["pbr"]},
                                 required(PermutationKey("pbr", "forward", ()), PermutationKey("other", "x", ())))
    assert len(errors) == 1 and "NOT_A_FEATURE" in errors[0].message
    assert errors[0].location.pointer == f"/passes/{broken_pass}/fallback"
    healthy = {fallback_key(pbr, name).text for name, p in pbr.passes.items() if p.fallback is not None}
    assert {r["key"] for r in rows} == healthy  # the other family's fallbacks are still listed
