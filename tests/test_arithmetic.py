"""The reference arithmetic: which CPUs get it, that it takes effect, that a user's choice stays."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from crane_lib import arithmetic
from crane_lib.paths import REPO_ROOT

AVX2_CPU = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma bmi2\n"
AVX512_CPU = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq\n"
OLD_CPU = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx\n"


def test_cpus_with_avx2_and_fma_get_the_reference_kernels_and_others_their_own():
    assert arithmetic.reference_environment(AVX2_CPU, "x86_64")["OPENBLAS_CORETYPE"] == "Haswell"
    assert arithmetic.reference_environment(
        AVX512_CPU, "x86_64"
    ) == arithmetic.reference_environment(AVX2_CPU, "x86_64")
    assert (
        "X86_V4"
        in arithmetic.reference_environment(AVX512_CPU, "x86_64")["NPY_DISABLE_CPU_FEATURES"]
    )
    assert arithmetic.reference_environment(OLD_CPU, "x86_64") == {}
    assert arithmetic.reference_environment(AVX2_CPU, "aarch64") == {}
    assert arithmetic.reference_environment("", "x86_64") == {}


def test_pin_keeps_a_value_the_user_set(monkeypatch):
    monkeypatch.setattr(
        arithmetic, "reference_environment", lambda: {"OPENBLAS_CORETYPE": "Haswell"}
    )
    environ = {"OPENBLAS_CORETYPE": "Zen"}
    arithmetic.pin(environ)
    assert environ == {"OPENBLAS_CORETYPE": "Zen"}
    environ = {}
    arithmetic.pin(environ)
    assert environ == {"OPENBLAS_CORETYPE": "Haswell"}


def _fresh_python(code: str, **env) -> str:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in arithmetic.reference_environment(AVX2_CPU, "x86_64")
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


SIGNATURE = (
    "import crane_lib, numpy, scipy.linalg; from crane_lib import arithmetic; "
    "print(arithmetic.signature())"
)


@pytest.mark.skipif(
    not arithmetic.reference_environment(), reason="this CPU cannot run the reference kernels"
)
def test_importing_crane_lib_first_runs_the_reference_kernels_and_a_user_choice_shows():
    assert _fresh_python(SIGNATURE).startswith(
        "reference x86-64-v3 (OpenBLAS Haswell, 1 thread(s);"
    )
    # a kernel set or a thread count the user chose is kept, and the signature (part of every
    # record's key) tells
    assert _fresh_python(SIGNATURE, OPENBLAS_CORETYPE="Sandybridge").startswith(
        "host (OpenBLAS Sandybridge,"
    )
    assert _fresh_python(SIGNATURE, OPENBLAS_NUM_THREADS="2").startswith(
        "host (OpenBLAS Haswell, 2 thread(s)"
    )


def test_the_makefile_exports_what_the_script_prints():
    printed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "crane_lib" / "arithmetic.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert printed == [f"{k}={v}" for k, v in arithmetic.reference_environment().items()]
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(shell $(PYTHON) crane_lib/arithmetic.py)" in makefile


def test_every_clarabel_solve_names_the_deterministic_kkt_solver():
    """'auto' picks faer (SIMD width and threads change its sums): every call passes qdldl."""
    import ast

    calls = 0
    for path in sorted((REPO_ROOT / "crane_lib").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and any(
                isinstance(k.value, ast.Attribute) and k.value.attr == "CLARABEL"
                for k in node.keywords
            ):
                calls += 1
                spread = [k.value for k in node.keywords if k.arg is None]
                assert spread, (
                    f"{path.name}:{node.lineno}: a Clarabel solve without the pinned options"
                )
            if isinstance(node, ast.Attribute) and node.attr == "DefaultSolver":
                calls += 1
                assert "CLARABEL_OPTIONS" in path.read_text(encoding="utf-8"), path.name
    assert calls >= 4
    from crane_lib.identification.projection import SOLVER_OPTIONS

    assert (
        SOLVER_OPTIONS["direct_solve_method"]
        == arithmetic.CLARABEL_OPTIONS["direct_solve_method"]
        == "qdldl"
    )


def test_a_recording_and_its_bundles_are_keyed_by_the_kernels(monkeypatch, tmp_path):
    from crane_lib.logs import preprocessing
    from crane_lib.twin import dataset

    execution = dataset.executions("quick")[0]
    log = tmp_path / "log.npz"
    log.write_bytes(b"bytes")
    before = dataset.cache_key(execution), preprocessing.cache_key(log)
    monkeypatch.setattr(
        arithmetic, "signature", lambda: "host (OpenBLAS SkylakeX, 2 thread(s); ...)"
    )
    after = dataset.cache_key(execution), preprocessing.cache_key(log)
    assert before[0] != after[0] and before[1] != after[1]
