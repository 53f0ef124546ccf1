"""pipeline.structs: one replace for msgspec structs and dataclasses."""

import dataclasses

import msgspec
import pytest

from pipeline.structs import replace


class Point(msgspec.Struct, frozen=True):
    x: int
    y: int = 0

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("negative x")


@dataclasses.dataclass(frozen=True)
class Pair:
    a: int
    b: int = 0

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative a")


def test_replace_copies_a_struct_with_one_field_changed():
    p = Point(1, 2)
    q = replace(p, y=5)
    assert q == Point(1, 5) and type(q) is Point and p == Point(1, 2)


def test_replace_copies_a_dataclass_with_one_field_changed():
    assert replace(Pair(1, 2), b=7) == Pair(1, 7)


@pytest.mark.parametrize("value", [Point(1), Pair(1)], ids=["struct", "dataclass"])
def test_replace_runs_the_checks_again(value):
    with pytest.raises(ValueError, match="negative"):
        replace(value, **{"x" if isinstance(value, Point) else "a": -1})


def test_replace_refuses_an_unknown_field():
    with pytest.raises(TypeError):
        replace(Point(1), z=3)
    with pytest.raises(TypeError):
        replace(Pair(1), z=3)
