"""The book's reference arithmetic: the same floating-point kernels on every x86-64 machine.

NumPy and OpenBLAS choose their kernels for the host CPU when they load. On a CPU with AVX-512,
numpy's exp, log and tan run other SIMD code, and OpenBLAS's SkylakeX kernels sum in another
order, than on an AVX2 CPU: results differ in the last digit. The twin's quantized closed loop
with stick-slip turns such a difference into another realization (another recording, other
numbers in every table), so a reader's `make book` would not reproduce the book they read. The
book therefore pins both to the x86-64-v3 level (AVX2 and FMA, every x86-64 CPU made since about
2015):

    OPENBLAS_CORETYPE=Haswell                     OpenBLAS's Haswell kernels (numpy's and scipy's)
    NPY_DISABLE_CPU_FEATURES=X86_V4,AVX512_ICL,…  numpy's SIMD dispatch capped at X86_V3
    OPENBLAS_NUM_THREADS=1                        one BLAS thread

Clarabel's KKT solver is named too (CLARABEL_OPTIONS, which every call passes): its default
"auto" picks faer, which dispatches on the CPU's vector width and splits its work among the
cores; qdldl, Clarabel's own factorization, does neither.

The last one because OpenBLAS splits a long dot product or a least-squares problem's reductions
among its threads, one per core up to the core count: a 2-core and a 16-core machine would sum
in other orders (numpy's lstsq of a 200,000 x 39 problem differs in the last digits between 1
and 2 threads here). The book runs its work in parallel processes anyway (the sweeps, the pages).

Both are read when the libraries load, so they must be set before numpy is imported: the
Makefile exports them for every command (`python crane_lib/arithmetic.py` prints them), and
importing crane_lib sets them when it comes first (the `crane-id` command). A value the user set
is kept. numba needs no pin: its kernels are compiled without fast-math, so LLVM keeps the IEEE
order of every operation whatever the vector width (a twin recording is byte-identical compiled
for this host, for `haswell` and for `generic`; benchmarks/bench_arithmetic.py shows it and the
speed cost of the pin). On a CPU without AVX2 and FMA, or not x86-64, nothing is pinned and the
last digits may differ from the book's; `signature()` says which arithmetic a process runs, and
every record's cache key holds it.
"""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache
from pathlib import Path

OPENBLAS_CORE = "Haswell"
BLAS_THREADS = 1
# Clarabel's sparse LDL: its own qdldl, not faer (SIMD width and thread count change its sums)
CLARABEL_OPTIONS = {"direct_solve_method": "qdldl"}
# numpy >= 2.3 groups its x86 dispatch targets by level (X86_V4 and the AVX512_* beyond it);
# older releases name the AVX-512 targets one by one; a name a release does not know is ignored
NUMPY_FEATURES_OFF = (
    "X86_V4",
    "AVX512_ICL",
    "AVX512_SPR",
    "AVX512F",
    "AVX512CD",
    "AVX512_KNL",
    "AVX512_KNM",
    "AVX512_SKX",
    "AVX512_CLX",
    "AVX512_CNL",
)
# what the x86-64-v3 kernels need from the CPU (flags as /proc/cpuinfo names them)
REQUIRED_FLAGS = ("avx2", "fma")
CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo_text: str | None = None) -> set[str]:
    """The CPU's feature flags as /proc/cpuinfo lists them (empty where there is no such file)."""
    if cpuinfo_text is None:
        try:
            cpuinfo_text = CPUINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
    for line in cpuinfo_text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return set(value.split())
    return set()


def reference_environment(cpuinfo_text: str | None = None, machine: str | None = None) -> dict:
    """The environment that selects the reference kernels on this CPU ({} where it cannot)."""
    machine = platform.machine() if machine is None else machine
    if machine.lower() not in ("x86_64", "amd64"):
        return {}
    if not set(REQUIRED_FLAGS) <= cpu_flags(cpuinfo_text):
        return {}
    return {
        "OPENBLAS_CORETYPE": OPENBLAS_CORE,
        "NPY_DISABLE_CPU_FEATURES": ",".join(NUMPY_FEATURES_OFF),
        "OPENBLAS_NUM_THREADS": str(BLAS_THREADS),
    }


def pin(environ=None) -> bool:
    """Set the reference environment where unset; False if numpy had already loaded (too late)."""
    environ = os.environ if environ is None else environ
    for name, value in reference_environment().items():
        environ.setdefault(name, value)
    return "numpy" not in sys.modules


def _openblas_settings() -> list[tuple[str, int]]:
    """(kernel set, threads) of each OpenBLAS in this process (numpy's and scipy's copies)."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    libraries = sorted(
        {
            line.split()[-1]
            for line in maps.splitlines()
            if "openblas" in line.lower() and line.rstrip().endswith((".so", ".so.0"))
        }
    )
    settings = []
    for library in libraries:
        handle = ctypes.CDLL(library)
        for prefix, suffix in (
            ("scipy_openblas", "64_"),
            ("scipy_openblas", ""),
            ("openblas", "64_"),
            ("openblas", ""),
        ):
            corename = getattr(handle, f"{prefix}_get_corename{suffix}", None)
            threads = getattr(handle, f"{prefix}_get_num_threads{suffix}", None)
            if corename is not None and threads is not None:
                corename.restype, threads.restype = ctypes.c_char_p, ctypes.c_int
                settings.append((corename().decode().strip(), int(threads())))
                break
    return settings


@lru_cache(maxsize=1)
def signature() -> str:
    """Which arithmetic this process runs, in words: the reference kernels or the host's."""
    import numpy as np

    features = np._core._multiarray_umath.__cpu_features__ if hasattr(np, "_core") else {}
    beyond_v3 = sorted(
        name for name in ("X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR") if features.get(name)
    )
    blas = sorted(set(_openblas_settings()))
    cores = sorted({core for core, _ in blas})
    threads = sorted({n for _, n in blas})
    pinned = (
        bool(blas)
        and not beyond_v3
        and all(core.lower() == OPENBLAS_CORE.lower() and n == BLAS_THREADS for core, n in blas)
    )
    kind = "reference x86-64-v3" if pinned else "host"
    return (
        f"{kind} (OpenBLAS {'/'.join(cores) or 'unknown'}, "
        f"{'/'.join(map(str, threads)) or '?'} thread(s); numpy beyond X86_V3: "
        f"{', '.join(beyond_v3) or 'none'}; numpy {np.__version__})"
    )


def main() -> int:
    """Print the reference environment as NAME=value lines (what the Makefile exports)."""
    for name, value in reference_environment().items():
        print(f"{name}={os.environ.get(name, value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
