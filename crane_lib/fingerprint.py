"""One content-hash scheme for every cache of the project.

A cache entry is named by the sha256 of everything that decides its content: input files,
the source of the code that computes it, and settings. Parts are hashed one by one and the
digests combined, so a part's boundaries cannot shift (`digest("ab", "c") != digest("a", "bc")`).
Used by the generated model code, the twin's recordings, the preprocessed bundles and the
papermill sweeps.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _part_bytes(part) -> bytes:
    if isinstance(part, bytes):
        return part
    if isinstance(part, Path):
        raise TypeError(
            f"{part}: pass file_digest(path) for a file's content, or str(path) for its name"
        )
    return str(part).encode("utf-8")


def digest(*parts, length: int = 24) -> str:
    """Hex digest (first `length` characters) of the parts: str, bytes or other values (by repr via
    str)."""
    combined = hashlib.sha256()
    for part in parts:
        combined.update(hashlib.sha256(_part_bytes(part)).digest())
    return combined.hexdigest()[:length]


def file_digest(path) -> str:
    """sha256 of a file's bytes, read in blocks (recordings can be tens of MB)."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            sha.update(block)
    return sha.hexdigest()


def files_digest(paths) -> str:
    """Digest of several files by name and content (order-independent: sorted by path)."""
    return digest(
        *(f"{Path(p).name}\0{file_digest(p)}" for p in sorted(Path(p) for p in paths)), length=64
    )


def source_digest(*modules) -> str:
    """Digest of the source files of the given modules (or paths)."""
    return files_digest(Path(m.__file__) if hasattr(m, "__file__") else Path(m) for m in modules)


def code_digest(*modules: str) -> str:
    """Digest of the source of the given crane_lib modules and of everything they import,
    transitively: what a result computed by them depends on of the package."""
    from crane_lib import source_graph

    return files_digest(source_graph.module_file(m) for m in source_graph.closure(modules))


def package_digest() -> str:
    """Digest of every crane_lib source file: a code change invalidates a whole-pipeline cache."""
    return digest(
        *(
            f"{p.relative_to(PACKAGE_DIR)}\0{file_digest(p)}"
            for p in sorted(PACKAGE_DIR.rglob("*.py"))
        ),
        length=64,
    )


def array_digest(array, rows: int = 8192) -> str:
    """sha256 of a float array's little-endian bytes in C order (a record's samples, independent
    of container). A large array in another layout or type is converted `rows` rows at a time:
    the same bytes in the same order, without a copy of the whole array (a 100 MB raw log)."""
    import numpy as np

    values = np.asarray(array)
    sha = hashlib.sha256()
    if values.ndim < 2 or values.shape[0] <= rows:
        sha.update(np.ascontiguousarray(values, dtype="<f8"))
        return sha.hexdigest()
    for start in range(0, values.shape[0], rows):
        sha.update(np.ascontiguousarray(values[start : start + rows], dtype="<f8"))
    return sha.hexdigest()
