"""Which stage jobs of a program carry the other stage, and how a job key names it.

The vertex and fragment stage of an ``auto_map`` key on a SPIR-V target are linked as
a program (:mod:`pipeline.compilers.interfaces`: varyings by name, outputs the other
stage does not read removed), so each stage's blob depends on both: each request
carries the other (``CompileRequest.link``), its closure holds the other stage's files
too, and its job key names the other stage (by source and defines, or by preprocessed
text).  Two keys whose two stages preprocess to the same texts share both jobs; a
changed stage gives both jobs of its program new keys.
"""

from __future__ import annotations

from pipeline.compilers import CompileRequest
from pipeline.compilers.request import links_program
from pipeline.digest import bytes_hash
from pipeline.structs import replace


def linked_stages(requests: dict[str, CompileRequest]) -> dict[str, CompileRequest]:
    """The vertex and fragment requests each carrying the other; {} when the program links nothing."""
    vertex, fragment = requests.get("vertex"), requests.get("fragment")
    if vertex is None or fragment is None or not links_program(fragment) or fragment.problems or vertex.problems:
        return {}
    return {"vertex": replace(vertex, link=(fragment,)), "fragment": replace(fragment, link=(vertex,))}


def link_identity(request: CompileRequest) -> list[dict]:
    """The linked stages as a define-based job key names them (their files are in the closure)."""
    return [{"source": p.source, "stage": p.stage, "entry": p.entry, "language": p.language,
             "defines": [list(d) for d in p.defines], "text": p.text} for p in request.link]


def linked_text_identity(request: CompileRequest, texts: tuple[str, ...]) -> list[dict]:
    """The linked stages as an exact job key names them: by their preprocessed texts."""
    return [{"stage": p.stage, "entry": p.entry, "preprocessed": bytes_hash(t.encode())}
            for p, t in zip(request.link, texts, strict=True)]
