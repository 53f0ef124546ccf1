"""The part of a glTF document that locates binary data: accessors, bufferViews, buffers.

Most facts need none of it, so it is parsed (a second, independent pass over the
same JSON bytes) only when an optional buffer fact or a grid-chunked level asks
for it.  Same validation rules as :mod:`pipeline.scan.gltf.models`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, with_config
from typing_extensions import NotRequired, TypedDict

from pipeline.scan.gltf.models import AccessorType, ComponentType, Count, NonNegative

_TD = ConfigDict(strict=True, allow_inf_nan=False)


@with_config(_TD)
class SparseIndices(TypedDict):
    bufferView: NonNegative
    byteOffset: NotRequired[NonNegative]
    componentType: Literal[5121, 5123, 5125]


@with_config(_TD)
class SparseValues(TypedDict):
    bufferView: NonNegative
    byteOffset: NotRequired[NonNegative]


@with_config(_TD)
class Sparse(TypedDict):
    count: Count
    indices: SparseIndices
    values: SparseValues


@with_config(_TD)
class DataAccessor(TypedDict):
    bufferView: NotRequired[NonNegative]
    byteOffset: NotRequired[NonNegative]
    componentType: ComponentType
    normalized: NotRequired[bool]
    count: Count
    type: AccessorType
    max: NotRequired[Annotated[list[float], Field(min_length=1, max_length=16)]]
    min: NotRequired[Annotated[list[float], Field(min_length=1, max_length=16)]]
    sparse: NotRequired[Sparse]


@with_config(_TD)
class BufferView(TypedDict):
    buffer: NonNegative
    byteOffset: NotRequired[NonNegative]
    byteLength: Count
    byteStride: NotRequired[Annotated[int, Field(ge=4, le=252)]]


@with_config(_TD)
class Buffer(TypedDict):
    uri: NotRequired[str]
    byteLength: Count


class BufferDocument(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, allow_inf_nan=False)

    accessors: list[DataAccessor] = Field(default_factory=list)
    bufferViews: list[BufferView] = Field(default_factory=list)
    buffers: list[Buffer] = Field(default_factory=list)
