"""`fingerprint.array_digest` is the sha256 of the array's float64 little-endian bytes in C
order, whatever its layout, type or size (large arrays are hashed a block of rows at a time)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from crane_lib.fingerprint import array_digest

RNG = np.random.default_rng(7)
CASES = {
    "fortran": np.asfortranarray(RNG.normal(size=(1000, 9))),
    "strided": RNG.normal(size=(2001, 5))[::2, ::2],
    "integers": np.arange(3000, dtype=np.int32).reshape(1000, 3),
    "big endian": RNG.normal(size=(500, 4)).astype(">f8"),
    "three axes": np.asfortranarray(RNG.normal(size=(300, 4, 3))),
    "one axis": RNG.normal(size=777),
    "scalar": np.float64(2.5),
    "empty": np.zeros((0, 3)),
    "list": [[1.0, 2.0], [3.0, 4.0]],
}


@pytest.mark.parametrize("rows", [1, 7, 8192])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_digest_is_that_of_the_c_order_float_bytes(name, rows):
    value = CASES[name]
    whole = np.ascontiguousarray(value, dtype="<f8").tobytes()
    assert array_digest(value, rows=rows) == hashlib.sha256(whole).hexdigest()
