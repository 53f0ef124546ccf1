"""What a cook does with the build farm: nothing without a scheduler (:class:`NoFarm`), else one connection,
made when first used and closed when the cook ends, for its chunk work and its compiles
(:class:`pipeline.compile.farm_chunks.FarmCook`).  No Dask import until a farm cook needs it."""

from __future__ import annotations


class NoFarm:
    """A cook on this machine alone: no connection, no chunk work elsewhere (the farm's stand-in in
    :func:`pipeline.api.cook`)."""

    connection = chunks = None

    def __enter__(self) -> "NoFarm":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def report(self, result):
        return result


def farm_cook(scheduler: str | None):
    """What a cook does with the farm ``scheduler`` names (None: nothing)."""
    if not scheduler:
        return NoFarm()
    from pipeline.compile.farm_chunks import FarmCook  # its connection imports Dask: only a farm cook pays for it

    return FarmCook(scheduler)
