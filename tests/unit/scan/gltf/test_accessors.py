"""Accessor formats glTF does not define: ``normalized`` on FLOAT or UNSIGNED_INT."""

from __future__ import annotations

import msgspec
import pytest

from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.accessors import check_accessors


def doc(*accessors: dict) -> S.Document:
    return msgspec.convert({"asset": {"version": "2.0"}, "accessors": list(accessors)}, S.Document)


def accessor(component: int, normalized: bool) -> dict:
    return {"componentType": component, "count": 1, "type": "VEC4", "normalized": normalized}


@pytest.mark.parametrize("component", [5120, 5121, 5122, 5123])
def test_8_and_16_bit_integers_may_be_normalized(component: int) -> None:
    check_accessors(doc(accessor(component, True)), "f.gltf")


@pytest.mark.parametrize(("component", "name"), [(5125, "UNSIGNED_INT"), (5126, "FLOAT")])
def test_normalized_32_bit_components_are_located_errors(component: int, name: str) -> None:
    with pytest.raises(GltfError) as caught:
        check_accessors(doc(accessor(5126, False), accessor(component, True)), "f.gltf")
    assert str(caught.value) == (f"f.gltf: /accessors/1/normalized: error: normalized is only defined for "
                                 f"8- and 16-bit integer components, not {name}")


def test_not_normalized_is_always_fine() -> None:
    check_accessors(doc(accessor(5126, False), {"componentType": 5125, "count": 1, "type": "SCALAR"}), "f.gltf")
