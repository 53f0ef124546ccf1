"""pipeline.checked: settings data -> frozen structs, with every problem located."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import msgspec
import pytest
from msgspec import Meta

from pipeline.checked import Before, Checked, Invalid, Problem, convert, field_docs, suggest

Text = Annotated[str, Before(lambda v: repr(v) if isinstance(v, (bool, int)) else v), Meta(description="text")]


class Leaf(Checked, kw_only=True):
    name: Annotated[str, Meta(min_length=1, description="a name")]
    count: Annotated[int, Meta(ge=0, le=10, description="how many")] = 0
    mode: Annotated[Literal["a", "b", "c"], Meta(description="the mode")] = "a"
    when: Annotated[Text | None, Meta(description="an optional text")] = None
    alias: Annotated[str, Meta(pattern=r"^[a-z]+$", description="written as 'as'")] = msgspec.field(
        default="x", name="as")

    @classmethod
    def shape(cls, data):
        return {"name": data} if isinstance(data, str) else data

    def __post_init__(self) -> None:
        if self.mode == "c" and self.count == 0:
            raise ValueError("mode c needs a count")


class Root(Checked, kw_only=True):
    leaves: Annotated[dict[Annotated[str, Meta(pattern=r"^[A-Z]+$")], Leaf], Meta(min_length=1)]
    chain: tuple[Leaf, ...] = ()
    folder: Path | None = None
    texts: dict[str, Text] = {}
    _private: int = 0


def problems(data) -> list[Problem]:
    with pytest.raises(Invalid) as info:
        convert(data, Root)
    return info.value.problems


def test_valid_data_becomes_the_structs_built_directly() -> None:
    data = {"leaves": {"A": "first", "B": {"name": "b", "count": 3, "mode": "c", "when": True, "as": "y"}},
            "chain": ["one"], "folder": "sub/dir", "texts": {"t": 1}}
    root = convert(data, Root)
    assert root == Root(leaves={"A": Leaf(name="first"), "B": Leaf(name="b", count=3, mode="c", when="True",
                                                                      alias="y")},
                        chain=(Leaf(name="one"),), folder=Path("sub/dir"), texts={"t": "1"})
    assert isinstance(root.chain, tuple) and root.folder == Path("sub/dir")
    with pytest.raises(AttributeError):
        root.chain = ()  # frozen


def test_every_problem_is_found_with_its_path() -> None:
    found = problems({"leaves": {"A": {"name": "", "count": 11}, "b": "x", "C": {"mode": "d"}},
                      "chain": [{"name": "ok", "count": "2"}], "zzz": 1, "text": {}})
    assert found == [
        Problem(("zzz",), "unknown", "unknown key"),
        Problem(("text",), "unknown", "unknown key (did you mean 'texts'?)", "texts"),
        Problem(("leaves", "A", "name"), "invalid", "expected str of length >= 1, got ''"),
        Problem(("leaves", "A", "count"), "invalid", "expected int <= 10, got 11"),
        Problem(("leaves", "b"), "invalid", "expected str matching regex '^[A-Z]+$', got 'b'"),
        Problem(("leaves", "C", "name"), "missing", "required key missing"),  # fields in declared order
        Problem(("leaves", "C", "mode"), "invalid", "expected 'a', 'b' or 'c', got 'd'"),
        Problem(("chain", 0, "count"), "invalid", "expected int, got '2'"),
    ]


def test_a_struct_s_own_check_is_a_problem_at_the_struct() -> None:
    assert problems({"leaves": {"A": {"name": "n", "mode": "c"}}}) == [
        Problem(("leaves", "A"), "invalid", "mode c needs a count")]


def test_lengths_types_and_program_fields() -> None:
    assert problems({"leaves": {}}) == [Problem(("leaves",), "invalid", "needs at least 1 entry")]
    assert problems({"leaves": []}) == [Problem(("leaves",), "invalid", "expected object, got a list")]
    assert problems({"leaves": {"A": 3}}) == [Problem(("leaves", "A"), "invalid", "expected a mapping, got 3")]
    assert problems({"leaves": {"A": "a"}, "folder": 3}) == [
        Problem(("folder",), "invalid", "expected a path (a string), got 3")]
    assert problems({"leaves": {"A": "a"}, "_private": 1}) == [Problem(("_private",), "unknown", "unknown key")]


def test_invalid_says_every_problem_and_docs_name_the_written_keys() -> None:
    with pytest.raises(Invalid, match=r"^leaves\.A\.count: expected int >= 0, got -1; chain\.0: expected a "):
        convert({"leaves": {"A": {"name": "n", "count": -1}}, "chain": [None]}, Root)
    assert field_docs(Leaf) == {"name": "a name", "count": "how many", "mode": "the mode",
                                "when": "an optional text", "as": "written as 'as'"}
    assert field_docs(Root)["chain"] == "" and "_private" not in field_docs(Root)


def test_suggest_names_the_closest_candidate() -> None:
    assert suggest("NORMAL_MPA", ["NORMAL_MAP", "UV_SETS"]) == " (did you mean 'NORMAL_MAP'?)"
    assert suggest("zzz", ["NORMAL_MAP"]) == ""
