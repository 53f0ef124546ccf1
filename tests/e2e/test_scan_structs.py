"""The msgspec structs the scanner decodes into against the pydantic models they mirror.

The structs are the fast path; the models are the reference that locates errors.  They
must declare the same fields with the same defaults, accept and reject the same files,
and give equal values for every field.
"""

from __future__ import annotations

import struct
from pathlib import Path

import msgspec
import pytest
from pydantic import BaseModel
from typing_extensions import is_typeddict

from pipeline.errors import GltfError
from pipeline.scan.gltf import bufferdoc as B
from pipeline.scan.gltf import models as M
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.container import split_container
from pipeline.scan.gltf.decode import decode_buffers, decode_document

from robust_helpers import CASES  # noqa: E402

MODELS = {name: cls for module in (M, B) for name, cls in vars(module).items()
          if isinstance(cls, type) and cls.__module__ == module.__name__ and issubclass(cls, BaseModel)
          and cls not in (M.Model, M.OpenExtensions)}
TYPED_DICTS = {name: cls for module in (M, B) for name, cls in vars(module).items()
               if isinstance(cls, type) and cls.__module__ == module.__name__ and is_typeddict(cls)}
NAMES_KEPT = (M.MaterialExtensions, M.PrimitiveExtensions)


def test_every_model_has_a_struct_with_the_same_fields_and_defaults() -> None:
    assert MODELS and TYPED_DICTS
    for name, model in MODELS.items():
        mirror = getattr(S, name, None)
        assert mirror is not None, f"structs.py has no {name}"
        fields = [f for f in mirror.__struct_fields__ if f != "others"]
        assert fields == list(model.model_fields), name
        defaults = {f.name: f.default_factory() if f.default_factory is not msgspec.NODEFAULT else f.default
                    for f in msgspec.structs.fields(mirror) if f.required is False}
        for field, info in model.model_fields.items():
            if info.is_required():
                assert field not in defaults, f"{name}.{field} is required in the model"
            else:
                default = info.default_factory() if info.default_factory else info.default
                assert defaults.get(field, msgspec.NODEFAULT) == default, f"{name}.{field} default"


def test_every_typed_dict_has_the_same_keys() -> None:
    for name, td in TYPED_DICTS.items():
        mirror = getattr(S, name)
        assert mirror.__required_keys__ == td.__required_keys__, name
        assert mirror.__optional_keys__ == td.__optional_keys__, name


def _json_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:4] == b"glTF":
        return data[20:20 + struct.unpack_from("<I", data, 12)[0]]
    return data


def _same(model_value, struct_value, where: str) -> None:
    if isinstance(model_value, M.OpenExtensions):
        if isinstance(model_value, NAMES_KEPT):  # elsewhere the names of unknown extensions are not read
            assert model_value.names() == struct_value.names(), where
        for field in type(model_value).model_fields:
            _same(getattr(model_value, field), getattr(struct_value, field), f"{where}/{field}")
    elif isinstance(model_value, BaseModel):
        assert type(struct_value).__name__ == type(model_value).__name__, where
        for field in type(model_value).model_fields:
            _same(getattr(model_value, field), getattr(struct_value, field), f"{where}/{field}")
    elif isinstance(model_value, dict):
        assert isinstance(struct_value, dict) and model_value.keys() == struct_value.keys(), where
        for key in model_value:
            _same(model_value[key], struct_value[key], f"{where}/{key}")
    elif isinstance(model_value, (list, tuple)):
        assert type(model_value) is type(struct_value) and len(model_value) == len(struct_value), where
        for i, (a, b) in enumerate(zip(model_value, struct_value)):
            _same(a, b, f"{where}/{i}")
    else:
        assert type(model_value) is type(struct_value) and model_value == struct_value, where


def test_corpus_decodes_to_the_same_values(corpus: Path) -> None:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gltf", ".glb"))
    assert len(files) > 100
    compared = 0
    for path in files:
        data = _json_bytes(path)
        try:
            reference = M.Document.model_validate_json(data)
        except Exception:  # noqa: BLE001 - the corpus has invalid files: both must reject
            assert decode_document(data) is None, path
            continue
        decoded = decode_document(data)
        assert decoded is not None, path
        _same(reference, decoded, str(path))
        _same(B.BufferDocument.model_validate_json(data), decode_buffers(data), f"{path} buffers")
        compared += 1
    assert compared > 100


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_what_the_models_reject_the_structs_reject(case, tmp_path: Path) -> None:
    case.write(tmp_path / case.filename)
    target = tmp_path / case.filename
    if not target.is_file() or target.suffix not in (".gltf", ".glb"):
        pytest.skip("not a single glTF file")
    try:
        data = split_container(target.read_bytes(), case.filename).json
    except GltfError:
        pytest.skip("the container is refused before the JSON is read")
    try:
        M.Document.model_validate_json(data)
    except Exception:  # noqa: BLE001
        assert decode_document(data) is None
        return
    decoded = decode_document(data)
    if decoded is not None:
        _same(M.Document.model_validate_json(data), decoded, case.name)
