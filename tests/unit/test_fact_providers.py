"""fact_providers: a provider's declaration checked, its sidecar path, value checks, the ext model."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.fact_providers import check_value, provided_model, provider_spec
from pipeline.facts import ProvidedFacts
from pipeline.plugin_loader import PluginError, resolve
from pipeline.facts import fact_fields
from paths import DATA

GOOD = '''
class P:
    name = "studio"
    version = "2"
    facts = {"wet": "bool", "tier": "int", "gloss": "float", "tag": "str", "surface": ["dry", "mud"]}
    sidecar = "{stem}.mat.json"

    def provide(self, data, draw):
        return {}
'''


def spec_of(tmp_path: Path, text: str):
    (tmp_path / "p.py").write_text(text)
    return provider_spec(resolve("facts", "p.py:P", tmp_path))


def test_a_declaration_becomes_a_spec_with_sorted_typed_facts(tmp_path) -> None:
    spec = spec_of(tmp_path, GOOD)
    assert spec.name == "studio" and spec.identity[:2] == ("studio", "2")
    assert spec.facts == (("gloss", "float"), ("surface", ("dry", "mud")), ("tag", "str"), ("tier", "int"),
                          ("wet", "bool"))
    assert spec.sidecar_of("town/a/mesh.gltf") == "town/a/mesh.mat.json"
    assert spec.sidecar_of("root.glb") == "root.mat.json"


@pytest.mark.parametrize("change, message", [
    (('name = "studio"', 'name = "Studio X"'), "its name must be a lower-case identifier"),
    (('"tier": "int"', '"tier": "integer"'), "fact 'tier' has type 'integer'"),
    (('"surface": ["dry", "mud"]', '"surface": ["dry", "dry"]'), "fact 'surface' has type"),
    (('"wet": "bool"', '"_wet": "bool"'), "fact name '_wet' must be an identifier"),
    (('sidecar = "{stem}.mat.json"', 'sidecar = "../{stem}.json"'), "must stay in the glTF file's folder tree"),
    (('sidecar = "{stem}.mat.json"', 'sidecar = "{material}.json"'), "may use only {stem} and {name}"),
    (('sidecar = "{stem}.mat.json"', 'sidecar = 3'), "'sidecar' must be a file pattern"),
    (("def provide(self, data, draw)", "def answer(self, data, draw)"), "has no provide(data, draw) method"),
])
def test_a_bad_declaration_says_what_is_wrong(tmp_path, change, message) -> None:
    with pytest.raises(PluginError) as raised:
        spec_of(tmp_path, GOOD.replace(*change))
    assert message in str(raised.value)


@pytest.mark.parametrize("kind, value, expected", [
    ("bool", True, True), ("int", 3, 3), ("float", 2, 2.0), ("str", "x", "x"), (("dry", "mud"), "mud", "mud"),
    ("int", None, None),
])
def test_values_of_the_declared_type_are_taken(kind, value, expected) -> None:
    found = check_value(kind, value)
    assert found == expected and type(found) is type(expected)


@pytest.mark.parametrize("kind, value", [("bool", 1), ("int", True), ("int", 1.5), ("float", "1"),
                                         ("float", float("nan")), ("str", 3), (("dry", "mud"), "wet")])
def test_values_of_another_type_are_refused(kind, value) -> None:
    with pytest.raises(ValueError, match="not of type"):
        check_value(kind, value)


def test_the_ext_model_has_one_optional_group_per_provider(tmp_path) -> None:
    assert provided_model(()) is ProvidedFacts
    spec = provider_spec(resolve("facts", "plugins/sidecar_facts.py:Wetness", DATA))
    model = provided_model((spec,))
    assert list(fact_fields(model)) == ["wetness"] and provided_model((spec,)) is model
    group = fact_fields(model)["wetness"].annotation.__args__[0]
    assert sorted(fact_fields(group)) == ["gloss", "level", "surface"]
    assert group(level=2).surface is None
