"""The digital twin's truth: its 94 standard parameters and its per-axis drive settings.

Run ``python -m crane_lib.twin.truth`` to (re)write `data/twin_truth.csv` and
`data/twin_plant.csv`; a test checks that the committed files equal what this writes.

Link parameters (XX..M of links 1..7): the manufacturer's description
(`data/crane_x7_description/`, RT Corporation, non-commercial licence, see its README)
transformed into the MDH link frames by `robot_description.description_standard_parameters`,
hand and fingers lumped into link 7, products of inertia kept.

Drive parameters (rotor inertia IA, viscous FV and Coulomb FS friction, at the link side):
chosen, not fitted, from the paper's text and the actuator datasheets (book/register_twin.md):

* IA of an XM430-W350 axis = the paper's identified IA7 (4.85e-3 kg·m², `ia7_accepted`),
  whose (7,7) entry of M is constant, so it is a direct measurement of the reflected rotor
  inertia of that actuator type. The XM540-W270 (axis 2) scales it by the ratio of the two
  actuators' stall torques (a bigger motor, proportionally bigger reflected inertia).
* Friction: the paper's Joint-7 model (1) has gain K_p,7 = 37.1 (rad/s)/(N·m) at the
  catalogue Kt, i.e. a drag of 1.3/K_p,7 = 0.035 N·m at 1 rad/s at the 1.3-corrected Kt.
  We split that drag equally into Coulomb and viscous parts at 1 rad/s; axis 2 scales it by
  the stall-torque ratio; the hand axis by the description's finger-to-arm friction ratio
  (0.8 / 0.2, README of the description), its gripper linkage adding friction.
* True torque constants: the 1.3-corrected Kt of each axis times 1 + U(-10 %, +10 %), the
  unit-to-unit spread the paper calls realistic (Sec. VII-D), drawn once with TRUTH_SEED.
* Drivetrain compliance: a spring and damper between rotor and link on each arm axis, the
  stiffness chosen so the two-mass resonance at the Fig. 1 posture (θ4 = -90°, others 0,
  other joints locked) sits at the paper's "near 100 Hz" (Sec. III-B); damping ratio
  RESONANCE_DAMPING_RATIO ("lightly damped"). The hand axis has no compliance in the twin.
* Load-dependent gear friction (arm axes): each DYNAMIXEL drive is a multi-stage spur
  gearbox whose mesh losses grow with the transmitted torque. GEAR_STAGES spur meshes per
  drive (an assumption from the gear ratios, see GEAR_STAGES), STAGE_MESH_EFFICIENCY per
  mesh (textbook value for lubricated metal spur gears), the same mesh friction in both
  power-flow directions: driving efficiency η^n, back-driven (2 - 1/η)^n. The twin's no-load
  friction (FS, FV) is kept as it is; these add to it (twin_core.py has the equations).
* Supply-voltage limit (all axes): the drives run at SUPPLY_VOLTAGE_V; the datasheet's stall
  current and no-load speed at that voltage give R = V/i_stall and k_e = V/ω_nl (link side),
  and the current a drive can deliver is bounded by V = R i + k_e ω (twin_core.delivered_torque).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.constants import ACTUATORS, KT, KT_CORRECTION, N_ARM_JOINTS, N_AXES, XM430_W350, XM540_W270
from crane_lib.errors import InputError, atomic_write, checked_csv_rows, parse_integer, parse_number
from crane_lib.model.dynamics import model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters, standard_parameter_names
from crane_lib.model.robot_description import description_standard_parameters
from crane_lib.paper_numbers import paper
from crane_lib.paths import DATA_DIR

TWIN_TRUTH_CSV = DATA_DIR / "twin_truth.csv"
TWIN_PLANT_CSV = DATA_DIR / "twin_plant.csv"

TRUTH_SEED = 20240515  # the twin "unit": its torque constants are drawn once with this seed
REFERENCE_SPEED_RAD_S = 1.0  # speed at which the Joint-7 drag is split into Coulomb and viscous
COULOMB_SHARE_OF_DRAG = 0.5
RESONANCE_DAMPING_RATIO = 0.1  # "lightly damped"; Q = 1/(2 zeta) = 5
FIG1_POSTURE = np.radians([0.0, 0.0, 0.0, -90.0, 0.0, 0.0, 0.0, 0.0])  # Sec. III-A, the joint-level posture

# ROBOTIS e-Manual datasheets at 12 V: stall torque (N·m) and stall current (A). Their ratio
# is the catalogue Kt of constants.py (4.1/2.3 = 1.783, 10.6/4.4 = 2.409), a check on both.
STALL_TORQUE_N_M = {XM430_W350.model: 4.1, XM540_W270.model: 10.6}
STALL_CURRENT_A = {XM430_W350.model: 2.3, XM540_W270.model: 4.4}
# Supply-voltage limit. The CRANE-X7 runs its DYNAMIXELs from one 12 V supply (RT Corporation's
# CRANE-X7 specification; 12.0 V is also the recommended input voltage of both actuators, which
# accept 10.0-14.8 V). ROBOTIS e-Manual performance data at 12.0 V: no-load speed 46 rev/min
# (XM430-W350) and 30 rev/min (XM540-W270), with the stall torque and current above. A DC motor
# behind an H-bridge obeys V = R i + k_e ω; the stall point (ω = 0, i = i_stall) gives
# R = V/i_stall, the no-load point (i ≈ 0, ω = ω_nl) gives k_e = V/ω_nl (link side: ω is the
# output-shaft speed, the gear ratio folded into k_e). The no-load current (≈ 0.1 A) is neglected.
SUPPLY_VOLTAGE_V = 12.0
NO_LOAD_SPEED_RPM = {XM430_W350.model: 46.0, XM540_W270.model: 30.0}
# data/crane_x7_description/README.md: URDF friction 0.2 on the arm joints, 0.8 on the fingers
HAND_TO_ARM_FRICTION_RATIO = 0.8 / 0.2
# Gear trains (ROBOTIS e-Manual: XM430-W350 353.5:1, XM540-W270 272.5:1, full metal spur
# gears). The number of meshes is not published; four is the count that keeps every mesh in
# the 3:1..6:1 range of compact spur stages (353.5^(1/4) = 4.34, 272.5^(1/4) = 4.06; three
# stages would need 7.1:1 and 6.5:1 meshes, five 3.2:1 and 3.1:1). An assumption, documented.
GEAR_RATIO = {XM430_W350.model: 353.5, XM540_W270.model: 272.5}
GEAR_STAGES = {XM430_W350.model: 4, XM540_W270.model: 4}
# Efficiency of one lubricated metal spur mesh, load-dependent part: the textbook range is
# 0.95-0.98 per stage (mesh sliding plus load-dependent bearing loss; pure mesh losses of
# precision gears reach 0.98-0.99). The middle of that range, chosen before any twin result.
STAGE_MESH_EFFICIENCY = 0.97

PLANT_COLUMNS = [
    "axis", "actuator", "kt_logged_N_m_per_A", "kt_true_N_m_per_A", "stiffness_N_m_per_rad",
    "damping_N_m_s_per_rad", "resonance_at_fig1_Hz", "gear_stages", "stage_mesh_efficiency",
    "efficiency_driving", "efficiency_backdriven", "supply_voltage_V", "stall_current_A", "no_load_speed_rad_s",
    "winding_resistance_ohm", "back_emf_V_s_per_rad",
]


def _size_ratio(axis: int) -> float:
    """Stall torque of the axis's actuator relative to the XM430-W350."""
    model = ACTUATORS[axis - 1].model
    return STALL_TORQUE_N_M[model] / STALL_TORQUE_N_M[XM430_W350.model]


def gear_efficiencies(axis: int) -> tuple[float, float]:
    """(driving, back-driven) efficiency of the axis's gear train.

    Each mesh loses the same share ε = 1/η - 1 of the torque it transmits in either power-flow
    direction (the tooth normal load, hence the sliding friction, follows the transmitted
    torque, not the direction of power flow): driving, input = output (1 + ε) per mesh, i.e. η;
    back-driven, the motor side keeps (1 - ε) = 2 - 1/η per mesh. n meshes in series multiply.
    """
    model = ACTUATORS[axis - 1].model
    n, eta = GEAR_STAGES[model], STAGE_MESH_EFFICIENCY
    return eta**n, (2.0 - 1.0 / eta) ** n


def motor_line(axis: int) -> tuple[float, float, float, float]:
    """(stall current A, no-load speed rad/s, resistance Ω, back-EMF constant V·s/rad at the
    link) of the axis's actuator at SUPPLY_VOLTAGE_V, from the datasheet's two end points."""
    model = ACTUATORS[axis - 1].model
    stall = STALL_CURRENT_A[model]
    no_load = NO_LOAD_SPEED_RPM[model] * 2.0 * math.pi / 60.0
    return stall, no_load, SUPPLY_VOLTAGE_V / stall, SUPPLY_VOLTAGE_V / no_load


def drive_parameters() -> dict[str, float]:
    """IA, FV, FS of the eight axes (link side, true torque)."""
    rotor_xm430 = paper("ia7_accepted").value
    drag_at_reference = KT_CORRECTION / paper("joint7_gain").value * REFERENCE_SPEED_RAD_S  # N·m
    coulomb = COULOMB_SHARE_OF_DRAG * drag_at_reference
    viscous = (1.0 - COULOMB_SHARE_OF_DRAG) * drag_at_reference / REFERENCE_SPEED_RAD_S
    params = {}
    for axis in range(1, N_AXES + 1):
        scale = _size_ratio(axis)
        friction_scale = scale * (HAND_TO_ARM_FRICTION_RATIO if axis == N_AXES else 1.0)
        params[f"IA{axis}"] = rotor_xm430 * scale
        params[f"FV{axis}"] = viscous * friction_scale
        params[f"FS{axis}"] = coulomb * friction_scale
    return params


def truth_parameters() -> ParameterSet:
    """The 94 standard parameters of the twin, in the standard order."""
    values = {**description_standard_parameters(), **drive_parameters()}
    names = standard_parameter_names()
    return ParameterSet(names, np.array([values[n] for n in names]))


TRUTH_COMMENT = """Truth parameters of the digital twin (94 standard parameters, SI), written by python -m crane_lib.twin.truth.
Links 1..7 (XX..M): the manufacturer's description data/crane_x7_description/ (RT Corporation, crane_x7_description,
non-commercial licence; see its README) transformed into the MDH link frames, hand and fingers lumped into link 7,
products of inertia kept. IA, FV, FS: chosen from the paper's text and the actuator datasheets, not fitted
(crane_lib/twin/truth.py, book/register_twin.md)."""


@dataclass(frozen=True)
class PlantSettings:
    """Per-axis drive settings of the twin that are not dynamic parameters."""

    kt_logged: np.ndarray  # (8,) N·m/A, the conversion of the torque record
    kt_true: np.ndarray  # (8,) N·m/A
    stiffness: np.ndarray  # (7,) N·m/rad, rotor-link compliance of the arm axes
    damping: np.ndarray  # (7,) N·m·s/rad
    resonance_hz: np.ndarray  # (7,) two-mass resonance at the Fig. 1 posture, joints locked
    efficiency_driving: np.ndarray  # (7,) gear-train efficiency, motor driving the link
    efficiency_backdriven: np.ndarray  # (7,) gear-train efficiency, link back-driving the motor
    supply_voltage: float  # V, the drives' supply
    stall_current: np.ndarray  # (8,) A at the supply voltage: V/R
    no_load_speed: np.ndarray  # (8,) rad/s (link) at the supply voltage: V/k_e


def _link_inertia_at(posture: np.ndarray, truth: ParameterSet) -> np.ndarray:
    """Diagonal of the link-only inertia matrix (rotor inertias removed) at `posture`."""
    full = model("full")
    link_only = truth.as_dict()
    for axis in range(1, N_AXES + 1):
        link_only[f"IA{axis}"] = 0.0
    mass = full.inertia_matrix(posture[None, :], full.base_from_standard(link_only))[0]
    return np.diag(mass)[:N_ARM_JOINTS]


def compute_plant_settings(truth: ParameterSet | None = None) -> PlantSettings:
    truth = truth_parameters() if truth is None else truth
    rng = np.random.default_rng(TRUTH_SEED)
    low, high = paper("kt_perturbation_range").value, paper("kt_perturbation_range").value_hi
    kt_true = KT * (1.0 + rng.uniform(low / 100.0, high / 100.0, N_AXES))
    omega = 2.0 * math.pi * paper("backlash_resonance_freq").value
    link = _link_inertia_at(FIG1_POSTURE, truth)
    rotor = np.array([truth[f"IA{j}"] for j in range(1, N_ARM_JOINTS + 1)])
    reduced = 1.0 / (1.0 / rotor + 1.0 / link)  # two-mass reduced inertia
    stiffness = omega**2 * reduced
    damping = 2.0 * RESONANCE_DAMPING_RATIO * np.sqrt(stiffness * reduced)
    efficiencies = np.array([gear_efficiencies(j) for j in range(1, N_ARM_JOINTS + 1)])
    lines = np.array([motor_line(j) for j in range(1, N_AXES + 1)])
    return PlantSettings(
        KT.copy(), kt_true, stiffness, damping, np.sqrt(stiffness / reduced) / (2.0 * math.pi), efficiencies[:, 0], efficiencies[:, 1],
        SUPPLY_VOLTAGE_V, lines[:, 0], lines[:, 1],
    )


PLANT_COMMENT = """Drive settings of the digital twin, written by python -m crane_lib.twin.truth (see crane_lib/twin/truth.py).
kt_logged: catalogue Kt x 1.3, the conversion of the torque record. kt_true: kt_logged x (1 + U(-10 %, +10 %)), seed {seed}.
stiffness, damping: rotor-link compliance of the arm axes, two-mass resonance {hz:g} Hz at the Fig. 1 posture (joints locked),
damping ratio {zeta:g}. The hand axis (8) is rigid.
gear_stages, stage_mesh_efficiency: spur meshes per drive (assumed from the gear ratio) and the efficiency of one mesh;
efficiency_driving = eta^n, efficiency_backdriven = (2 - 1/eta)^n: load-dependent gear friction (1/eta_driving - 1)|tau|
when the motor drives, (1 - eta_backdriven)|tau| when the link back-drives it, tau the transmitted (spring) torque.
The hand axis has no load-dependent friction (no transmitted torque apart from the motor's in the twin).
supply_voltage_V .. back_emf_V_s_per_rad: the supply-voltage limit of every axis. stall_current (ROBOTIS datasheet at 12 V) and
no_load_speed (datasheet rev/min at 12 V, link side) are its end points; R = V/stall_current, k_e = V/no_load_speed; the
delivered current is the commanded one clipped to [(-V - k_e w)/R, (V - k_e w)/R], w the rotor speed (link side)."""


def format_plant_settings(settings: PlantSettings) -> str:
    buffer = io.StringIO()
    comment = PLANT_COMMENT.format(seed=TRUTH_SEED, hz=paper("backlash_resonance_freq").value, zeta=RESONANCE_DAMPING_RATIO)
    for line in comment.splitlines():
        buffer.write(f"# {line}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PLANT_COLUMNS)
    for j in range(N_AXES):
        arm = j < N_ARM_JOINTS
        writer.writerow(
            [
                j + 1, ACTUATORS[j].model, repr(float(settings.kt_logged[j])), repr(float(settings.kt_true[j])),
                repr(float(settings.stiffness[j])) if arm else "", repr(float(settings.damping[j])) if arm else "",
                repr(float(settings.resonance_hz[j])) if arm else "",
                GEAR_STAGES[ACTUATORS[j].model] if arm else "", repr(STAGE_MESH_EFFICIENCY) if arm else "",
                repr(float(settings.efficiency_driving[j])) if arm else "", repr(float(settings.efficiency_backdriven[j])) if arm else "",
                repr(float(settings.supply_voltage)), repr(float(settings.stall_current[j])), repr(float(settings.no_load_speed[j])),
                repr(float(settings.supply_voltage / settings.stall_current[j])), repr(float(settings.supply_voltage / settings.no_load_speed[j])),
            ]
        )
    return buffer.getvalue()


def load_plant_settings(path=TWIN_PLANT_CSV) -> PlantSettings:
    path = Path(path)
    rows = []
    for where, row in checked_csv_rows(path, PLANT_COLUMNS, "the twin's drive settings (data/twin_plant.csv)"):
        values = [parse_number(x, where, "a number", field=name) if x else math.nan for x, name in zip(row[2:], PLANT_COLUMNS[2:])]
        if parse_integer(row[0], where, "an axis number", field="axis") != len(rows) + 1:
            raise InputError(where, f"axis {row[0]}", f"axis {len(rows) + 1} (rows in axis order)")
        rows.append(values)
    if len(rows) != N_AXES:
        raise InputError(str(path), f"{len(rows)} axes", f"{N_AXES}")
    table = np.array(rows)
    arm = table[:N_ARM_JOINTS]
    if not (np.all(table[:, :2] > 0) and np.all(arm[:, 2:4] > 0)):
        raise InputError(str(path), "a torque constant, stiffness or damping is not positive", "positive values")
    if not np.all((arm[:, 7:9] > 0) & (arm[:, 7:9] <= 1)):
        raise InputError(str(path), "a gear efficiency outside (0, 1]", "efficiencies in (0, 1]")
    motor = table[:, 9:12]
    if not (np.all(motor > 0) and np.all(motor[:, 0] == motor[0, 0])):
        raise InputError(str(path), "a supply voltage, stall current or no-load speed is not positive, or the voltages differ", "positive values, one supply voltage")
    return PlantSettings(table[:, 0], table[:, 1], arm[:, 2], arm[:, 3], arm[:, 4], arm[:, 7], arm[:, 8], float(motor[0, 0]), motor[:, 1], motor[:, 2])


def check_physical(truth: ParameterSet, source: str = "truth") -> None:
    """Raise InputError unless the 94 standard parameters describe physical bodies and drives:
    per arm link a positive mass and a positive definite pseudo-inertia matrix
    [[tr(I)/2 E - I, h], [h^T, m]] (I about the frame origin, h the first moments; Wensing,
    Kim and Slotine 2017: the density realizability condition), per axis a positive rotor
    inertia and non-negative viscous and Coulomb friction."""
    value = truth.as_dict()
    for j in range(1, N_ARM_JOINTS + 1):
        mass = value[f"M{j}"]
        if not mass > 0:
            raise InputError(f"{source}: M{j}", f"mass {mass:g} kg", "a positive mass")
        inertia = np.array([[value[f"XX{j}"], value[f"XY{j}"], value[f"XZ{j}"]],
                            [value[f"XY{j}"], value[f"YY{j}"], value[f"YZ{j}"]],
                            [value[f"XZ{j}"], value[f"YZ{j}"], value[f"ZZ{j}"]]])
        first = np.array([value[f"MX{j}"], value[f"MY{j}"], value[f"MZ{j}"]])
        pseudo = np.zeros((4, 4))
        pseudo[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
        pseudo[:3, 3] = pseudo[3, :3] = first
        pseudo[3, 3] = mass
        smallest = float(np.linalg.eigvalsh(pseudo)[0])
        if not smallest > 0:
            raise InputError(f"{source}: link {j}", f"XX{j}..M{j} are not a physical body (pseudo-inertia lambda_min {smallest:.3g})",
                             "a positive definite pseudo-inertia: inertia about the origin consistent with mass and first moments")
    for axis in range(1, N_AXES + 1):
        if not value[f"IA{axis}"] > 0:
            raise InputError(f"{source}: IA{axis}", f"rotor inertia {value[f'IA{axis}']:g} kg·m^2", "a positive rotor inertia")
        for kind in ("FV", "FS"):
            if value[f"{kind}{axis}"] < 0:
                raise InputError(f"{source}: {kind}{axis}", f"friction {value[f'{kind}{axis}']:g}", "non-negative friction")


def load_truth(path=TWIN_TRUTH_CSV) -> ParameterSet:
    """A truth file: all 94 standard parameters of physical bodies and drives (errors name the
    file and the line or parameter; see `check_physical`)."""
    truth = load_parameters(path, expected_names=standard_parameter_names())
    check_physical(truth, str(path))
    return truth


def write_truth_files(truth_path=TWIN_TRUTH_CSV, plant_path=TWIN_PLANT_CSV) -> None:
    truth = truth_parameters()
    save_parameters(truth_path, truth, comment=TRUTH_COMMENT)
    with atomic_write(plant_path, encoding="utf-8", newline="\n") as handle:
        handle.write(format_plant_settings(compute_plant_settings(truth)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Write the twin's truth parameters and drive settings.")
    parser.add_argument("--truth", type=Path, default=TWIN_TRUTH_CSV)
    parser.add_argument("--plant", type=Path, default=TWIN_PLANT_CSV)
    args = parser.parse_args(argv)
    write_truth_files(args.truth, args.plant)
    print(f"wrote {args.truth} and {args.plant}")


if __name__ == "__main__":
    main()
