"""``replace`` for the package's value types, msgspec structs and dataclasses alike.

Most value types are :class:`msgspec.Struct` subclasses (made in C: a class costs microseconds
to define and an instance a fraction of a frozen dataclass's); the few that stay dataclasses
set derived fields in ``__post_init__`` or pickle a state of their own.  Callers copy
either kind with one changed field through :func:`replace`, without knowing which it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes``; its ``__post_init__`` checks run again either way."""
    if isinstance(obj, msgspec.Struct):
        return msgspec.structs.replace(obj, **changes)
    return dataclasses.replace(obj, **changes)
