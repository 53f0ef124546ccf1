"""The interface of one SPIR-V module, read and rewritten word by word.

What :mod:`pipeline.compilers.interfaces` needs and no library here offers from Python:
the user inputs and outputs of a stage (name, variable id, locations they take, their
``Location``), a module with its varyings at other locations (the literal rewritten in
place), and a module whose unconsumed outputs are made ``Private`` variables (their pointer
types and access chains follow; their interface decorations go), so that spirv-opt's
dead-code elimination removes them and their stores.  The binary layout is the SPIR-V
specification's: a five-word header, then instructions of ``(word count << 16) | opcode``.
"""

from __future__ import annotations

import struct

OP_NAME, OP_ENTRY_POINT, OP_DECORATE, OP_MEMBER_DECORATE, OP_VARIABLE = 5, 15, 71, 72, 59
OP_TYPE_BOOL, OP_TYPE_VECTOR, OP_TYPE_MATRIX, OP_TYPE_ARRAY, OP_TYPE_STRUCT = 20, 23, 24, 28, 30
OP_TYPE_POINTER, OP_CONSTANT, OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN = 32, 43, 65, 66
DECORATION_RELAXED_PRECISION, DECORATION_BUILTIN, DECORATION_LOCATION = 0, 11, 30
INPUT, OUTPUT, PRIVATE = 1, 3, 6  # storage classes
HEADER_WORDS = 5


class Module:
    """One SPIR-V module as its header and instructions ``[opcode, operand words]``."""

    def __init__(self, spirv: bytes):
        words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
        self.header, self.code = words[:HEADER_WORDS], []
        at = HEADER_WORDS
        while at < len(words):
            count = words[at] >> 16
            if count == 0 or at + count > len(words):
                raise ValueError("malformed SPIR-V: an instruction runs past the module's end")
            self.code.append([words[at] & 0xFFFF, words[at + 1:at + count]])
            at += count
        self.names = {ops[0]: _string(ops[1:]) for op, ops in self.code if op == OP_NAME}
        self.types = {ops[0]: (op, ops[1:]) for op, ops in self.code if OP_TYPE_BOOL <= op <= OP_TYPE_POINTER}
        self.constants = {ops[1]: ops[2] for op, ops in self.code if op == OP_CONSTANT and len(ops) == 3}
        self.variables = {ops[1]: (ops[2], ops[0]) for op, ops in self.code if op == OP_VARIABLE}
        self.builtin = {ops[0] for op, ops in self.code if (op == OP_DECORATE and ops[1] == DECORATION_BUILTIN)
                        or (op == OP_MEMBER_DECORATE and ops[2] == DECORATION_BUILTIN)}
        self.location = {ops[0]: ops for op, ops in self.code if op == OP_DECORATE and ops[1] == DECORATION_LOCATION}

    def to_bytes(self) -> bytes:
        words = list(self.header)
        for op, ops in self.code:
            words += [(len(ops) + 1) << 16 | op, *ops]
        return struct.pack(f"<{len(words)}I", *words)

    def size(self, type_id: int) -> int:
        """Locations a value of the type takes (64-bit vectors of three or four take two)."""
        opcode, ops = self.types[type_id]
        if opcode == OP_TYPE_VECTOR:
            element = self.types[ops[0]][1]
            return 2 if element and element[0] == 64 and ops[1] > 2 else 1
        if opcode == OP_TYPE_MATRIX:
            return ops[1] * self.size(ops[0])
        if opcode == OP_TYPE_ARRAY:
            return self.constants.get(ops[1], 1) * self.size(ops[0])
        if opcode == OP_TYPE_STRUCT:
            return sum(self.size(member) for member in ops)
        return 1

    def varyings(self, storage: int) -> dict[str, tuple[int, int, int]]:
        """Name -> (variable id, its location, locations it takes) of the user inputs or outputs."""
        found = {}
        for var, (klass, pointer) in sorted(self.variables.items()):
            pointee = self.types[pointer][1][1]
            if klass == storage and var in self.location and var not in self.builtin and pointee not in self.builtin:
                found[self.names.get(var, f"%{var}")] = (var, self.location[var][2], self.size(pointee))
        return found

    def relocate(self, locations: dict[int, int]) -> None:
        """Give each variable id of ``locations`` its new location."""
        for var, location in locations.items():
            self.location[var][2] = location

    def privatize(self, variables: set[int]) -> None:
        """Make these output variables ``Private``: their pointer types and access chains follow, and
        their decorations other than RelaxedPrecision go (so does their place in the entry point's
        interface before SPIR-V 1.4, which lists only inputs and outputs there)."""
        if not variables:
            return
        pointers: dict[tuple[int, int], int] = {(ops[1], ops[2]): ops[0] for op, ops in self.code
                                                 if op == OP_TYPE_POINTER}
        added: dict[int, list] = {}  # index of the Output pointer type -> Private pointer types after it

        def private(pointer: int) -> int:
            pointee = self.types[pointer][1][1]
            if (PRIVATE, pointee) not in pointers:
                pointers[(PRIVATE, pointee)] = self.header[3]
                self.header[3] += 1
                at = next(i for i, (op, ops) in enumerate(self.code) if op == OP_TYPE_POINTER and ops[0] == pointer)
                added.setdefault(at, []).append([OP_TYPE_POINTER, [pointers[(PRIVATE, pointee)], PRIVATE, pointee]])
            return pointers[(PRIVATE, pointee)]

        moved = set(variables)
        for op, ops in self.code:
            if op == OP_VARIABLE and ops[1] in moved:
                ops[0], ops[2] = private(ops[0]), PRIVATE
            elif op in (OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN) and ops[2] in moved:
                ops[0] = private(ops[0])
                moved.add(ops[1])
        old_interface = self.header[1] < 0x00010400
        code = []
        for i, (op, ops) in enumerate(self.code):
            if op == OP_DECORATE and ops[0] in variables and ops[1] != DECORATION_RELAXED_PRECISION:
                continue
            if op == OP_ENTRY_POINT and old_interface:
                name_words = next(n for n, w in enumerate(ops[2:], 2) if not all(w >> s & 0xFF for s in (0, 8, 16, 24)))
                name_words += 1
                ops = ops[:name_words] + [v for v in ops[name_words:] if v not in variables]
            code.append([op, ops])
            code += added.get(i, [])
        self.code = code


def _string(words: list[int]) -> str:
    raw = struct.pack(f"<{len(words)}I", *words)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
