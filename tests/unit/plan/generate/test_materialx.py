"""The ``materialx`` generator: a key's graph (``gltf_pbr`` or a document) through MaterialX's generators, one
text for every target."""

from __future__ import annotations

from pathlib import Path

import MaterialX as mx

from pipeline.compilers import CompileRequest, SourceTree, compile_one, default_backend
from pipeline.keys.key import PermutationKey
from pipeline.plan.generate import materialx as materialx_module
from pipeline.plan.generate.materialx import MAX_XINCLUDES, MaterialxGenerator, materialx_version

XI = 'xmlns:xi="http://www.w3.org/2001/XInclude"'
SHADER = """  <gltf_pbr name="SR_a" type="surfaceshader">
    <input name="roughness" type="float" nodename="rough" />
  </gltf_pbr>
  <surfacematerial name="M_a" type="material">
    <input name="surfaceshader" type="surfaceshader" nodename="SR_a" />
  </surfacematerial>
"""
ROUGH = '  <constant name="rough" type="float"><input name="value" type="float" value="{}" /></constant>\n'


def document(body: str, head: str = "") -> str:
    return f'<?xml version="1.0"?>\n<materialx version="1.39" {XI}>\n{head}{body}</materialx>\n'


def materials(root: Path, files: dict[str, str]) -> SourceTree:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return SourceTree(root)


def key(**features) -> PermutationKey:
    return PermutationKey("mtlx", "forward", tuple(sorted(features.items())))


def test_gltf_pbr_is_the_default_graph_and_compiles_stamped_with_the_materialx_version(tmp_path: Path) -> None:
    made = MaterialxGenerator(SourceTree(tmp_path)).generate(None, key(NORMAL_MAP=True))
    assert sorted(made) == ["fragment", "vertex"]
    for stage, generated in made.items():
        lines = generated.text.split("\n")
        assert lines[0].startswith("#version ")
        assert lines[1].startswith(f"// MaterialX {mx.getVersionString()}: VkShaderGenerator; ")
        assert (generated.files, generated.defines, generated.problems) == ((), (), ())
        for target in ("vulkan1.2", "webgl2", "webgpu"):
            out = compile_one(CompileRequest(f"generated/t.{stage[:4]}", stage, text=generated.text, target=target),
                              SourceTree(tmp_path), default_backend())
            assert out.ok, (target, out.diagnostics)
    assert made["vertex"].shape == made["fragment"].shape and materialx_version() == mx.getVersionString()


def test_the_gltf_pbr_graph_follows_the_texture_features_that_are_true(tmp_path: Path) -> None:
    generator = MaterialxGenerator(SourceTree(tmp_path))
    plain = generator.generate(None, key(DOCUMENT="gltf_pbr", BASE_COLOR_MAP=False, NORMAL_MAP=False))
    assert generator.generate(None, key()) is plain, "the same textured slots: made once"
    assert generator.generate(None, key(COLOUR_VARIANT=3)) is plain, "a feature that is no texture slot is ignored"
    textured = generator.generate(None, key(BASE_COLOR_MAP=True))
    assert textured["fragment"].shape != plain["fragment"].shape
    assert textured["fragment"].text != plain["fragment"].text


def test_a_document_is_generated_once_per_content(tmp_path: Path, monkeypatch) -> None:
    tree = materials(tmp_path, {"s/a.mtlx": document(ROUGH.format("0.5") + SHADER)})
    made: list[str] = []
    real = materialx_module._generate

    def counting(material, files, display, text):
        made.append(material.getName())
        return real(material, files, display, text)

    monkeypatch.setattr(materialx_module, "_generate", counting)
    generator = MaterialxGenerator(tree)
    first = generator.generate(None, key(DOCUMENT="s/a.mtlx#M_a"))
    assert generator.generate(None, key(DOCUMENT="s/a.mtlx#M_a", OTHER=1)) is first and made == ["M_a"]
    (tmp_path / "s" / "a.mtlx").write_text(document(ROUGH.format("0.25") + SHADER))
    again = generator.generate(None, key(DOCUMENT="s/a.mtlx#M_a"))
    assert made == ["M_a", "M_a"], "a new content is generated again"
    assert again["fragment"].text == first["fragment"].text and again["fragment"].files == ("s/a.mtlx",)


def test_a_generator_that_cannot_make_the_graph_fails_its_target_s_job_only(tmp_path: Path, monkeypatch) -> None:
    real = materialx_module.generate_stages

    def no_essl(generator, node, name):
        if generator == "EsslShaderGenerator":
            raise RuntimeError("no ESSL implementation")
        return real(generator, node, name)

    monkeypatch.setattr(materialx_module, "generate_stages", no_essl)
    made = MaterialxGenerator(SourceTree(tmp_path)).generate(None, key())
    assert made["fragment"].problems == () and made["fragment"].text is not None
    outs = {target: compile_one(CompileRequest("generated/t.frag", "fragment", text=made["fragment"].text,
                                               target=target), SourceTree(tmp_path), default_backend())
            for target in ("vulkan1.2", "webgl2", "webgpu")}
    assert outs["vulkan1.2"].ok and outs["webgpu"].ok and not outs["webgl2"].ok
    assert outs["webgl2"].errors[0].message == ("webgl2: '#error' : webgl2 MaterialX EsslShaderGenerator cannot "
                                                "generate the graph because no ESSL implementation")


def test_a_document_s_only_material_needs_no_name(tmp_path: Path) -> None:
    tree = materials(tmp_path, {"s/a.mtlx": document(ROUGH.format("0.5") + SHADER)})
    generator = MaterialxGenerator(tree)
    unnamed, named = (generator.generate(None, key(DOCUMENT=ref))["fragment"] for ref in ("s/a.mtlx", "s/a.mtlx#M_a"))
    assert unnamed.problems == () and unnamed.text == named.text and unnamed.shape == named.shape


def test_only_an_mtlx_file_is_a_document(tmp_path: Path) -> None:
    tree = materials(tmp_path, {"s/a.xml": document(ROUGH.format("0.5") + SHADER)})
    made = MaterialxGenerator(tree).generate(None, key(DOCUMENT="s/a.xml#M_a"))
    (problem,) = made["fragment"].problems
    assert str(problem.location) == tree.name("s/a.xml") and problem.message.startswith(
        "MaterialX document 's/a.xml' not found in the materials folder")
    assert made["vertex"] == made["fragment"] and made["fragment"].files == ()


def test_a_material_without_a_surface_shader_is_located_at_the_material(tmp_path: Path) -> None:
    tree = materials(tmp_path, {"s/n.mtlx": document('  <surfacematerial name="M_n" type="material" />\n')})
    made = MaterialxGenerator(tree).generate(None, key(DOCUMENT="s/n.mtlx#M_n"))
    assert [str(p) for p in made["fragment"].problems] == [
        f"{tree.name('s/n.mtlx')}:3:3: error: the material has no surface shader"]
    assert made["fragment"].text is None and made["fragment"].files == ("s/n.mtlx",)


def test_an_xinclude_resolves_from_the_includer_s_folder_before_the_materials_folder(tmp_path: Path) -> None:
    top = document(SHADER, '  <xi:include href="parts/rough.mtlx" />\n')
    tree = materials(tmp_path, {"s/a.mtlx": top, "parts/rough.mtlx": document(ROUGH.format("0.5"))})
    generator = MaterialxGenerator(tree)
    from_root = generator.generate(None, key(DOCUMENT="s/a.mtlx#M_a"))["fragment"]
    assert from_root.problems == () and from_root.files == ("s/a.mtlx", "parts/rough.mtlx")
    materials(tmp_path, {"s/parts/rough.mtlx": document(ROUGH.format("0.5"))})
    nearer = generator.generate(None, key(DOCUMENT="s/a.mtlx#M_a"))["fragment"]
    assert nearer.files == ("s/a.mtlx", "s/parts/rough.mtlx")


def test_a_document_may_include_at_most_the_limit_of_documents(tmp_path: Path) -> None:
    parts = {f"p/{n}.mtlx": document("") for n in range(MAX_XINCLUDES + 1)}

    def top(count: int) -> str:
        return document(ROUGH.format("0.5") + SHADER, "".join(f'  <xi:include href="../p/{n}.mtlx" />\n'
                                                             for n in range(count)))
    tree = materials(tmp_path, parts | {"s/ok.mtlx": top(MAX_XINCLUDES), "s/many.mtlx": top(MAX_XINCLUDES + 1)})
    generator = MaterialxGenerator(tree)
    ok = generator.generate(None, key(DOCUMENT="s/ok.mtlx#M_a"))["fragment"]
    assert ok.problems == () and len(ok.files) == MAX_XINCLUDES + 1
    (problem,) = generator.generate(None, key(DOCUMENT="s/many.mtlx#M_a"))["fragment"].problems
    assert str(problem.location) == f"{tree.name('s/many.mtlx')}:{3 + MAX_XINCLUDES}:3"
    assert problem.message == f"more than {MAX_XINCLUDES} documents XIncluded"
