"""Where a farm cook compiles: the ``--scheduler`` value, checked before any work.

``local:N`` is a Dask ``LocalCluster`` of N worker processes on this machine, at
most :data:`LOCAL_PER_CPU` per usable CPU (:func:`pipeline.cpus.usable_cpus`): a
larger N starts that many and says so.  Anything else is the address of a running
Dask scheduler, ``PROTOCOL://HOST[:PORT]`` with a protocol Dask speaks; a value that
is neither (``farm:8786``, ``tcp://[::1``, ``tcp://host:99999``) is a user error
naming the value.  This module imports no Dask, so the check costs nothing.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from pipeline.cpus import usable_cpus
from pipeline.errors import PipelineError

LOCAL_PREFIX = "local:"
LOCAL_PER_CPU = 2  # local worker processes per usable CPU, at most
PROTOCOLS = ("tcp", "tls", "inproc", "ws", "wss", "ucx")


class FarmError(PipelineError):
    """The farm cannot run the jobs: a bad or unreachable scheduler, no worker with the jobs' compiler."""

    @classmethod
    def about(cls, scheduler: str, message: str) -> "FarmError":
        return cls.at(scheduler, message)


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``('local', N)`` for ``local:N``, else ``('remote', address)``; a bad value is a FarmError."""
    if text.startswith(LOCAL_PREFIX):
        count = text[len(LOCAL_PREFIX):]
        if not count.isdigit() or int(count) < 1:
            raise FarmError.about(text, "expected local:N with N >= 1 worker processes")
        return "local", int(count)
    if "://" not in text:
        raise FarmError.about(text, "expected a Dask scheduler address (tcp://HOST:8786) or local:N")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise FarmError.about(text, f"not a Dask scheduler address ({exc}); expected tcp://HOST:8786") from None
    if parts.scheme not in PROTOCOLS:
        raise FarmError.about(text, f"unknown protocol {parts.scheme!r} (Dask speaks {', '.join(PROTOCOLS)})")
    if parts.scheme != "inproc" and (not parts.hostname or parts.path.strip("/") or parts.query or parts.fragment):
        raise FarmError.about(text, "not a Dask scheduler address; expected tcp://HOST:8786")
    if port == 0:
        raise FarmError.about(text, "port 0 is no scheduler's port; expected tcp://HOST:8786")
    return "remote", text


def check_audit(percent: float) -> float:
    """``audit`` as given: the share of a farm's results recompiled here, in percent (0 to 100)."""
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 <= percent <= 100:
        raise PipelineError.of_argument("audit", f"expected a percentage from 0 to 100, got {percent!r}")
    return float(percent)


def local_workers(requested: int) -> tuple[int, str | None]:
    """How many local worker processes to start for ``local:requested``, and a warning when fewer."""
    cpus = usable_cpus()
    limit = cpus * LOCAL_PER_CPU
    if requested <= limit:
        return requested, None
    return limit, (f"{LOCAL_PREFIX}{requested}: {requested} worker processes for {cpus} usable CPUs; "
                   f"starting {limit} ({LOCAL_PER_CPU} per CPU)")


def chosen_scheduler(explicit: str | None, configured: str | None) -> str | None:
    """The scheduler a cook uses: argument > ``$PIPELINE_SCHEDULER`` > pipeline.toml (``configured``);
    ``none`` (or nothing): this machine.  A malformed address is a user error before any work."""
    chosen = explicit or os.environ.get("PIPELINE_SCHEDULER") or configured
    if chosen and chosen != "none":
        parse_scheduler(chosen)
        return chosen
    return None
