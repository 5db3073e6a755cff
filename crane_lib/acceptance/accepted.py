"""Algorithm 1 for one recording, end to end: identify and refine (identification.refinement),
audit over Theta on seeds 1-5, rescue if any seed fails, re-audit, and the accepted model file.

This is the one path behind `crane-id accept`, the main job's accepted model of the
representative condition (results/accepted/) and the notebook for a new recording, so that
they cannot disagree. A model is accepted only when every audit seed passes (the audit, not a
solver's exit, decides); a rejected model keeps its witness: the worst pose and its lambda_min.

Another arm: pass its `DynamicModel` (`model(parameter_set, arm=description)`); every stage then
runs on that arm's kernels, its Theta (the audit's and the rescue's pose sets) and its arm block
of M, and CLIE's closed loop is sized from the log's arm.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crane_lib import fingerprint
from crane_lib.acceptance.audit import AuditResult, audit_seeds
from crane_lib.acceptance.rescue import RESCUE_EPSILON, RescueResult, rescue_over_theta
from crane_lib.errors import InputError
from crane_lib.identification.condition import ConditionResult
from crane_lib.identification.refinement import DEFAULT_REFINE, identify_recording, stopped_at_start
from crane_lib.logs.raw_log import RawLog
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters
from crane_lib.paths import RESULTS_DIR
from crane_lib.records import read_json_record, write_json_record

AUDIT_SEEDS = (1, 2, 3, 4, 5)  # Table IX: the dense audit redrawn per seed
# where the main job writes the accepted model of a condition (model file + JSON record)
ACCEPTED_DIR = RESULTS_DIR / "accepted"
# the step that writes it, named in the error a reader gets when it is missing
MAKE_STEP = (
    "`make book` (its data step `python -m crane_book.pipeline --profile quick|full` writes it)"
)


@dataclass
class AcceptedModel:
    """What Algorithm 1 hands on for one recording.

    condition      the OLS/SDP stage (ConditionResult): OLS with standard errors, route, projection
    refinement     the refinement report (method, objectives, iterations, wall time)
    refined        the refined parameters, before the audit
    first_audits   the audit of `refined` over Theta, one AuditResult per seed
    rescue         the rescue (RescueResult) when a first audit failed, else None
    final_audits   the audits that decide: of the rescued model, or `first_audits` when no rescue
                   ran
    parameters     the accepted model (or, when rejected, the last model audited), with OLS standard
                   errors and the model file's metadata
    """

    condition: ConditionResult
    refinement: dict
    refined: ParameterSet
    first_audits: list[AuditResult]
    rescue: RescueResult | None
    final_audits: list[AuditResult]
    parameters: ParameterSet
    provenance: dict = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        """Whether every final audit passed."""
        return all(a.passed for a in self.final_audits)

    @property
    def worst_audit(self) -> AuditResult:
        """The deciding audit with the smallest lambda_min (its worst pose is the witness when
        rejected)."""
        return min(self.final_audits, key=lambda a: a.lambda_min)

    def verdict(self) -> str:
        """One line: accepted (after the rescue or not) or rejected, with the worst audit."""
        worst = self.worst_audit
        if self.accepted:
            rescued = (
                ""
                if self.rescue is None
                else f" after the rescue (eps = {self.parameters.meta['rescue_epsilon']})"
            )
            seeds = ", ".join(str(a.seed) for a in self.final_audits)
            return (
                f"ACCEPTED{rescued}: PD over Theta on seeds {seeds}, "
                f"smallest lambda_min {worst.lambda_min:.4g} kg·m^2"
            )
        pose = ", ".join(f"{v:.1f}" for v in np.rad2deg(worst.worst_pose))
        return (
            f"REJECTED: seed {worst.seed} finds lambda_min {worst.lambda_min:.4g} kg·m^2 at theta "
            f"= [{pose}] deg "
            f"({worst.n_violations:,} violating configurations)"
        )


def _margins(audits: list[AuditResult]) -> str:
    return " ".join(f"{a.seed}:{a.lambda_min:.6g}" for a in audits)


class StageTimes:
    """Wall and CPU seconds of consecutive stages (the `progress` and `timing` callbacks of
    `accept_recording`): `start(name)`, or calling it with the name, ends the running stage and
    starts `name`; `stop()`, or calling it with None, ends the last. A name met again adds its
    seconds to the earlier ones'; the names keep the order they were first met in."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self._running: str | None = None
        self._since = (0.0, 0.0)

    def __call__(self, name: str | None) -> None:
        """`start(name)`; `stop()` for None."""
        if name is None:
            self.stop()
        else:
            self.start(name)

    def add(self, name: str, wall_s: float, cpu_s: float) -> None:
        """Add a stage's wall and CPU seconds measured elsewhere (a process's start)."""
        self.seconds[name] = self.seconds.get(name, 0.0) + wall_s
        self.cpu_seconds[name] = self.cpu_seconds.get(name, 0.0) + cpu_s

    def start(self, name: str) -> None:
        """End the running stage and start timing `name`."""
        self.stop()
        self._running, self._since = name, (time.perf_counter(), time.process_time())

    def stop(self) -> None:
        """End the running stage, adding its wall and CPU seconds to its name's."""
        if self._running is not None:
            wall, cpu = self._since
            self.add(self._running, time.perf_counter() - wall, time.process_time() - cpu)
            self._running = None

    def lines(self) -> list[str]:
        """One `timing: STAGE: W s wall, C s CPU` line per stage, in order."""
        return [
            f"timing: {name}: {wall:.3f} s wall, {self.cpu_seconds[name]:.3f} s CPU"
            for name, wall in self.seconds.items()
        ]


def accept_recording(
    log: RawLog,
    trajectory: str,
    ts: float,
    refine: str = DEFAULT_REFINE,
    seeds=AUDIT_SEEDS,
    epsilon: float = RESCUE_EPSILON,
    workers: int = 2,
    model: DynamicModel | None = None,
    run: int = 1,
    progress=None,
    command_file=None,
    previous: dict | None = None,
    torque_scale=None,
    bundle=None,
    timing=None,
    grid=None,
) -> AcceptedModel:
    """Identify, refine, audit, rescue if needed, re-audit. `progress(stage)` is told each stage.

    `torque_scale`: per-axis gains from a known weight (`torque_scale.TorqueScale`, with the
    `path` it was read from): the log's torque record is scaled by them first, and the model file
    names them with their standard errors.

    The identifiability gate of `identify_recording` applies; pass `command_file` (the command
    file the recording executed) to have the log's recorded sha256 checked against it.
    `previous`: the CLIE sweep's record of this condition, used as the refinement when it is the
    same route from the same start (the main job's sweep has just run it). `bundle` and `grid`:
    the log already preprocessed at `ts` and its even grid (`crane-id accept`'s gate made them),
    not used with a torque scale.
    `timing(stage)` is told the same stages and finer ones (the refinement, the provenance), for
    a breakdown of the time (`crane-id accept --timings`)."""
    model = shared_model("reduced") if model is None else model

    def say(stage: str | None, timed: str | None = None) -> None:
        # `timed`: the name `timing` is told (a finer stage than `progress`'s, or the same)
        if progress is not None and stage is not None:
            progress(stage)
        if timing is not None:
            timing(timed or stage)

    if torque_scale is not None:  # imported here: the CRANE-X7's path never needs it
        from crane_lib.acceptance.torque_scale import scale_meta, scaled_log

        log = scaled_log(log, torque_scale)
        bundle = grid = None  # the unscaled log's
    say("identify and refine", "identify (OLS, routing, projection)")
    condition, refined, report = identify_recording(
        log,
        trajectory,
        ts,
        refine,
        workers=workers,
        model=model,
        run=run,
        command_file=command_file,
        previous=previous,
        bundle=bundle,
        progress=timing,
        grid=grid,
    )
    say("audit over Theta")
    first = audit_seeds(refined.values, seeds, "dense", model)
    rescue, final, values = None, first, refined.values
    meta = dict(refined.meta)
    meta.update(audit_seeds_lambda_min=_margins(first))
    if torque_scale is not None:
        meta.update(scale_meta(torque_scale, torque_scale.meta.get("path", "")))
    if not all(a.passed for a in first):
        say("rescue")
        witnesses = np.vstack([a.worst_poses for a in first if not a.passed])
        rescue = rescue_over_theta(model, refined.values, epsilon=epsilon, extra_poses=witnesses)
        meta.update(
            rescue_epsilon=f"{epsilon:g}",
            rescue_passes=str(len(rescue.passes)),
            rescue_converged=str(rescue.converged),
        )
        if rescue.result is not None:
            values = rescue.result.parameters.values
            say("re-audit")
            final = audit_seeds(values, seeds, "dense", model)
            meta.update(
                rescue_change_norm=f"{rescue.result.change_norm:.6g}",
                rescued_audit_seeds_lambda_min=_margins(final),
            )
    accepted = all(a.passed for a in final)
    worst = min(final, key=lambda a: a.lambda_min)
    meta.update(
        stage="accepted" if accepted else "rejected",
        accepted=str(accepted),
        audit_worst_pose_deg=" ".join(f"{v:.3f}" for v in np.rad2deg(worst.worst_pose)),
    )
    say(None, "provenance (digests of the log and of the code)")
    provenance = {
        "log_sha256": fingerprint.file_digest(log.path)
        if log.path is not None and Path(log.path).is_file()
        else "",
        "crane_lib_sources": fingerprint.code_digest(__name__),
    }
    meta.update({f"provenance.{k}": v for k, v in provenance.items()})
    parameters = ParameterSet(refined.names, values, refined.std_errors, meta)
    return AcceptedModel(condition, report, refined, first, rescue, final, parameters, provenance)


def save_accepted(path, accepted: AcceptedModel, new: bool = False) -> Path:
    """The model file (name, value, unit, std_error) with the route, epsilon, refinement, audit
    margins per seed, rescue and verdict in its header; with `new`, only if still absent."""
    verdict = "accepted" if accepted.accepted else "NOT accepted (see audit_worst_pose_deg)"
    arm = accepted.parameters.meta.get("arm")
    what = (
        "CRANE-X7 39-parameter model"
        if arm is None
        else f"{arm} {len(accepted.parameters.names)}-parameter model"
    )
    comment = f"{what} through Algorithm 1, {verdict}; std_error is the OLS standard error"
    if stopped_at_start(accepted.refinement):
        comment += f"; its {accepted.refinement['method']} refinement accepted no step: the "
        comment += "OLS/SDP start"
    save_parameters(path, accepted.parameters, new=new, comment=comment)
    return Path(path)


# ----------------------------------------------------------------------------- the artefact


def accepted_paths(
    trajectory: str = "AG02", ts: float = 0.040, run: int = 1, directory=None
) -> tuple[Path, Path]:
    """(model file .csv, record .json) of the accepted model of one condition."""
    stem = f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms"
    directory = ACCEPTED_DIR if directory is None else Path(directory)
    return directory / f"{stem}.csv", directory / f"{stem}.json"


def _audit_records(audits: list[AuditResult]) -> list[dict]:
    return [a.to_dict() for a in audits]


def accepted_record(accepted: AcceptedModel, ts: float) -> dict:
    """What a reader of the accepted model needs besides the model file, as one JSON record:
    the condition (OLS estimate, standard errors, kappa, route, SDP margin), the CLIE start and
    the CLIE solution the model came from, the refinement report, every audit (first and final,
    per seed), the rescue's passes, the verdict and the provenance. Run times are left out, so a
    rerun on the same inputs writes the same bytes."""
    condition = accepted.condition
    rescue = accepted.rescue
    refinement = {k: v for k, v in accepted.refinement.items() if k not in ("wall_time_s",)}
    rescue_record = None
    if rescue is not None:
        rescue_record = {
            "converged": bool(rescue.converged),
            "reason": rescue.reason,
            "passes": [{k: v for k, v in p.items() if k != "solve_time_s"} for p in rescue.passes],
            "constraint_poses": None
            if rescue.constraint_poses is None
            else int(len(rescue.constraint_poses)),
            "epsilon": None if rescue.result is None else float(rescue.result.epsilon),
            "change_norm": None if rescue.result is None else rescue.result.change_norm,
            "solved": rescue.result is not None,
        }
    return {
        "trajectory": condition.trajectory,
        "ts": float(ts),
        "run": condition.run,
        "accepted": accepted.accepted,
        "verdict": accepted.verdict(),
        "names": list(accepted.parameters.names),
        "parameters": accepted.parameters.values.tolist(),
        "std_errors": condition.ols.parameters.std_errors.tolist(),
        "ols": condition.ols.parameters.values.tolist(),
        "kappa": condition.ols.kappa,
        "route": condition.route,
        "lambda_min_visited": condition.lambda_min_visited,
        "sdp_epsilon": None if condition.projection is None else condition.projection.epsilon,
        "start": condition.start.values.tolist(),
        "refined": accepted.refined.values.tolist(),
        "refinement": refinement,
        "first_audits": _audit_records(accepted.first_audits),
        "final_audits": _audit_records(accepted.final_audits),
        "rescue": rescue_record,
        "provenance": dict(accepted.provenance),
    }


def write_accepted(
    accepted: AcceptedModel, ts: float, directory=None, extra: dict | None = None
) -> tuple[Path, Path]:
    """The model file (save_accepted) and its record (accepted_record, plus `extra` keys such as a
    cache key), both written atomically."""
    csv_path, json_path = accepted_paths(
        accepted.condition.trajectory, ts, accepted.condition.run, directory
    )
    save_accepted(csv_path, accepted)
    write_json_record(json_path, {**accepted_record(accepted, ts), **(extra or {})})
    return csv_path, json_path


def rescued_by_record(record: dict | None) -> bool:
    """Whether an accepted record's CLIE solution failed the audit and was rescued to a model."""
    return (
        record is not None
        and any(not a["passed"] for a in record["first_audits"])
        and record.get("rescue") is not None
        and bool(record["rescue"].get("solved"))
    )


def load_accepted(
    trajectory: str = "AG02",
    ts: float = 0.040,
    run: int = 1,
    directory=None,
    names: list[str] | None = None,
) -> tuple[ParameterSet, dict]:
    """The accepted model file and its record; a missing one is an InputError naming the file
    and the step that writes it."""
    csv_path, json_path = accepted_paths(trajectory, ts, run, directory)
    for path in (csv_path, json_path):
        if not path.is_file():
            raise InputError(
                str(path),
                f"no accepted model of {trajectory} run {run} at {ts * 1e3:g} ms",
                f"the file written by {MAKE_STEP}",
            )
    names = shared_model("reduced").names if names is None else names
    return load_parameters(csv_path, names), read_json_record(json_path)
