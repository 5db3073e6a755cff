"""Benchmark of the export: reconstruction + URDF + MJCF of the accepted model in at most
10 s on two cores.

1. In the library: `consistent.reconstruct` (exact attempt; when it is infeasible, the smallest
   change and the nearest consistent model: three convex programs) and both files, written.
2. The command end to end, `crane-id export MODEL --nearest --urdf --mjcf` in a fresh process
   (imports included).
Model: the accepted model of the main job (results/accepted/AG02_run1_40ms.csv) when it exists,
else the twin's truth with link 7 made impossible (the same three programs). Reference measured in
the same run: one dense audit (221,875 poses) of the same model, the pipeline's own yardstick.

    python -m benchmarks.bench_export            # the measurement
    python -m benchmarks.bench_export --smoke    # one repeat, a sparse audit as reference, in a
                                                 # throwaway results folder
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def model_file(folder: Path) -> tuple[Path, str]:
    """A model file to export (the accepted model, else the twin's truth) and its label."""
    from crane_lib.acceptance.accepted import accepted_paths
    from crane_lib.model.dynamics import DynamicModel
    from crane_lib.model.parameters import ParameterSet, save_parameters
    from crane_lib.twin.truth import load_truth

    accepted, _ = accepted_paths()
    if accepted.is_file():
        return accepted, "the accepted model (results/accepted)"
    beta = DynamicModel("reduced").base_from_standard(load_truth())
    values = beta.as_dict()
    values["ZZR7"] = values["XXR7"] - 1e-4
    path = folder / "impossible.csv"
    save_parameters(
        path, ParameterSet(beta.names, [values[n] for n in beta.names], [1e-3] * len(beta.names))
    )
    return path, "the twin's truth with link 7 made impossible"


def main(argv=None) -> int:
    """Time the consistent export of one model and print the result."""
    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke and (code := isolated("benchmarks.bench_export", ["--smoke"])) is not None:
        return code

    from crane_lib.acceptance.audit import audit
    from crane_lib.export import consistent, files
    from crane_lib.model.parameters import load_parameters

    repeats, audit_kind = (1, "sparse") if args.smoke else (3, "dense")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, what = model_file(folder)
        base = load_parameters(path)
        consistent.reconstruct(
            base
        )  # imports, cvxpy's first canonicalization, generated code: outside the timing
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = consistent.reconstruct(base)
            files.write_files(
                files.robot_model(result.standard), folder / "m.urdf", folder / "m.xml"
            )
            times.append(time.perf_counter() - start)
        library = min(times)  # best of the repeats
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [
                str(Path(sys.executable).parent / "crane-id"),
                "export",
                str(path),
                "--nearest",
                "--urdf",
                str(folder / "c.urdf"),
                "--mjcf",
                str(folder / "c.xml"),
            ],
            check=True,
            capture_output=True,
        )
        command = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        command_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        start = time.perf_counter()
        audit(result.reproduced.values, 1, audit_kind)
        reference = time.perf_counter() - start
    kind = "exact" if result.exact else f"nearest, {len(result.solves)} programs"
    print(
        f"export of {what} ({kind}), {os.cpu_count()} cores: library {library:.2f} s (best of "
        f"{repeats}), "
        f"crane-id export in a fresh process {command:.2f} s wall, {command_cpu:.2f} s CPU "
        "(imports included); "
        f"target 10 s: {command / 10:.2f} of it; "
        f"one {audit_kind} audit (reference) {reference:.2f} s: export = {library / reference:.2f} "
        "audits"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
