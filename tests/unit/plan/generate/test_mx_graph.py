"""MaterialX graphs: the glTF material as a ``gltf_pbr`` graph, documents read and checked, and graph shapes."""

from __future__ import annotations

import itertools

import pytest

from pipeline.errors import CompileError
from pipeline.plan.generate.mx_graph import (
    MATERIAL,
    TEXTURE_FEATURES,
    XInclude,
    check_xml,
    find_material,
    gltf_pbr_document,
    library,
    load_document,
    locate_name,
    shape_of,
)

DOCUMENT = """<?xml version="1.0"?>
<materialx version="1.39">
  <constant name="rough" type="float"><input name="value" type="float" value="0.7" /></constant>
  <gltf_pbr name="SR_a" type="surfaceshader">
    <input name="roughness" type="float" nodename="rough" />
  </gltf_pbr>
  <surfacematerial name="M_a" type="material">
    <input name="surfaceshader" type="surfaceshader" nodename="SR_a" />
  </surfacematerial>
</materialx>
"""
PART = """<?xml version="1.0"?>
<materialx version="1.39">
  <constant name="rough" type="float"><input name="value" type="float" value="0.3" /></constant>
  <surfacematerial name="M_b" type="material">
    <input name="surfaceshader" type="surfaceshader" nodename="SR_a" />
  </surfacematerial>
</materialx>
"""


def shape(text: str, material: str = "M_a") -> str:
    doc = load_document(text, "a.mtlx")
    return shape_of(doc.getChild(material))


def located(call) -> list[str]:
    with pytest.raises(CompileError) as caught:
        call()
    return [f"{d.location}: {d.message}" for d in caught.value.diagnostics]


def test_every_textured_slot_connects_its_image_to_its_gltf_pbr_inputs() -> None:
    doc = gltf_pbr_document(frozenset(TEXTURE_FEATURES))
    shader = doc.getNode("SR_gltf_pbr")
    links = {i.getName(): (i.getNodeName(), i.getOutputString()) for i in shader.getInputs()}
    assert links == {"base_color": ("base_color_map", "outcolor"), "alpha": ("base_color_map", "outa"),
                     "roughness": ("metallic_roughness_channels", "outg"),
                     "metallic": ("metallic_roughness_channels", "outb"),
                     "normal": ("normal_map", ""), "occlusion": ("occlusion_map", ""), "emissive": ("emissive_map", "")}
    channels = doc.getNode("metallic_roughness_channels")
    assert channels.getCategory() == "separate3" and channels.getInput("in").getNodeName() == "metallic_roughness_map"
    assert doc.validate()[0], doc.validate()[1]


def test_an_untextured_material_is_the_shader_alone_with_every_input_a_uniform() -> None:
    doc = gltf_pbr_document(frozenset())
    assert sorted(n.getCategory() for n in doc.getNodes()) == ["gltf_pbr", "surfacematerial"]
    assert doc.getNode("SR_gltf_pbr").getInputs() == []
    assert doc.getChild(MATERIAL).getInput("surfaceshader").getNodeName() == "SR_gltf_pbr"


def test_each_set_of_textured_slots_has_its_own_shape() -> None:
    subsets = [frozenset(c) for n in range(len(TEXTURE_FEATURES) + 1)
               for c in itertools.combinations(TEXTURE_FEATURES, n)]
    documents = [gltf_pbr_document(s) for s in subsets]  # a material lives only as long as its document
    shapes = {shape_of(doc.getChild(MATERIAL)) for doc in documents}
    assert len(shapes) == len(subsets) == 32
    assert all(len(s) == 16 and int(s, 16) >= 0 for s in shapes)


def test_a_shape_ignores_names_and_values_but_not_connections() -> None:
    base = shape(DOCUMENT)
    renamed = DOCUMENT.replace('"rough"', '"r2"').replace("SR_a", "SR_z").replace('value="0.7"', 'value="0.1"')
    assert shape(renamed) == base
    unconnected = DOCUMENT.replace('<input name="roughness" type="float" nodename="rough" />',
                                   '<input name="roughness" type="float" value="0.7" />')
    assert shape(unconnected) != base
    second = DOCUMENT.replace('<input name="roughness" type="float" nodename="rough" />',
                              '<input name="roughness" type="float" nodename="rough" />'
                              '<input name="metallic" type="float" nodename="rough" />')
    assert shape(second) not in (base, None)


def test_check_xml_finds_xincludes_by_their_written_prefix_and_locates_bad_xml() -> None:
    text = '<materialx>\n  <xi:include href="parts/x.mtlx"/>\n  <xi:include/>\n</materialx>'
    assert check_xml(text, "d.mtlx") == (XInclude("parts/x.mtlx", 2, 3), XInclude("", 3, 3))
    other_prefix = '<a xmlns:x="http://www.w3.org/2001/XInclude"><x:include href="q"/></a>'
    assert check_xml(other_prefix, "d.mtlx") == (), "MaterialX reads only the 'xi:' prefix, so does the check"
    broken = "<materialx>\n  <b></materialx>"
    col = broken.split("\n")[1].index("</materialx>") + 3  # expat points at the closing tag's name
    assert located(lambda: check_xml(broken, "d.mtlx")) == [f"d.mtlx:2:{col}: invalid MaterialX document: "
                                                             "mismatched tag"]


def test_an_included_document_is_read_first_and_keeps_a_name_defined_twice() -> None:
    doc = load_document(DOCUMENT, "a.mtlx", ((PART, "part.mtlx"),))
    assert doc.getNode("rough").getInputValue("value") == pytest.approx(0.3)
    assert sorted(m.getName() for m in doc.getMaterialNodes()) == ["M_a", "M_b"]
    alone = load_document(DOCUMENT, "a.mtlx")
    assert alone.getNode("rough").getInputValue("value") == pytest.approx(0.7)


COLOUR_CONSTANT = ('<constant name="rough" type="color3"><input name="value" type="color3" value="1, 0, 0" />'
                   '</constant>')


@pytest.mark.parametrize("spoiled, message", [
    (DOCUMENT.replace('nodename="rough"', 'nodename="nowhere"'), "Invalid port connection"),
    (DOCUMENT.replace(DOCUMENT.split("\n")[2].strip(), COLOUR_CONSTANT), "Mismatched types in port connection"),
], ids=["dangling", "mismatched"])
def test_an_invalid_connection_is_located_at_the_input_it_names(spoiled: str, message: str) -> None:
    assert spoiled != DOCUMENT
    (shown,) = located(lambda: load_document(spoiled, "a.mtlx"))
    line = 1 + spoiled[:spoiled.index('<input name="roughness"')].count("\n")
    assert shown.startswith(f"a.mtlx:{line}:5: invalid MaterialX document: {message}")


def test_find_material_takes_the_only_one_or_the_named_one() -> None:
    alone = load_document(DOCUMENT, "a.mtlx")
    assert find_material(alone, "", DOCUMENT, "a.mtlx").getName() == "M_a"
    both = load_document(DOCUMENT, "a.mtlx", ((PART, "part.mtlx"),))
    assert find_material(both, "M_b", DOCUMENT, "a.mtlx").getName() == "M_b"
    assert located(lambda: find_material(both, "", DOCUMENT, "a.mtlx")) == [
        "a.mtlx:1:1: more than one material; name one after '#' in the document (materials: M_b, M_a)"]
    assert located(lambda: find_material(alone, "M_x", DOCUMENT, "a.mtlx")) == [
        "a.mtlx:1:1: no material 'M_x' in the document (materials: M_a)"]


def test_locate_name_finds_the_element_start_of_an_exact_name() -> None:
    line_of = DOCUMENT.split("\n").index('  <gltf_pbr name="SR_a" type="surfaceshader">') + 1
    assert locate_name(DOCUMENT, "SR_a") == (line_of, 3)
    assert locate_name(DOCUMENT, "SR") == (None, None), "a prefix of a name is not the name"
    assert locate_name('<a name="x.y"/>', "x.y") == (1, 1) and locate_name('<a name="xzy"/>', "x.y") == (None, None)


def test_the_standard_libraries_load_once_and_define_gltf_pbr() -> None:
    assert library() is library()
    assert library().getNodeDef("ND_gltf_pbr_surfaceshader") is not None
