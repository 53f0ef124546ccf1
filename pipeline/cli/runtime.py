"""``pipeline runtime check`` and ``pipeline runtime render``: cooked outputs on a real Vulkan driver (and, for
``check``, the GLSL ES and WebGPU targets on their own clients)."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import EXIT_OK, EXIT_USER, echo_json, guarded, output_options, rules_option
from pipeline.progress import for_stream


@click.group("runtime")
def command() -> None:
    """Load cooked outputs on a Vulkan driver (Mesa lavapipe without a GPU), and each other target by its client.

    Needs the Vulkan bindings, wgpu and moderngl (pip install '.[runtime]') and the Debian
    packages libvulkan1, mesa-vulkan-drivers and vulkan-validationlayers; the GLSL ES client
    also libegl1, libegl-mesa0 and libgl1-mesa-dri.  No Metal client runs here.
    """


@command.command("check")
@output_options
@click.argument("out", type=click.Path(exists=True, file_okay=False))
@click.option("--chunk", "-c", metavar="C", help="Only this chunk (e.g. forest/c03).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@guarded
def check_command(out, chunk, as_json, quiet):
    """Create every shader module and pipeline state of the outputs in OUT.

    The Khronos validation layer is on; every message it gives is a failure.  Prints
    how many pipeline states there are and how many were created, with each validation
    message and failure naming its chunk, pipeline state and key.  The other targets are
    loaded by their own client: webgl2/es3.0 programs linked by Mesa's GL driver through
    EGL, webgpu modules and render pipelines made through wgpu; metal has no client here.
    Exit code 1 on any failure.
    """
    result = api.runtime_check(out, chunk=chunk, progress=for_stream(quiet=quiet or as_json))
    if as_json:
        echo_json(result.to_json())
    else:
        for f in result.validation_errors + result.failed:
            where = " ".join(x for x in (f.chunk, f.key and f"(key {f.key})") if x)
            click.echo(f"{where or out}: error: {f.message}", err=True)
        for t in result.targets:
            for f in t.failed:
                click.echo(f"{f.chunk} (key {f.key}): error: {f.message}", err=True)
        click.echo(f"{result.created} of {result.pipelines} pipeline states created on {result.device} "
                   f"({result.modules} shader modules, {len(result.chunks)} chunks); "
                   f"{len(result.validation_errors)} validation messages, {len(result.failed)} failures")
        for t in result.targets:
            click.echo(f"{t.target}: {t.created} of {t.programs} programs made by {t.client}; {len(t.failed)} failures"
                       if t.client else f"{t.target}: {t.programs} programs not loaded: {t.note}")
    return EXIT_OK if result.ok else EXIT_USER


def axis_values(given: tuple[str, ...], rulesets) -> dict | None:
    """``NAME=VALUE`` options as typed runtime axis values (bool 0/1, int, enum), checked against the rule sets."""
    from pipeline.rules.axes import axes_of

    declared: dict[str, tuple] = {}
    for rs in rulesets:
        for name in axes_of(rs):
            declared.setdefault(name, rs.compiled.domains[name].values)
    out = {}
    for item in given:
        name, _, raw = item.partition("=")
        if name not in declared:
            raise click.BadParameter(f"'{name}' is not a runtime axis (runtime axes: "
                                     f"{', '.join(sorted(declared)) or 'none'})", param_hint="--axis")
        match = [v for v in declared[name] if str(v).lower() == raw.lower()
                 or (isinstance(v, bool) and raw in ("01"[v], str(v).lower()))]
        if not match:
            shown = ", ".join(("1" if v else "0") if isinstance(v, bool) else str(v) for v in declared[name])
            raise click.BadParameter(f"'{raw}' is not a value of {name} (values: {shown})", param_hint="--axis")
        out[name] = match[0]
    return out or None


@command.command("render")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.argument("file")
@click.option("-o", "--output", "png", required=True, type=click.Path(dir_okay=False), help="PNG file to write.")
@click.option("--out", "build", default="build", show_default=True, type=click.Path(file_okay=False),
              help="The cooked outputs folder.")
@click.option("--size", default="256x256", show_default=True, metavar="WxH", help="Image size in pixels.")
@click.option("--miss-log", type=click.Path(dir_okay=False), help="Append misses (fallback draws) to this JSON lines file.")
@click.option("--axis", "axes", multiple=True, metavar="NAME=VALUE",
              help="A runtime axis value to draw with (repeatable; e.g. QUALITY=LOW, SHADOWS=1); "
                   "an axis not given keeps each pass's first combination.")
@rules_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@guarded
def render_command(world, file, png, build, size, miss_log, axes, rules, as_json):
    """Render FILE (a glTF file of WORLD) offscreen with its cooked pipelines into a PNG.

    Each draw uses the pipeline state its chunk manifest names for the forward pass;
    a draw whose key is missing is drawn with the pass's fallback and logged as a miss.
    Fixed camera framing the file's bounds, one directional light.
    """
    from pipeline.runtime.render import write_png

    width, _, height = size.lower().partition("x")
    if not (width.isdigit() and height.isdigit()) or not (0 < int(width) <= 8192 and 0 < int(height) <= 8192):
        raise click.BadParameter(f"expected WxH, got {size!r}", param_hint="--size")
    w = api.open_world(world, rules=rules)
    result = api.runtime_render(w, file, out=build, size=(int(width), int(height)), miss_log=miss_log,
                                axes=axis_values(axes, w.rulesets))
    write_png(png, result.image)
    if as_json:
        echo_json(result.to_json() | {"png": png})
    else:
        for line in result.not_drawn:
            click.echo(f"{line}: warning: not drawn", err=True)
        for message in result.validation_messages:
            click.echo(f"{file}: error: validation: {message}", err=True)
        click.echo(f"{png}: {result.drawn} draws ({result.fallbacks} through a fallback), "
                   f"{int(result.mask.sum())} pixels covered")
    return EXIT_USER if result.validation_messages else EXIT_OK
