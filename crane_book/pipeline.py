"""The main job's data steps, in pipeline order, before the book is built.

    python -m crane_book.pipeline --profile quick|full [--jobs 2] [--scheduler tcp://host:8786]
    python -m crane_book.pipeline --profile full --study clie_faithful [--scheduler ...]

Every record of the book is written here and nowhere else; the pages only read them. Each step
prints how many records it reused and why each recomputed one was stale: a record's key is its
inputs, its parameters and the source of the crane_lib modules its computing code imports,
transitively (`crane_book.keys`), so editing a chapter or a view re-runs no step.

1. the default data set: the twin's recordings of the profile (`dataset`);
2. the OLS/SDP sweep: the condition notebook `conditions/ols_sdp.py` once per row of
   `papermill_params/ols_sdp_<profile>.csv`;
3. the CLIE sweep: `conditions/clie.py` once per row of `papermill_params/clie_<profile>.csv`
   (the fast route; the parameter clouds and Table VIII read its records);
4. the accepted model: Algorithm 1 end to end on the representative condition (AG02, first
   execution, 40 ms; the structural rule of Sec. VI-B names it) through
   `acceptance.accepted.accept_recording`, the path `crane-id` uses (its refinement is the CLIE
   sweep's run of that condition when the start is the same: deterministic, so not repeated),
   written to results/accepted/ as a model file and a JSON record; and the 40 ms bundles of
   every execution of V01-V03, which the chapter "Validation" reads; and what the twin produces
   against the paper (`acceptance.twin_calibration`, results/realization), which chapter 03
   reads;
5. the repeats sweep: `conditions/repeats.py` once per execution and interval of
   `papermill_params/repeats_<profile>.csv` (Table XI, Sec. VII-D); an execution listed there
   but not recorded is reported with the step that records it, and the others go on;
6. the Kt draws: `conditions/kt_draws.py` once per block of seeds of
   `papermill_params/kt_draws_<profile>.csv`
   (Sec. VII-D, Appendix E-C), one record per draw;
7. the export of the accepted model: its physically consistent link-level model (the nearest
   one when the model admits none, as `crane-id export --nearest`) as URDF, MJCF and standard
   parameters in results/export/, which the chapter "A consistent model, exported" verifies
   and offers for download;
8. the nonideality study: `conditions/nonideality.py` once per row of
   `papermill_params/nonideality_<profile>.csv` (every row checked before anything is recorded;
   `acceptance.nonideality`);
9. Beyond OLS: OLS, error-covariance WLS and the dual-metric WLS (plain and with Theta_r) on the
   Table VIII trajectories the profile records and the invariance test (`export.beyond_ols`,
   results/beyond_ols), which the chapter "Beyond OLS" reads;
10. side by side (`side_by_side`: one process each, none reads another's record): DIDIM, and
   CLIE from each ε of the projection ladder, on the representative condition
   (`identification.refinement_runs`, one record each in results/refinement_runs), which the
   chapter "CLIE" reads (DIDIM reads the recording alone, so with --jobs above 1 and no
   scheduler it starts after step 1, beside the sweeps, and is collected here);
   Sec. VI-E's re-evaluation: every OLS estimate of the build audited over Θ (results/audits),
   which chapter 06 and the claims read;
   the fresh-set rescues (ε = 0 and D-I's re-run with ε) of the CLIE solution Algorithm 1's
   record rescued (`acceptance.rescue`, results/rescues), which chapter 06 reads;
   beyond the paper, the certified check over the continuous Θ (`acceptance.certified`): the
   accepted model (a box around its worst audit pose, and the whole of Θ) and the CLIE
   solution it was rescued from, one record per model (results/certified), which chapter 06
   reads; the other arms: the ViperX 300 S and the SO-101 through the CRANE-X7's stages (model,
   excitation rank, a twin recording through Algorithm 1, held-out error, truth score) beside
   the CRANE-X7's accepted model, one record per arm (`acceptance.other_arms`,
   results/other_arms), which the chapter "Other arms" reads (after the accepted model and the
   validation bundles); the demonstration of the report "Your own arm": AP01 recorded through
   the servo emulator in lockstep timing, then Algorithm 1 (`acceptance.demonstration`,
   results/your_arm), which that page reads;
   after them, chapter 06's audit study of the representative condition (`acceptance.all_pose`:
   Table IX's audits over every seed, the manufacturer's box, Table X, where the violations lie),
   one record (results/audit_study) that chapter 06 reads;
   the replay verification: each shipped arm's accepted model, its description's prior and its
   twin's truth exported as MJCF and simulated in MuJoCo under the controller the recording
   used on a held-out recording (`export.replay`, results/replay), which the chapter "Other arms"
   reads;
   then the same recordings through the field's other tools (MuJoCo's sysid, FIGAROH) beside
   Algorithm 1 on the CRANE-X7 and the SO-101 (`export.peer_tools`, results/peer_tools), which
   the chapter "The same recordings through other tools" reads;
11. the claims at a glance: each of the paper's main claims evaluated from those records
   (`crane_book.claims`, results/claims);
12. the downloads: the records zipped per kind (`downloads`, results/downloads) for the pages
   that link them.

The data set is recorded on the twin profile $CRANE_TWIN names (`make book TWIN=field`).

Studies run only when named with `--study` (they are not part of `make book`):
- `clie_faithful`: `conditions/clie.py` with the faithful finite-difference route of Appendix D-F
  once per
  condition of `papermill_params/clie_faithful_<profile>.csv` (all 160 in the full profile;
  hours on two cores, so meant for a Dask scheduler with many workers: `make clie-faithful
  SCHEDULER=tcp://host:8786`). Its records (results/clie/clie/) put the faithful clouds beside
  the fast ones in the chapter "Parameter clouds".

Every step is cached by content, so a rebuild redoes only what changed. A condition that
fails is reported and the others go on; the chapter summaries show what exists. With
`--scheduler` the sweeps run on that Dask scheduler's workers (see `crane_book.sweep`);
an unreachable scheduler, a peer that is no Dask scheduler, or workers running another crane_lib
stop the job with one line and exit status 2 before any work, as does a malformed option
(`crane_book.options`: --jobs, --scheduler or $CRANE_SCHEDULER, --scheduler-timeout).
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import as_completed
from pathlib import Path

import numpy as np
from tqdm import tqdm

from crane_book import claims, downloads, keys, options, sweep
from crane_book.build_clock import BuildClock
from crane_book.workers import worker_pool
from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import (
    all_pose,
    audit,
    certified,
    demonstration,
    kt_sensitivity,
    nonideality,
    other_arms,
    payload,
    reproducibility,
    screen,
    torque_scale,
    twin_calibration,
    yoshida_khalil,
)
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.errors import InputError
from crane_lib.export import artefacts as export_stage
from crane_lib.export import beyond_ols, peer_tools
from crane_lib.export import replay as replay_stage
from crane_lib.identification import clie, condition, refinement_runs
from crane_lib.logs.preprocessing import cached_bundles
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.controller import REALIZATION_CONSTANTS_CSV
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import load_parameters
from crane_lib.paths import TRAJECTORY_DIR, portable, recording_path
from crane_lib.records import read_json_record, write_json_record
from crane_lib.twin import dataset
from crane_lib.twin.truth import TWIN_PLANT_CSV, TWIN_TRUTH_CSV

# the condition notebooks of the sweeps: one call into a stage, one record per condition
CONDITIONS = Path(__file__).resolve().parent / "conditions"
# the per-condition sweeps of the main job in pipeline order: (parameter set, notebook)
SWEEPS = (("ols_sdp", CONDITIONS / "ols_sdp.py"), ("clie", CONDITIONS / "clie.py"))
# sweeps run only on request (--study)
STUDIES = {"clie_faithful": CONDITIONS / "clie.py"}
# every sweep's condition notebook (the main job's, and the repeats, Kt and nonideality ones)
NOTEBOOKS = {
    name: CONDITIONS / f"{name}.py"
    for name in ("ols_sdp", "clie", "repeats", "kt_draws", "nonideality")
}
# the crane_lib modules whose code (with everything they import) decides each other data step
STEP_MODULES = {
    "accepted": [accepted_stage.__name__],
    "export": [export_stage.__name__],
    "beyond_ols": [beyond_ols.__name__],
    "audits": [screen.__name__],
    "certified": [certified.__name__],
    "refinement_runs": [refinement_runs.__name__],
    "rescues": [rescue_stage.__name__],
    "other_arms": [other_arms.__name__],
    "audit_study": [all_pose.__name__],
    "your_arm": [demonstration.__name__],
    "torque_scale": [payload.__name__, torque_scale.__name__],
    "twin_calibration": [twin_calibration.__name__],
    "kt_study": [kt_sensitivity.__name__],
    "replay": [replay_stage.__name__],
    "peer_tools": [peer_tools.__name__],
    "yoshida_khalil": [yoshida_khalil.__name__],
}
EXIT_BAD_SCHEDULER = 2


def step_code() -> dict[str, dict]:
    """Every data step's code parts (`keys.code_parts`): the files whose change re-runs it."""
    return {
        "recordings": keys.code_parts(modules=[dataset.__name__]),
        **{name: sweep.code_parts(path) for name, path in NOTEBOOKS.items()},
        **{name: keys.code_parts(modules=modules) for name, modules in STEP_MODULES.items()},
        "claims": claims.code_parts(),
    }


def notebook_of(name: str) -> Path:
    """The condition notebook a sweep (main job or study) runs."""
    return dict(SWEEPS).get(name) or STUDIES[name]


def condition_sweep(
    name: str, notebook, profile: str, jobs: int, scheduler=None
) -> sweep.SweepReport:
    """Run `notebook` once per condition of papermill_params/<name>_<profile>.csv; a condition's
    input is its recording. `scheduler`: a Dask scheduler address (default: $CRANE_SCHEDULER,
    else the local pool)."""
    conditions = sweep.read_conditions(f"{name}_{profile}.csv")
    return sweep.run_sweep(
        notebook,
        conditions,
        f"{name}_{profile}",
        inputs_of=lambda p: [recording_path(p["trajectory"], p["run"])],
        workers=jobs,
        scheduler=scheduler,
    )


# the representative condition (Sec. VI-B: the structural rule names AG02 at 40 ms, chapter
# "Parameter clouds" derives it; tests/test_selection.py checks the rule) and its refinement route
REPRESENTATIVE = {"trajectory": "AG02", "ts": 0.040, "run": 1}
ACCEPTED_REFINE = "fast"  # the CLIE sweep's route
VALIDATION_TRAJECTORIES = ("V01", "V02", "V03")


def _missing_recording(path, profile: str) -> InputError:
    return InputError(
        str(path),
        "no such recording",
        f"the twin's recording written by `python -m crane_lib.twin.dataset --profile {profile}` "
        "(the first step of `make book`)",
    )


def accepted_key(log_path, trajectory: str, ts: float, run: int, refine: str) -> keys.Key:
    """What decides the accepted model: the log and its command file, the condition, the route,
    the audit seeds and rescue margin, and the source `acceptance.accepted` imports."""
    return keys.record_key(
        inputs=[log_path, TRAJECTORY_DIR / f"{trajectory}.txt"],
        parameters={
            "trajectory": trajectory,
            "ts": ts,
            "run": run,
            "refine": refine,
            "seeds": list(accepted_stage.AUDIT_SEEDS),
            "epsilon": accepted_stage.RESCUE_EPSILON,
        },
        modules=STEP_MODULES["accepted"],
    )


def accepted_model_step(
    profile: str,
    jobs: int = 2,
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    refine: str = ACCEPTED_REFINE,
    directory=None,
) -> keys.StepLog:
    """Algorithm 1 on one condition, written to results/accepted/ unless its stored key matches."""
    log_path = recording_path(trajectory, run)
    if not log_path.is_file():
        raise _missing_recording(log_path, profile)
    key = accepted_key(log_path, trajectory, ts, run, refine)
    csv_path, json_path = accepted_stage.accepted_paths(trajectory, ts, run, directory)
    store = keys.KeyStore("accepted", None if directory is None else Path(directory).parent)
    name = json_path.stem
    log = keys.StepLog("accepted model")
    reasons = store.stale(name, key, outputs=[csv_path, json_path])
    log.note(reasons)
    if not reasons:
        return log
    stages = ["identify and refine", "audit over Theta", "rescue", "re-audit"]
    started = time.perf_counter()
    with tqdm(
        total=len(stages), desc=f"accepted model {trajectory} at {ts * 1e3:g} ms", unit="stage"
    ) as bar:

        def progress(stage):
            bar.set_postfix_str(stage)
            bar.update(max(stages.index(stage) - bar.n, 0) if stage in stages else 0)

        sweep_record = clie.record_path(trajectory, ts, run, refine)
        previous = read_json_record(sweep_record) if sweep_record.is_file() else None
        # the gate checks the log executed the command file; `previous` is the CLIE sweep's
        # run, used when it is from the same start (deterministic, so not repeated)
        result = accepted_stage.accept_recording(
            read_raw_log(log_path),
            trajectory,
            ts,
            refine,
            workers=jobs,
            run=run,
            progress=progress,
            command_file=TRAJECTORY_DIR / f"{trajectory}.txt",
            previous=previous,
        )
        bar.update(bar.total - bar.n)
    accepted_stage.write_accepted(result, ts, directory)
    store.store(name, key)
    print(f"accepted model: {result.verdict()} ({time.perf_counter() - started:.0f} s); {csv_path}")
    return log


def side_by_side(steps, jobs: int) -> list[keys.StepLog]:
    """Run independent single-process steps, each (function, arguments), in up to `jobs`
    processes (in order, in this one, when `jobs` is 1); their logs in the order given."""
    if jobs <= 1 or len(steps) <= 1:
        return [step(*arguments) for step, arguments in steps]
    with worker_pool(min(jobs, len(steps))) as pool:
        futures = [pool.submit(step, *arguments) for step, arguments in steps]
        return [future.result() for future in futures]


def _refinement_runs_step(
    kind: str, profile: str, trajectory: str, ts: float, run: int, directory
) -> keys.StepLog:
    """One kind of refinement run on the representative condition (`refinement_runs`), one
    record (results/refinement_runs/) that the CLIE chapter reads, unless its stored key
    matches: DIDIM's is the recording and the code; the ε ladder's also the CLIE sweep's record
    of the condition (its run from the OLS point is not repeated) and the ladder."""
    log_path = recording_path(trajectory, run)
    if not log_path.is_file():
        raise _missing_recording(log_path, profile)
    inputs, parameters = [log_path], {"trajectory": trajectory, "ts": ts, "run": run}
    sweep_path = clie.record_path(trajectory, ts, run, "fast")
    if kind == "epsilon":
        inputs += [sweep_path] if sweep_path.is_file() else []
        parameters["epsilons"] = list(refinement_runs.sdp.EPSILON_LADDER)
    key = keys.record_key(
        inputs=inputs, parameters=parameters, modules=STEP_MODULES["refinement_runs"]
    )
    path = refinement_runs.record_path(kind, trajectory, ts, run, directory)
    store = keys.KeyStore("refinement_runs", None if directory is None else Path(directory).parent)
    name = refinement_runs.KINDS[kind]
    log = keys.StepLog(name)
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        started = time.perf_counter()
        if kind == "didim":
            record = refinement_runs.didim_record(trajectory, ts, run)
        else:
            sweep_record = read_json_record(sweep_path) if sweep_path.is_file() else None
            record = refinement_runs.epsilon_record(trajectory, ts, run, sweep_record)
        write_json_record(path, record)
        store.store(path.stem, key)
        print(f"{name}: {time.perf_counter() - started:.0f} s; {path}")
    return log


def didim_step(
    profile: str,
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    directory=None,
) -> keys.StepLog:
    """DIDIM from its regular initialization on the representative condition, one record."""
    return _refinement_runs_step("didim", profile, trajectory, ts, run, directory)


def epsilon_ladder_step(
    profile: str,
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    directory=None,
) -> keys.StepLog:
    """CLIE from each ε of the projection ladder on the representative condition, one record."""
    return _refinement_runs_step("epsilon", profile, trajectory, ts, run, directory)


def validation_bundles_step(profile: str, ts: float = REPRESENTATIVE["ts"]) -> int:
    """Preprocess (or find cached) the bundles of every execution of V01-V03 in the profile."""
    runs = [e for e in dataset.executions(profile) if e.trajectory in VALIDATION_TRAJECTORIES]
    for execution in tqdm(runs, desc="validation bundles", unit="recording"):
        path = recording_path(execution.trajectory, execution.run)
        if not path.is_file():
            raise _missing_recording(path, profile)
        cached_bundles(path)
    return len(runs)


def twin_calibration_step(profile: str, directory=None) -> keys.StepLog:
    """What the twin produces against the paper (`acceptance.twin_calibration`): the calibration
    summaries of the profile's AG02 and V01-V03 recordings, the bundles preprocessed again, Joint
    7's fit
    and closed loop; one record (results/realization/) that chapter 03 reads."""
    path = twin_calibration.record_path(profile, directory)
    key = keys.record_key(
        inputs=twin_calibration.input_files(profile),
        parameters={"profile": profile},
        modules=STEP_MODULES["twin_calibration"],
    )
    store = keys.KeyStore("realization", None if directory is None else Path(directory).parent)
    log = keys.StepLog("twin calibration")
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        started = time.perf_counter()
        write_json_record(path, twin_calibration.calibration_record(profile))
        store.store(path.stem, key)
        print(f"twin calibration: {time.perf_counter() - started:.0f} s; {path}")
    return log


def repeats_sweep(profile: str, jobs: int, scheduler=None) -> sweep.SweepReport:
    """`conditions/repeats.py` once per row of papermill_params/repeats_<profile>.csv; a row whose
    execution has no recording is reported (with the step that records it) and left out."""
    conditions = sweep.read_conditions(f"repeats_{profile}.csv")
    for message in reproducibility.missing_recordings(conditions, profile):
        print(f"repeats: {message}", file=sys.stderr)
    present = [c for c in conditions if recording_path(c["trajectory"], c["run"]).exists()]
    return sweep.run_sweep(
        NOTEBOOKS["repeats"],
        present,
        f"repeats_{profile}",
        inputs_of=lambda p: [
            recording_path(p["trajectory"], p["run"]),
            *reproducibility.heldout_inputs(),
        ],
        workers=jobs,
        scheduler=scheduler,
    )


def kt_sweep(profile: str, jobs: int, scheduler=None) -> sweep.SweepReport:
    """`conditions/kt_draws.py` once per block of seeds of kt_draws_<profile>.csv."""
    conditions = sweep.read_conditions(f"kt_draws_{profile}.csv")
    kt_sensitivity.seeds_of(conditions)  # the blocks must not overlap
    screen.compile_core()  # once, before the workers
    return sweep.run_sweep(
        NOTEBOOKS["kt_draws"],
        conditions,
        f"kt_draws_{profile}",
        inputs_of=lambda p: [
            recording_path(p["trajectory"], p["run"]),
            *reproducibility.heldout_inputs(),
            TWIN_PLANT_CSV,
            TWIN_TRUTH_CSV,
        ],
        workers=jobs,
        scheduler=scheduler,
    )


def kt_study_path(trajectory: str, ts: float, run: int) -> Path:
    """Where the Kt study of one condition is recorded, beside its draws."""
    return kt_sensitivity.study_directory(trajectory, ts, run) / "study.json"


def kt_study_step(
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
) -> keys.StepLog:
    """Appendix E-C on the representative condition: the unperturbed estimate, both ends of a
    uniform Kt error and the twin's own corrections, one record (beside the draws) that chapter
    10 reads unless its stored key matches."""
    path = kt_study_path(trajectory, ts, run)
    key = keys.record_key(
        inputs=[
            recording_path(trajectory, run),
            *reproducibility.heldout_inputs(),
            TWIN_PLANT_CSV,
            TWIN_TRUTH_CSV,
        ],
        parameters={"trajectory": trajectory, "ts": ts, "run": run},
        modules=STEP_MODULES["kt_study"],
    )
    store = keys.KeyStore("kt_study")
    log = keys.StepLog("Kt study")
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        study = kt_sensitivity.kt_study(trajectory, ts, run)
        half = kt_sensitivity.half_width()
        uniform = [kt_sensitivity.uniform_scaling(study, 1 + s * half) for s in (-1, 1)]
        corrections = kt_sensitivity.twin_corrections()
        record = {
            "nominal": study.nominal,
            "uniform": [{k: v for k, v in u.items() if k != "scaled"} for u in uniform],
            "corrections": {label: f.tolist() for label, f in corrections.items()},
            "corrected": {
                label: kt_sensitivity.evaluate(study, f, label) for label, f in corrections.items()
            },
        }
        write_json_record(path, record)
        store.store(path.stem, key)
    return log


def nonideality_sweep(profile: str, jobs: int, scheduler=None) -> sweep.SweepReport:
    """`conditions/nonideality.py` once per row of papermill_params/nonideality_<profile>.csv,
    every row checked before anything is recorded."""
    conditions = nonideality.read_study_conditions(nonideality.study_conditions_path(profile))
    return sweep.run_sweep(
        NOTEBOOKS["nonideality"],
        [{**c.parameters(), "profile": profile} for c in conditions],
        f"nonideality_{profile}",
        inputs_of=lambda p: nonideality.twin_inputs() + [TRAJECTORY_DIR / f"{p['trajectory']}.txt"],
        workers=jobs,
        scheduler=scheduler,
    )


def export_step(
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    accepted_dir=None,
    directory=None,
) -> keys.StepLog:
    """The accepted model's URDF, MJCF, standard parameters and record, unless their stored key
    (the model file and the source `export.artefacts` imports) matches."""
    model_path, _ = accepted_stage.accepted_paths(trajectory, ts, run, accepted_dir)
    if not model_path.is_file():
        raise InputError(str(model_path), "no accepted model to export", accepted_stage.MAKE_STEP)
    key = keys.record_key(inputs=[model_path], modules=STEP_MODULES["export"])
    paths = export_stage.export_paths(trajectory, ts, run, directory)
    store = keys.KeyStore("export", None if directory is None else Path(directory).parent)
    log = keys.StepLog("export")
    reasons = store.stale(paths["record"].stem, key, outputs=list(paths.values()))
    log.note(reasons)
    if not reasons:
        return log
    started = time.perf_counter()
    result = export_stage.export_model(model_path, paths)
    store.store(paths["record"].stem, key)
    print(
        f"export: {result.summary()} ({time.perf_counter() - started:.1f} s); "
        f"{paths['urdf'].parent}"
    )
    return log


def beyond_ols_step(
    profile: str, directory=None, jobs: int = 1, run_job=beyond_ols.write_job
) -> keys.StepLog:
    """The records of the chapter "Beyond OLS": one per Table VIII trajectory the profile records
    (first execution, 40 ms) and the invariance test on the representative condition.

    The records that are missing or stale are computed on `jobs` processes (each fit is one
    solver on one core), the representative condition first (it also fits the consistent-links
    variant, the longest); each worker writes its own record. `run_job(job, representative,
    profile, path)`: what computes one record and writes it to `path` (a module-level function:
    it is pickled)."""
    names = beyond_ols.trajectories(profile)
    representative = names[0] if names else "AG02"
    store = keys.KeyStore("beyond_ols", None if directory is None else Path(directory).parent)
    log = keys.StepLog("beyond OLS")
    code = keys.code_parts(modules=STEP_MODULES["beyond_ols"])
    pending = []
    for job in [*names, beyond_ols.INVARIANCE]:
        path, recording, parameters = beyond_ols.job_inputs(job, representative, profile, directory)
        key = keys.record_key(inputs=[recording], parameters=parameters, code=code)
        reasons = store.stale(path.stem, key, outputs=[path])
        log.note(reasons)
        if reasons:
            pending.append(((job, representative, profile, path), key))
    if len(pending) > 1 and jobs > 1:
        with worker_pool(min(jobs, len(pending))) as pool:
            futures = {
                pool.submit(run_job, *arguments): (arguments, key) for arguments, key in pending
            }
            for future in tqdm(
                as_completed(futures), total=len(futures), desc="beyond OLS", unit="record"
            ):
                future.result()  # a failure stops the step, as in one process
                arguments, key = futures[future]
                store.store(Path(arguments[3]).stem, key)
    else:
        for arguments, key in tqdm(pending, desc="beyond OLS", unit="record"):
            run_job(*arguments)
            store.store(Path(arguments[3]).stem, key)
    return log


def other_arms_step(profile: str, directory=None) -> keys.StepLog:
    """One record per shipped arm (`acceptance.other_arms`), unless its stored key (the arm's
    description and command files, the CRANE-X7's accepted record and validation recordings, the
    profile, and the source the study imports) matches."""
    store = keys.KeyStore("other_arms", None if directory is None else Path(directory).parent)
    log = keys.StepLog("other arms")
    for key in tqdm(other_arms.ARM_KEYS, desc="other arms", unit="arm"):
        path = other_arms.record_path(key, directory)
        record_key = keys.record_key(
            inputs=other_arms.input_files(key, profile),
            parameters={"profile": profile},
            modules=STEP_MODULES["other_arms"],
        )
        reasons = store.stale(path.stem, record_key, outputs=[path])
        log.note(reasons)
        if reasons:
            other_arms.write_arm_record(key, profile, directory)
            store.store(path.stem, record_key)
    return log


def peer_tools_step(profile: str, directory=None) -> keys.StepLog:
    """The same recordings through MuJoCo's sysid and FIGAROH beside Algorithm 1, one record per
    compared arm (`export.peer_tools`, results/peer_tools), unless its stored key (the recordings,
    the accepted model's record and exported MJCF, the profile, the source) matches; every input
    is checked before any tool runs."""
    store = keys.KeyStore("peer_tools", None if directory is None else Path(directory).parent)
    log = keys.StepLog("other tools")
    pending = []
    for arm in peer_tools.COMPARED_ARMS:
        path = peer_tools.record_path(arm, directory)
        record_key = keys.record_key(
            inputs=peer_tools.input_files(arm, profile),
            parameters={"profile": profile, "tools": list(peer_tools.TOOLS)},
            modules=STEP_MODULES["peer_tools"],
        )
        reasons = store.stale(path.stem, record_key, outputs=[path])
        log.note(reasons)
        if reasons:
            pending.append((arm, path, record_key))
    bar = tqdm(total=len(pending) * len(peer_tools.TOOLS), desc="other tools", unit="result")
    for arm, path, record_key in pending:
        peer_tools.write_comparison(arm, profile, directory, progress=lambda stage: bar.update(1))
        store.store(path.stem, record_key)
    bar.close()
    return log


def replay_step(profile: str, directory=None, arms_directory=None) -> keys.StepLog:
    """Replay verification of the three shipped arms (`export.replay`: the accepted model of the
    other-arms step, the description's prior and the twin's truth, each exported as MJCF and
    simulated in MuJoCo under the controller the recording used: controller (2), or the servos'
    loop as position actuators), one record and three MJCFs per arm (results/replay/), unless
    its stored key (the other-arms record, the held-out recording, the arm's description and twin
    files, the source) matches."""
    store = keys.KeyStore("replay", None if directory is None else Path(directory).parent)
    log = keys.StepLog("replay")
    for key in tqdm(other_arms.ARM_KEYS, desc="replay", unit="arm"):
        path = replay_stage.record_path(key, directory)
        inputs = [
            other_arms.record_path(key, arms_directory),
            replay_stage.held_out_log(key, arms_directory),
            *other_arms.input_files(key, profile),
            TWIN_TRUTH_CSV,
            REALIZATION_CONSTANTS_CSV,
        ]
        record_key = keys.record_key(
            inputs=inputs, parameters={"profile": profile}, modules=STEP_MODULES["replay"]
        )
        outputs = [path, *replay_stage.model_paths(key, directory)]
        reasons = store.stale(path.stem, record_key, outputs=outputs)
        log.note(reasons)
        if reasons:
            replay_stage.write_replay_record(key, directory, arms_directory)
            store.store(path.stem, record_key)
    return log


def your_arm_step(directory=None) -> keys.StepLog:
    """The demonstration of the report "Your own arm" (`acceptance.demonstration`: a command file
    recorded through the servo emulator in lockstep timing, then Algorithm 1), unless its stored
    key (the command file, the twin's files and the source the step imports) matches."""
    paths = demonstration.demonstration_paths(directory=directory)
    store = keys.KeyStore("your_arm", None if directory is None else Path(directory).parent)
    log = keys.StepLog("your arm")
    key = keys.record_key(
        inputs=[demonstration.command_file(), TWIN_PLANT_CSV, TWIN_TRUTH_CSV],
        parameters={"ts": demonstration.DEMO_TS, "refine": demonstration.DEMO_REFINE},
        modules=STEP_MODULES["your_arm"],
    )
    reasons = store.stale(paths["record"].stem, key, outputs=list(paths.values()))
    log.note(reasons)
    if reasons:
        demonstration.write_demonstration(directory=directory)
        store.store(paths["record"].stem, key)
    return log


def torque_scale_step(directory=None) -> keys.StepLog:
    """The SO-101 path of "Your own arm" (`acceptance.payload.twin_study`: a secret gain error,
    the torque scale from a known weight, Algorithm 1 with and without it, a secret payload),
    one record (results/torque_scale/so101.json) unless its stored key (the arm's description
    and command files, the source the study imports) matches."""
    key_name = "so101"
    path = payload.study_path(key_name, directory)
    store = keys.KeyStore("torque_scale", None if directory is None else Path(directory).parent)
    log = keys.StepLog("torque scale and payload")
    key = keys.record_key(
        inputs=other_arms.input_files(key_name, "quick"),
        parameters={"arm": key_name},
        modules=STEP_MODULES["torque_scale"],
    )
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        payload.write_study(key_name, directory)
        store.store(path.stem, key)
    return log


def ols_audits_step(profile: str | None = None) -> keys.StepLog:
    """Sec. VI-E: every OLS estimate of the profile's condition records (all when None) audited
    over Θ (dense set, seed 1, screened; with where the violations lie), one record
    (results/audits/) that chapter 06 and the claims read."""
    inputs = condition.profile_record_paths(profile)
    key = keys.record_key(inputs=inputs, parameters={"seed": 1}, modules=STEP_MODULES["audits"])
    store = keys.KeyStore("audits")
    log = keys.StepLog("OLS estimates over Θ")
    reasons = store.stale(audit.OLS_AUDITS_PATH.stem, key, outputs=[audit.OLS_AUDITS_PATH])
    log.note(reasons)
    if reasons:
        records = [
            read_json_record(p) for p in tqdm(inputs, desc="OLS estimates over Θ", unit="record")
        ]
        write_json_record(audit.OLS_AUDITS_PATH, screen.audit_estimates(records, seed=1))
        store.store(audit.OLS_AUDITS_PATH.stem, key)
    return log


def yoshida_khalil_step(profile: str | None = None) -> keys.StepLog:
    """Chapter 06's comparison with Yoshida & Khalil's condition: every OLS and CLIE estimate of
    the profile (all when None) judged by it, by the certificate over Θ and by the dense audit
    (results/audits/); after the OLS audits, whose record it reads."""
    inputs = condition.profile_record_paths(profile) + [audit.OLS_AUDITS_PATH]
    inputs += clie.profile_record_paths("fast", profile)
    key = keys.record_key(
        inputs=inputs,
        parameters={"seed": 1, "max_boxes": yoshida_khalil.CERTIFY_MAX_BOXES},
        modules=STEP_MODULES["yoshida_khalil"],
    )
    path = yoshida_khalil.RECORD_PATH
    store = keys.KeyStore("yoshida_khalil")
    log = keys.StepLog("Yoshida-Khalil comparison")
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        write_json_record(path, yoshida_khalil.comparison_record(seed=1, profile=profile))
        store.store(path.stem, key)
    return log


def rescues_step(
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    accepted_dir=None,
    directory=None,
) -> keys.StepLog:
    """The fresh-set rescues of the CLIE solution Algorithm 1's record rescued (the earlier
    version's margin and D-I's re-run with ε), one record (results/rescues/) that chapter 06
    reads; nothing when the record rescued nothing (the chapter then rescues a substitute)."""
    _, json_path = accepted_stage.accepted_paths(trajectory, ts, run, accepted_dir)
    if not json_path.is_file():
        raise InputError(str(json_path), "no accepted record", accepted_stage.MAKE_STEP)
    record = read_json_record(json_path)
    log = keys.StepLog("fresh-set rescues")
    if not accepted_stage.rescued_by_record(record):
        return log
    epsilons = [rescue_stage.EARLIER_RESCUE_EPSILON, rescue_stage.RESCUE_EPSILON]
    key = keys.record_key(
        inputs=[json_path], parameters={"epsilons": epsilons}, modules=STEP_MODULES["rescues"]
    )
    path = rescue_stage.rescues_path(trajectory, ts, run, directory)
    store = keys.KeyStore("rescues", None if directory is None else Path(directory).parent)
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        started = time.perf_counter()
        model = shared_model("reduced")
        entries = rescue_stage.fresh_rescues(model, np.asarray(record["refined"]), epsilons)
        write_json_record(
            path,
            {
                "trajectory": trajectory,
                "ts": ts,
                "run": run,
                "model": certified.CLIE_SOLUTION,
                "rescues": entries,
            },
        )
        store.store(path.stem, key)
        print(f"fresh-set rescues: {time.perf_counter() - started:.0f} s; {path}")
    return log


# boxes the checks over all of Θ of one model share (ε/2 first, then 0; "undecided" when out):
# a count, not seconds, so the record is the same on every machine; about three times what the
# accepted model's check at ε/2 needs on the full data set (some 33,000), a few minutes on 2 cores
CERTIFY_MAX_BOXES = 100_000


def certified_jobs(
    profile: str, record: dict, csv_path: Path, json_path: Path, max_boxes: int
) -> list[dict]:
    """The models of a condition the certified step checks, each with what decides its record:
    the accepted model (its model file, and its record for the worst audit pose), and the CLIE
    solution it was rescued from when the record rescued it (the record holds it)."""
    epsilon = accepted_stage.RESCUE_EPSILON
    settings = {"max_boxes": max_boxes, "domain_rad": audit.audit_domain().tolist()}
    jobs = [
        {
            "name": certified.ACCEPTED_MODEL,
            "inputs": [csv_path, json_path],
            "parameters": {
                **settings,
                "theta_margins": certified.theta_margins(profile, epsilon),
                "near_margins": (0.0, epsilon / 2),
                "half_width_deg": certified.NEAR_HALF_WIDTH_DEG,
            },
        }
    ]
    if accepted_stage.rescued_by_record(record):
        jobs.append(
            {
                "name": certified.CLIE_SOLUTION,
                "inputs": [json_path],
                "parameters": {**settings, "theta_margins": (0.0,)},
            }
        )
    return jobs


def _certified_record(job: dict, trajectory: str, ts: float, run: int, record: dict) -> dict:
    """Run one model's certified checks (`certified.certify_model`) into its record."""
    names = record["names"]
    parameters = job["parameters"]
    if job["name"] == certified.ACCEPTED_MODEL:
        beta = load_parameters(job["inputs"][0], names).values  # the accepted model file
        worst = min(record["final_audits"], key=lambda a: a["lambda_min"])["worst_pose_rad"]
        checks = certified.certify_model(
            beta,
            parameters["theta_margins"],
            parameters["max_boxes"],
            near_pose=worst,
            near_margins=parameters["near_margins"],
            half_width_deg=parameters["half_width_deg"],
        )
    else:
        checks = certified.certify_model(
            record["refined"], parameters["theta_margins"], parameters["max_boxes"]
        )
    return {
        "model": job["name"],
        "trajectory": trajectory,
        "ts": ts,
        "run": run,
        "inputs": [portable(p) for p in job["inputs"]],
        **parameters,
        "checks": checks,
    }


def certified_step(
    profile: str,
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    max_boxes: int = CERTIFY_MAX_BOXES,
    accepted_dir=None,
    directory=None,
) -> keys.StepLog:
    """Beyond the paper: the certified check over Θ of the models chapter 06 certifies, one record
    per model (results/certified/), each unless its stored key matches."""
    csv_path, json_path = accepted_stage.accepted_paths(trajectory, ts, run, accepted_dir)
    for path in (csv_path, json_path):
        if not path.is_file():
            raise InputError(str(path), "no accepted model to certify", accepted_stage.MAKE_STEP)
    record = read_json_record(json_path)
    store = keys.KeyStore("certified", None if directory is None else Path(directory).parent)
    log = keys.StepLog("certified check over Θ")
    code = keys.code_parts(modules=STEP_MODULES["certified"])
    for job in certified_jobs(profile, record, csv_path, json_path, max_boxes):
        path = certified.record_path(trajectory, ts, run, job["name"], directory)
        key = keys.record_key(inputs=job["inputs"], parameters=job["parameters"], code=code)
        reasons = store.stale(path.stem, key, outputs=[path])
        log.note(reasons)
        if not reasons:
            continue
        started = time.perf_counter()
        write_json_record(path, _certified_record(job, trajectory, ts, run, record))
        store.store(path.stem, key)
        print(f"certified check, {job['name']}: {time.perf_counter() - started:.0f} s; {path}")
    return log


def audit_study_step(
    profile: str | None = None,
    trajectory: str = REPRESENTATIVE["trajectory"],
    ts: float = REPRESENTATIVE["ts"],
    run: int = REPRESENTATIVE["run"],
    directory=None,
) -> keys.StepLog:
    """Chapter 06's audit study of the representative condition (`acceptance.all_pose`: Table
    IX's audits over every seed, the manufacturer's box, Table X, where the violations lie), one
    record (results/audit_study/) unless its stored key matches; after the accepted model, the
    rescues, the audits and the certified steps, whose records it reads; the build's other
    conditions are the profile's (all when None)."""
    seeds = list(accepted_stage.AUDIT_SEEDS)
    key = keys.record_key(
        inputs=all_pose.input_files(trajectory, ts, run, profile),
        parameters={"trajectory": trajectory, "ts": ts, "run": run, "seeds": seeds},
        modules=STEP_MODULES["audit_study"],
    )
    path = all_pose.record_path(trajectory, ts, run, directory)
    store = keys.KeyStore("audit_study", None if directory is None else Path(directory).parent)
    log = keys.StepLog("audit study")
    reasons = store.stale(path.stem, key, outputs=[path])
    log.note(reasons)
    if reasons:
        started = time.perf_counter()
        write_json_record(path, all_pose.study_record(trajectory, ts, run, seeds, profile))
        store.store(path.stem, key)
        print(f"audit study: {time.perf_counter() - started:.0f} s; {path}")
    return log


def _report(name: str, outcomes: sweep.SweepReport) -> None:
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"{name}: condition {o.name} failed: {o.error}", file=sys.stderr)
    where = getattr(outcomes, "executor", "local")
    wall = getattr(outcomes, "wall_s", 0.0)
    print(f"{outcomes.log.line()}; {len(failed)} failed ({where}, {wall:.0f} s)")


def run_steps(args, clock: BuildClock) -> None:
    """The main job's data steps in order, each timed by `clock`."""
    with clock.step("twin data set"):
        dataset.build(args.profile, jobs=args.jobs)
    # DIDIM reads the recording alone (and takes about a minute on one core): it starts here,
    # in a process of its own beside the sweeps, and fills the cores their pools leave idle
    # (serial steps, a sweep's last conditions); the side-by-side step collects it and reaps its
    # process, so its CPU time is counted there
    early = None
    if args.jobs > 1 and args.scheduler is None:
        early = worker_pool(1)
        didim = early.submit(didim_step, args.profile)
    try:
        _steps_after_the_data_set(args, clock, None if early is None else (early, didim))
    finally:
        if early is not None:
            early.shutdown(wait=True)


def _steps_after_the_data_set(args, clock: BuildClock, early) -> None:
    """Every step after the twin data set; `early`: (pool, future) of DIDIM started before."""
    for name, notebook in SWEEPS:
        with clock.step(f"{name} sweep"):
            _report(name, condition_sweep(name, notebook, args.profile, args.jobs, args.scheduler))
    with clock.step("accepted model"):
        print(accepted_model_step(args.profile, args.jobs).line())
    with clock.step("validation bundles"):
        print(f"validation bundles: {validation_bundles_step(args.profile)} executions of V01-V03")
    with clock.step("twin calibration"):
        print(twin_calibration_step(args.profile).line())
    with clock.step("repeats sweep"):
        _report("repeats", repeats_sweep(args.profile, args.jobs, args.scheduler))
    with clock.step("kt_draws sweep"):
        _report("kt_draws", kt_sweep(args.profile, args.jobs, args.scheduler))
    with clock.step("Kt study"):
        print(kt_study_step().line())
    with clock.step("export"):
        print(export_step().line())
    with clock.step("nonideality sweep"):
        _report("nonideality", nonideality_sweep(args.profile, args.jobs, args.scheduler))
    with clock.step("Beyond OLS"):
        print(beyond_ols_step(args.profile, jobs=args.jobs).line())
    for name in args.study:
        with clock.step(f"study {name}"):
            study = condition_sweep(name, STUDIES[name], args.profile, args.jobs, args.scheduler)
            _report(name, study)
    # each of these runs in one process and none reads another's record: side by side, the
    # longest first (the pool takes them in this order)
    independent = [
        (certified_step, (args.profile,)),
        (other_arms_step, (args.profile,)),
        (your_arm_step, ()),
        (torque_scale_step, ()),
        (rescues_step, ()),
        (epsilon_ladder_step, (args.profile,)),
        (ols_audits_step, (args.profile,)),
    ]
    if early is None:
        independent.insert(0, (didim_step, (args.profile,)))
    with clock.step(
        "DIDIM, the ε ladder, certified check, rescues, other arms, audits (side by side)"
    ):
        for log in side_by_side(independent, args.jobs if args.scheduler is None else 1):
            print(log.line())
        if early is not None:
            pool, didim = early
            print(didim.result().line())
            pool.shutdown(wait=True)
    # these read the records of the steps above and none reads another's: side by side too
    readers = [
        (yoshida_khalil_step, (args.profile,)),
        (peer_tools_step, (args.profile,)),
        (replay_step, (args.profile,)),
        (audit_study_step, (args.profile,)),
    ]
    with clock.step("Yoshida-Khalil, other tools, replay, audit study (side by side)"):
        for log in side_by_side(readers, args.jobs if args.scheduler is None else 1):
            print(log.line())
    with clock.step("claims"):
        print(claims.write_claims(args.profile).line())
    with clock.step("downloads"):
        made = downloads.bundle_all(args.profile)
        print(f"downloads: {', '.join(p.name for p in made.values()) or 'none'}")


def main(argv=None) -> int:
    """Run the main job's data steps (and the named studies); exit status 2 for a bad option or
    scheduler."""
    parser = options.Parser(
        prog="python -m crane_book.pipeline", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--profile", choices=dataset.PROFILES, default="full")
    parser.add_argument(
        "--jobs",
        default="2",
        help=f"local processes, 1 to {options.MAX_JOBS} (without --scheduler)",
    )
    parser.add_argument(
        "--scheduler",
        help="address of a Dask distributed scheduler (tcp://host:8786); "
        f"default: ${sweep.SCHEDULER_ENV}, else the local process pool",
    )
    parser.add_argument(
        "--scheduler-timeout",
        default=str(sweep.CONNECT_TIMEOUT_S),
        help=f"seconds to wait for the scheduler (above 0, at most {options.MAX_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--study",
        choices=sorted(STUDIES),
        action="append",
        default=[],
        help="run this study's sweep after the main job's steps (repeatable)",
    )
    args = parser.parse_args(argv)
    # every value checked before any work, the environment's default of --scheduler and the
    # twin profile too
    args.jobs = options.checked(parser, "--jobs", args.jobs, options.jobs)
    options.checked_environment(parser, "CRANE_TWIN", options.twin_name, "default")
    source = ""
    if args.scheduler is None and os.environ.get(sweep.SCHEDULER_ENV):
        args.scheduler, source = os.environ[sweep.SCHEDULER_ENV], sweep.SCHEDULER_ENV
    if args.scheduler is not None:
        args.scheduler = options.checked(
            parser, "--scheduler", args.scheduler, options.scheduler_address, source
        )
    args.scheduler_timeout = options.checked(
        parser, "--scheduler-timeout", args.scheduler_timeout, options.timeout_seconds
    )
    if args.scheduler:
        # before any work: reachable, same crane_lib on every worker, results folder shared
        try:
            sweep.dask_client(args.scheduler, args.scheduler_timeout)
        except sweep.SchedulerError as error:
            print(f"crane pipeline: {error}", file=sys.stderr)
            return EXIT_BAD_SCHEDULER
        # every sweep of this process, other helpers' too
        os.environ[sweep.SCHEDULER_ENV] = args.scheduler
    clock = BuildClock(args.profile, args.jobs)
    try:
        run_steps(args, clock)
    finally:
        clock.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
