"""The exported files of the accepted model: what the main job writes and the book offers for
download.

    results/export/crane_x7_AG02_run1_40ms.urdf   URDF (the manufacturer's frames and names)
    results/export/crane_x7_AG02_run1_40ms.xml    MJCF
    results/export/crane_x7_AG02_run1_40ms.csv    the 94 standard parameters
    results/export/crane_x7_AG02_run1_40ms.json   the reconstruction's record (exact or nearest, the
                                                  change, the margins, the solves, the source model,
                                                  and the all-pose audit (seed 1) of a changed
                                                  model)

The same path as `crane-id export MODEL --nearest`: when no consistent link-level model reproduces
the accepted model, the nearest consistent one is exported and the files say so in their header.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.acceptance.audit import audit
from crane_lib.errors import InputError
from crane_lib.export import consistent, files
from crane_lib.model.arm_description import ArmDescription
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters
from crane_lib.paths import RESULTS_DIR
from crane_lib.records import read_json_record, write_json_record

EXPORT_DIR = RESULTS_DIR / "export"
MAKE_STEP = (
    "`make book` (its data step `python -m crane_book.pipeline --profile quick|full` writes it)"
)


def export_paths(
    trajectory: str = "AG02", ts: float = 0.040, run: int = 1, directory=None
) -> dict[str, Path]:
    """The export's files of one condition (URDF, MJCF, standard parameters, record)."""
    stem = f"crane_x7_{trajectory}_run{run}_{round(ts * 1e3):02d}ms"
    directory = EXPORT_DIR if directory is None else Path(directory)
    return {
        kind: directory / f"{stem}.{suffix}"
        for kind, suffix in (
            ("urdf", "urdf"),
            ("mjcf", "xml"),
            ("standard", "csv"),
            ("record", "json"),
        )
    }


def export_model(
    model_path,
    paths: dict[str, Path],
    distance: str = consistent.DEFAULT_DISTANCE,
    mounting: str | None = None,
    extra: dict | None = None,
    arm: ArmDescription | None = None,
) -> consistent.Reconstruction:
    """Reconstruct the model file's consistent link-level model (the nearest one when none
    reproduces
    it) and write the URDF, the MJCF, the standard parameters and the record. `arm`: whose model
    it is (None: the CRANE-X7); `mounting` None: the arm's own ("hanging" for the CRANE-X7)."""
    model_path = Path(model_path)
    base = load_parameters(model_path)
    result = consistent.reconstruct(base, distance=distance, source=str(model_path), arm=arm)
    kind = (
        "reproduces the model exactly"
        if result.exact
        else "the NEAREST consistent model (the model itself admits none)"
    )
    notes = [f"Model: {model_path.name}; this file {kind}.", result.summary() + "."]
    robot = files.exported_robot(result.standard, arm, mounting, notes=notes)
    mounting = robot.mounting
    urdf, mjcf = files.urdf_text(robot), files.mjcf_text(robot)
    files.write_text(paths["urdf"], urdf)
    files.write_text(paths["mjcf"], mjcf)
    count = len(result.standard.names)
    save_parameters(
        paths["standard"],
        ParameterSet(result.standard.names, result.standard.values),
        comment=f"{count} standard parameters behind {model_path.name} "
        f"(crane_lib.export): {result.summary()}",
    )
    record = result.to_record()
    # the exported model's own audit (seed 1) when it is not the model that was given, already
    # audited; the audit is the CRANE-X7's (another arm's nearest model is exported unaudited)
    crane_x7 = consistent.arm_terms(arm).crane_x7
    audited = not (result.exact or not crane_x7)
    record["audit"] = audit(result.reproduced.values, seed=1).to_dict() if audited else None
    if not crane_x7:
        record["arm"] = arm.name
    record.update(
        model_file=model_path.name,
        model_sha256=fingerprint.file_digest(model_path),
        mounting=mounting,
        files={k: p.name for k, p in paths.items() if k != "record"},
        **(extra or {}),
    )
    write_json_record(paths["record"], record)
    return result


def load_export(
    trajectory: str = "AG02", ts: float = 0.040, run: int = 1, directory=None
) -> tuple[dict, dict[str, Path]]:
    """The record and the paths of the exported files; a missing one names the file and the step
    that writes it."""
    paths = export_paths(trajectory, ts, run, directory)
    for path in paths.values():
        if not path.is_file():
            raise InputError(
                str(path),
                f"no exported model of {trajectory} run {run} at {ts * 1e3:g} ms",
                MAKE_STEP,
            )
    return read_json_record(paths["record"]), paths


def reconstruction_of(record: dict) -> consistent.Reconstruction:
    """The Reconstruction a record describes (solve times are not recorded)."""
    errors = record.get("base_std_errors")
    base = ParameterSet(
        record["base_names"], record["base"], None if errors is None else np.array(errors)
    )
    standard = ParameterSet(record["standard_names"], record["standard"])
    return consistent.Reconstruction(
        record["parameter_set"],
        base,
        standard,
        bool(record["exact"]),
        np.array(record["change"]),
        record["change_metric"],
        float(record["change_norm"]),
        record["distance"],
        float(record["divergence"]),
        record["prior"],
        float(record["margin"]),
        [dict(s, seconds=0.0) for s in record["solves"]],
    )
