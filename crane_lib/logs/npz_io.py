"""Deterministic `.npz` files: the same arrays always give the same bytes.

`numpy.savez` stamps every zip entry with the current wall-clock time, so two writes of the
same arrays differ in a few header bytes. Here the zip is written entry by entry with a fixed
date (1980-01-01, the earliest a zip header can hold), fixed permissions and a fixed
compression level (or none), in the order the caller gives. The result is an ordinary `.npz` that
`numpy.load` reads; no array is ever pickled.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Mapping

import numpy as np

from crane_lib.errors import InputError, atomic_write

FIXED_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_COMPRESSLEVEL = 6


def npz_bytes(arrays: Mapping[str, np.ndarray], compress: bool = True) -> bytes:
    """The bytes of an `.npz` holding `arrays` under their keys, identical for identical input.

    compress=False stores the arrays as they are: for full-precision floating-point data
    deflate saves under a tenth of the size at about thirty times the time.
    """
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    level = ZIP_COMPRESSLEVEL if compress else None
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, mode="w", compression=method, compresslevel=level) as archive:
        for name, value in arrays.items():
            array = np.asarray(value)
            if array.dtype == object:
                raise TypeError(f"array {name!r} has dtype object; it would need pickling")
            entry = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_ZIP_DATE)
            entry.compress_type = method
            entry.external_attr = 0o644 << 16  # regular file, rw-r--r--, whatever the umask
            entry.create_system = 3  # "Unix", independent of the writing platform
            payload = io.BytesIO()
            # not np.ascontiguousarray: it turns a 0-d array (a metadata string) into a 1-d one
            np.lib.format.write_array(payload, array if array.flags.c_contiguous else array.copy(order="C"), allow_pickle=False)
            archive.writestr(entry, payload.getvalue(), compress_type=method, compresslevel=level)
    return buffer.getvalue()


def write_npz(path, arrays: Mapping[str, np.ndarray], compress: bool = True) -> Path:
    """Write `arrays` atomically (temporary file, then rename) as a deterministic `.npz`."""
    path = Path(path)
    data = npz_bytes(arrays, compress=compress)  # built in memory first: a failure leaves nothing behind
    with atomic_write(path, mode="wb") as handle:
        handle.write(data)
    return path


def read_npz(path) -> dict[str, np.ndarray]:
    """All arrays of an `.npz`, loaded eagerly; a file that is not a readable `.npz` is an InputError."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        raise InputError(str(path), f"not a readable .npz file ({error})", "a zip of .npy arrays written by numpy") from error
