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

Other arms (`arm="vx300s" | "so101"`, arm_description.ARMS): the same rules on the arm's
description, one code path. Links: the description's inertial prior. Drives: the datasheet
tables below hold every servo model the shipped arms use; an axis driven by several servos
(the ViperX's shoulder and elbow) has their summed rotor inertia, friction and torque constant.
The Fig. 1 posture of an arm is its elbow bent 90° (`resonance_posture`). `realization_constants`
derives its joint models (1) from the description where the CRANE-X7 has Table XIX. Every value
and what is unverified: book/register_twin.md. The committed files are the CRANE-X7's only.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib.constants import CONTROL_PERIOD_S, KT_CORRECTION, XM430_W350, XM540_W270
from crane_lib.errors import InputError, atomic_write, checked_csv_rows, parse_integer, parse_number
from crane_lib.model.arm_description import ARMS, ArmDescription, ControllerGains, load_arm
from crane_lib.model.controller import JointModel, RealizationConstants, encoder_noise_gains
from crane_lib.model.dynamics import DynamicModel, arm_key, model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters
from crane_lib.paper_numbers import paper
from crane_lib.paths import DATA_DIR

TWIN_TRUTH_CSV = DATA_DIR / "twin_truth.csv"
TWIN_PLANT_CSV = DATA_DIR / "twin_plant.csv"

TRUTH_SEED = 20240515  # the twin "unit": its torque constants are drawn once with this seed
REFERENCE_SPEED_RAD_S = 1.0  # speed at which the Joint-7 drag is split into Coulomb and viscous
COULOMB_SHARE_OF_DRAG = 0.5
RESONANCE_DAMPING_RATIO = 0.1  # "lightly damped"; Q = 1/(2 zeta) = 5
FIG1_POSTURE = np.radians(
    [0.0, 0.0, 0.0, -90.0, 0.0, 0.0, 0.0, 0.0]
)  # Sec. III-A, the joint-level posture
FIG1_ELBOW_DEG = 90.0  # the Fig. 1 posture bends the elbow by this much, every other axis at zero
CRANE_X7 = "crane_x7"  # the arm key of the twin's own unit (arm_description.ARMS)

# ROBOTIS e-Manual datasheets at 12 V: stall torque (N·m) and stall current (A). Their ratio
# is the catalogue Kt of constants.py (4.1/2.3 = 1.783, 10.6/4.4 = 2.409), a check on both.
# The SO-101's Feetech STS3215-C018 (12 V, 1:345): 30 kg·cm = 2.942 N·m and 2.7 A, the ratings its
# description's actuators.csv carries (kt = 2.942/2.7 = 1.0896), UNVERIFIED against a Feetech
# datasheet inside this project (book/register_twin.md).
STS3215_C018 = "STS3215-C018"
STALL_TORQUE_N_M = {XM430_W350.model: 4.1, XM540_W270.model: 10.6, STS3215_C018: 2.942}
STALL_CURRENT_A = {XM430_W350.model: 2.3, XM540_W270.model: 4.4, STS3215_C018: 2.7}
# Supply-voltage limit. The CRANE-X7 runs its DYNAMIXELs from one 12 V supply (RT Corporation's
# CRANE-X7 specification; 12.0 V is also the recommended input voltage of both actuators, which
# accept 10.0-14.8 V). ROBOTIS e-Manual performance data at 12.0 V: no-load speed 46 rev/min
# (XM430-W350) and 30 rev/min (XM540-W270), with the stall torque and current above. A DC motor
# behind an H-bridge obeys V = R i + k_e ω; the stall point (ω = 0, i = i_stall) gives
# R = V/i_stall, the no-load point (i ≈ 0, ω = ω_nl) gives k_e = V/ω_nl (link side: ω is the
# output-shaft speed, the gear ratio folded into k_e). The no-load current (≈ 0.1 A) is neglected.
# The ViperX 300 S runs the same two models from a 12 V supply (Trossen Robotics); the SO-101's
# C018 is the 12 V version, no-load speed 45 rev/min at 12 V (0.222 s/60°; unverified, as above).
SUPPLY_VOLTAGE_V = 12.0
NO_LOAD_SPEED_RPM = {XM430_W350.model: 46.0, XM540_W270.model: 30.0, STS3215_C018: 45.0}
# data/crane_x7_description/README.md: URDF friction 0.2 on the arm joints, 0.8 on the fingers
HAND_TO_ARM_FRICTION_RATIO = 0.8 / 0.2
# Gear trains (ROBOTIS e-Manual: XM430-W350 353.5:1, XM540-W270 272.5:1, full metal spur
# gears). The number of meshes is not published; four is the count that keeps every mesh in
# the 3:1..6:1 range of compact spur stages (353.5^(1/4) = 4.34, 272.5^(1/4) = 4.06; three
# stages would need 7.1:1 and 6.5:1 meshes, five 3.2:1 and 3.1:1). An assumption, documented.
# The STS3215-C018: 345:1 (its name's suffix), metal spur gears (unverified); the same rule gives
# four meshes (345^(1/4) = 4.31).
GEAR_RATIO = {XM430_W350.model: 353.5, XM540_W270.model: 272.5, STS3215_C018: 345.0}
GEAR_STAGES = {XM430_W350.model: 4, XM540_W270.model: 4, STS3215_C018: 4}
# Efficiency of one lubricated metal spur mesh, load-dependent part: the textbook range is
# 0.95-0.98 per stage (mesh sliding plus load-dependent bearing loss; pure mesh losses of
# precision gears reach 0.98-0.99). The middle of that range, chosen before any twin result.
STAGE_MESH_EFFICIENCY = 0.97

PLANT_COLUMNS = [
    "axis",
    "actuator",
    "kt_logged_N_m_per_A",
    "kt_true_N_m_per_A",
    "stiffness_N_m_per_rad",
    "damping_N_m_s_per_rad",
    "resonance_at_fig1_Hz",
    "gear_stages",
    "stage_mesh_efficiency",
    "efficiency_driving",
    "efficiency_backdriven",
    "supply_voltage_V",
    "stall_current_A",
    "no_load_speed_rad_s",
    "winding_resistance_ohm",
    "back_emf_V_s_per_rad",
]


@lru_cache(maxsize=8)
def twin_arm(arm: str = CRANE_X7) -> ArmDescription:
    """The description of a shipped arm, or of a folder arm (`arm_description.load_arm`: its own
    inertials, actuators and gains), loaded once."""
    return load_arm(arm)


def log_arm(arm: str) -> str | None:
    """The shipped arm's key a twin log of `arm` names: `arm` itself, or for a folder the shipped
    arm whose kinematics it has; None for a folder of another arm (its log names the folder,
    `raw_log.folder_arm_metadata`)."""
    if arm in ARMS:
        return arm
    shipped = [key for key in ARMS if arm_key(load_arm(key)) == arm_key(twin_arm(arm))]
    return shipped[0] if shipped else None


def full_model(arm: str = CRANE_X7) -> DynamicModel:
    """The "full" dynamic model of `arm` (its products of inertia kept): the plant's links."""
    return model("full") if arm == CRANE_X7 else model("full", arm=twin_arm(arm))


def actuator_model(axis: int, arm: str = CRANE_X7) -> str:
    """Servo model of axis `axis` (1-based) of `arm`: a key of the datasheet tables above, or a
    servo of the catalogue (data/servo_catalogue.csv) whose drive fields are sourced."""
    model_name = twin_arm(arm).actuators[axis - 1].model
    if model_name not in STALL_TORQUE_N_M:
        datasheet(model_name, f"{arm}: axis {axis}")  # refused here, naming the unknown field
    return model_name


# the servo catalogue's fields the twin's drive needs, for a servo outside the tables above
DRIVE_FIELDS = ("voltage_V", "stall_torque_N_m", "stall_current_A", "no_load_speed_rpm")
DRIVE_FIELDS += ("gear_ratio",)
LARGEST_MESH_RATIO = 6.0  # compact spur stages run 3:1..6:1 (the rule behind GEAR_STAGES)


def mesh_count(gear_ratio: float) -> int:
    """Spur meshes of a gear train: the fewest whose equal ratios stay within LARGEST_MESH_RATIO
    (the rule that gives GEAR_STAGES' four for 353.5:1, 272.5:1 and 345:1)."""
    return max(1, math.ceil(math.log(gear_ratio) / math.log(LARGEST_MESH_RATIO) - 1e-12))


@lru_cache(maxsize=32)
def datasheet(model_name: str, where: str = "twin") -> dict[str, float]:
    """A servo's drive magnitudes at its rated voltage (DRIVE_FIELDS): the tables above for the
    shipped arms' servos (voltage SUPPLY_VOLTAGE_V), the servo catalogue's sourced values for any
    other; an InputError naming the servo and the field the catalogue marks unknown."""
    if model_name in STALL_TORQUE_N_M:
        values = (SUPPLY_VOLTAGE_V, STALL_TORQUE_N_M[model_name], STALL_CURRENT_A[model_name])
        values += (NO_LOAD_SPEED_RPM[model_name], GEAR_RATIO[model_name])
        return dict(zip(DRIVE_FIELDS, values))
    from crane_lib.model import servo_catalogue

    catalogue = servo_catalogue.load()
    catalogue.require([model_name], where)
    values = {}
    for name in DRIVE_FIELDS:
        value = catalogue.value(model_name, name)
        if value is None:
            raise InputError(
                where,
                f"servo {model_name!r}: the servo catalogue's {name} is unknown "
                f"({catalogue.where}), which the twin's drive needs",
                f"a sourced {name} for {model_name}",
            )
        values[name] = value
    return values


def gear_stages(axis: int, arm: str = CRANE_X7) -> int:
    """Spur meshes of the axis's gear train: GEAR_STAGES, or `mesh_count` of a catalogue servo."""
    model_name = actuator_model(axis, arm)
    if model_name in GEAR_STAGES:
        return GEAR_STAGES[model_name]
    return mesh_count(datasheet(model_name)["gear_ratio"])


def supply_voltage(arm: str = CRANE_X7) -> float:
    """The drives' supply voltage: SUPPLY_VOLTAGE_V, or the one rated voltage of a folder arm's
    catalogue servos (an InputError when they differ: the twin has one supply)."""
    description = twin_arm(arm)
    models = [actuator_model(a, arm) for a in range(1, description.n_axes + 1)]
    volts = {m: datasheet(m)["voltage_V"] for m in models}
    if len(set(volts.values())) > 1:
        raise InputError(
            f"{arm}: actuators",
            "servos rated at different voltages ("
            + ", ".join(f"{m} {v:g} V" for m, v in volts.items())
            + ")",
            "servos of one supply voltage (the twin has one supply)",
        )
    return float(next(iter(volts.values())))


def servos(axis: int, arm: str = CRANE_X7) -> int:
    """Servos that drive axis `axis` together (the ViperX's shoulder and elbow: two)."""
    return twin_arm(arm).actuators[axis - 1].servos


def _size_ratio(axis: int, arm: str = CRANE_X7) -> float:
    """Stall torque of the axis's actuator relative to the XM430-W350."""
    model_name = actuator_model(axis, arm)
    return datasheet(model_name)["stall_torque_N_m"] / STALL_TORQUE_N_M[XM430_W350.model]


def gear_efficiencies(axis: int, arm: str = CRANE_X7) -> tuple[float, float]:
    """(driving, back-driven) efficiency of the axis's gear train.

    Each mesh loses the same share ε = 1/η - 1 of the torque it transmits in either power-flow
    direction (the tooth normal load, hence the sliding friction, follows the transmitted
    torque, not the direction of power flow): driving, input = output (1 + ε) per mesh, i.e. η;
    back-driven, the motor side keeps (1 - ε) = 2 - 1/η per mesh. n meshes in series multiply.
    """
    n, eta = gear_stages(axis, arm), STAGE_MESH_EFFICIENCY
    return eta**n, (2.0 - 1.0 / eta) ** n


def motor_line(axis: int, arm: str = CRANE_X7) -> tuple[float, float, float, float]:
    """(stall current A, no-load speed rad/s, resistance Ω, back-EMF constant V·s/rad at the
    link) of the axis's actuator at its rated voltage (`datasheet`), from the two end points.

    Per servo: an axis driven by several servos has them in parallel, each with its own H-bridge
    and the same current command, so the current bounds are one servo's (the torque is summed
    through the axis's torque constant, servos x kt)."""
    sheet = datasheet(actuator_model(axis, arm))
    stall = sheet["stall_current_A"]
    no_load = sheet["no_load_speed_rpm"] * 2.0 * math.pi / 60.0
    volts = sheet["voltage_V"]
    return stall, no_load, volts / stall, volts / no_load


def drive_parameters(arm: str = CRANE_X7) -> dict[str, float]:
    """IA, FV, FS of every axis of `arm` (link side, true torque).

    The CRANE-X7's rules for any arm: an XM430-W350 rotor and drag as the paper's joint 7, another
    actuator scaled by its stall torque, an axis of several servos by their number, the gripper
    axis's friction by HAND_TO_ARM_FRICTION_RATIO."""
    rotor_xm430 = paper("ia7_accepted").value
    drag_at_reference = KT_CORRECTION / paper("joint7_gain").value * REFERENCE_SPEED_RAD_S  # N·m
    coulomb = COULOMB_SHARE_OF_DRAG * drag_at_reference
    viscous = (1.0 - COULOMB_SHARE_OF_DRAG) * drag_at_reference / REFERENCE_SPEED_RAD_S
    description = twin_arm(arm)
    params = {}
    for axis in range(1, description.n_axes + 1):
        scale = _size_ratio(axis, arm) * servos(axis, arm)
        gripper = axis > description.n_joints
        friction_scale = scale * (HAND_TO_ARM_FRICTION_RATIO if gripper else 1.0)
        params[f"IA{axis}"] = rotor_xm430 * scale
        params[f"FV{axis}"] = viscous * friction_scale
        params[f"FS{axis}"] = coulomb * friction_scale
    return params


def truth_parameters(arm: str = CRANE_X7) -> ParameterSet:
    """The standard parameters of `arm`'s twin (the CRANE-X7: 94), in the arm's standard order:
    the links from the description's inertial prior, the drives from `drive_parameters`."""
    description = twin_arm(arm)
    values = {**description.inertial_prior, **drive_parameters(arm)}
    names = description.standard_parameter_names()
    return ParameterSet(names, np.array([values[n] for n in names]))


# written verbatim as the data file's header, whose lines are the file's own
TRUTH_COMMENT = """Truth parameters of the digital twin (94 standard parameters, SI), written by python -m crane_lib.twin.truth.
Links 1..7 (XX..M): the manufacturer's description data/crane_x7_description/ (RT Corporation, crane_x7_description,
non-commercial licence; see its README) transformed into the MDH link frames, hand and fingers lumped into link 7,
products of inertia kept. IA, FV, FS: chosen from the paper's text and the actuator datasheets, not fitted
(crane_lib/twin/truth.py, book/register_twin.md)."""  # noqa: E501


@dataclass(frozen=True)
class PlantSettings:
    """Per-axis drive settings of the twin that are not dynamic parameters."""

    kt_logged: np.ndarray  # (n_axes,) N·m/A, the torque record's conversion (all servos)
    kt_true: np.ndarray  # (n_axes,) N·m/A
    stiffness: np.ndarray  # (n_joints,) N·m/rad, rotor-link compliance of the arm axes
    damping: np.ndarray  # (n_joints,) N·m·s/rad
    resonance_hz: np.ndarray  # (n_joints,) two-mass resonance at the Fig. 1 posture, joints locked
    efficiency_driving: np.ndarray  # (n_joints,) gear-train efficiency, motor driving the link
    efficiency_backdriven: np.ndarray  # (n_joints,) gear-train efficiency, link back-driving motor
    supply_voltage: float  # V, the drives' supply
    stall_current: np.ndarray  # (n_axes,) A per servo at the supply voltage: V/R
    no_load_speed: np.ndarray  # (n_axes,) rad/s (link) at the supply voltage: V/k_e


def resonance_posture(arm: str = CRANE_X7) -> np.ndarray:
    """The Fig. 1 posture of `arm`: its elbow (`excitation.arms.elbow_joint`) bent by
    FIG1_ELBOW_DEG towards the side its range reaches further, every other axis at zero (the
    CRANE-X7: θ4 = -90°, FIG1_POSTURE)."""
    from crane_lib.excitation.arms import elbow_joint  # the rank tools load sympy; only needed here

    description = twin_arm(arm)
    elbow = elbow_joint(description)
    lower, upper = description.joint_limits()[elbow - 1]
    posture = np.zeros(description.n_axes)
    posture[elbow - 1] = np.radians(-FIG1_ELBOW_DEG if -lower >= upper else FIG1_ELBOW_DEG)
    return posture


def _link_inertia_at(posture: np.ndarray, truth: ParameterSet, arm: str = CRANE_X7) -> np.ndarray:
    """Diagonal of the link-only inertia matrix (rotor inertias removed) at `posture`."""
    full = full_model(arm)
    description = twin_arm(arm)
    link_only = truth.as_dict()
    for axis in range(1, description.n_axes + 1):
        link_only[f"IA{axis}"] = 0.0
    mass = full.inertia_matrix(posture[None, :], full.base_from_standard(link_only))[0]
    return np.diag(mass)[: description.n_joints]


def compute_plant_settings(truth: ParameterSet | None = None, arm: str = CRANE_X7) -> PlantSettings:
    """Drive settings of `arm`'s twin for `truth` (default: the arm's `truth_parameters`)."""
    truth = truth_parameters(arm) if truth is None else truth
    description = twin_arm(arm)
    n_joints, n_axes = description.n_joints, description.n_axes
    kt_logged = np.array([a.kt * a.servos for a in description.actuators])
    rng = np.random.default_rng(TRUTH_SEED)
    low, high = paper("kt_perturbation_range").value, paper("kt_perturbation_range").value_hi
    kt_true = kt_logged * (1.0 + rng.uniform(low / 100.0, high / 100.0, n_axes))
    omega = 2.0 * math.pi * paper("backlash_resonance_freq").value
    link = _link_inertia_at(resonance_posture(arm), truth, arm)
    rotor = np.array([truth[f"IA{j}"] for j in range(1, n_joints + 1)])
    reduced = 1.0 / (1.0 / rotor + 1.0 / link)  # two-mass reduced inertia
    stiffness = omega**2 * reduced
    damping = 2.0 * RESONANCE_DAMPING_RATIO * np.sqrt(stiffness * reduced)
    efficiencies = np.array([gear_efficiencies(j, arm) for j in range(1, n_joints + 1)])
    lines = np.array([motor_line(j, arm) for j in range(1, n_axes + 1)])
    return PlantSettings(
        kt_logged,
        kt_true,
        stiffness,
        damping,
        np.sqrt(stiffness / reduced) / (2.0 * math.pi),
        efficiencies[:, 0],
        efficiencies[:, 1],
        supply_voltage(arm),
        lines[:, 0],
        lines[:, 1],
    )


def controller_m_hat(arm: str) -> np.ndarray:
    """The controller's M̂_j of another arm than the CRANE-X7: the (j, j) entry of the prior's
    link inertia at q̄0 plus the rotor inertia IA_j (kg·m²)."""
    description = twin_arm(arm)
    truth = truth_parameters(arm)
    link = np.zeros(description.n_axes)
    link[: description.n_joints] = _link_inertia_at(np.zeros(description.n_axes), truth, arm)
    return link + np.array([truth[f"IA{a}"] for a in range(1, description.n_axes + 1)])


def controller_gains(arm: str) -> ControllerGains:
    """The arm's realization gains: the description's own, or its encoder-noise rule applied
    to the controller's M̂ and the axes' torque limits (book/register_twin.md)."""
    description = twin_arm(arm)
    if isinstance(description.controller, ControllerGains):
        return description.controller
    limits = np.array([a.torque_limit for a in description.actuators])
    return ControllerGains(
        *encoder_noise_gains(controller_m_hat(arm), limits, description.controller.fraction)
    )


def realization_constants(arm: str) -> RealizationConstants:
    """Per-axis joint models (1) of another arm than the CRANE-X7, derived from its twin's
    description (book/register_twin.md): M̂_j = J_j (`controller_m_hat`), D̂_j = b_j/J_j with b_j
    the drag FV_j + FS_j at the reference speed; the arm's gains (`controller_gains`), current
    register and limits; commands through the description's kt times the servos of the axis."""
    description = twin_arm(arm)
    truth = truth_parameters(arm)
    m_hat = controller_m_hat(arm)
    models, sources = [], []
    dead_time = paper("encoder_read_dispatch_delay").value * 1e-3 + 0.5 * CONTROL_PERIOD_S
    for axis in range(1, description.n_axes + 1):
        inertia = m_hat[axis - 1]
        drag = truth[f"FV{axis}"] + truth[f"FS{axis}"] / REFERENCE_SPEED_RAD_S
        models.append(JointModel(1.0 / drag, inertia / drag, dead_time))  # K_p = 1/b, T_p1 = J/b
        sources.append(
            f"derived from the {description.name} twin's description "
            "(prior M at zero + IA, drag at 1 rad/s)"
        )
    unit = np.array([a.current_unit for a in description.actuators])
    if not np.all(unit == unit[0]):
        raise InputError(
            f"{arm}: actuators",
            "current register units that differ between axes",
            "one register unit per arm",
        )
    gains = controller_gains(arm)
    return RealizationConstants(
        tuple(models),
        tuple(sources),
        gains.k_p,
        gains.k_v,
        gains.k_i,
        np.array([a.kt * a.servos for a in description.actuators]),
        float(unit[0]),
        np.array(
            [round(a.current_limit / a.current_unit) for a in description.actuators], dtype=np.int64
        ),
    )


# written verbatim as the data file's header, whose lines are the file's own
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
delivered current is the commanded one clipped to [(-V - k_e w)/R, (V - k_e w)/R], w the rotor speed (link side)."""  # noqa: E501


def _cell(values: np.ndarray, j: int) -> str:
    """values[j] printed exactly; empty where it has no entry j (a joint column, the gripper)."""
    return repr(float(values[j])) if j < len(values) else ""


def format_plant_settings(settings: PlantSettings, arm: str = CRANE_X7) -> str:
    """The drive settings as the CSV text of data/twin_plant.csv."""
    buffer = io.StringIO()
    comment = PLANT_COMMENT.format(
        seed=TRUTH_SEED, hz=paper("backlash_resonance_freq").value, zeta=RESONANCE_DAMPING_RATIO
    )
    for line in comment.splitlines():
        buffer.write(f"# {line}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PLANT_COLUMNS)
    n_joints = twin_arm(arm).n_joints
    for j in range(len(settings.kt_logged)):
        link = j < n_joints
        model_name = actuator_model(j + 1, arm)
        voltage = settings.supply_voltage
        writer.writerow(
            [
                j + 1,
                model_name,
                _cell(settings.kt_logged, j),
                _cell(settings.kt_true, j),
                _cell(settings.stiffness, j),
                _cell(settings.damping, j),
                _cell(settings.resonance_hz, j),
                gear_stages(j + 1, arm) if link else "",
                repr(STAGE_MESH_EFFICIENCY) if link else "",
                _cell(settings.efficiency_driving, j),
                _cell(settings.efficiency_backdriven, j),
                repr(float(voltage)),
                _cell(settings.stall_current, j),
                _cell(settings.no_load_speed, j),
                repr(float(voltage / settings.stall_current[j])),
                repr(float(voltage / settings.no_load_speed[j])),
            ]
        )
    return buffer.getvalue()


def load_plant_settings(path=TWIN_PLANT_CSV, arm: str = CRANE_X7) -> PlantSettings:
    """A drive-settings file of `arm`'s twin: one row per axis (errors name the file and line)."""
    path = Path(path)
    rows = []
    for where, row in checked_csv_rows(
        path, PLANT_COLUMNS, "the twin's drive settings (data/twin_plant.csv)"
    ):
        values = [
            parse_number(x, where, "a number", field=name) if x else math.nan
            for x, name in zip(row[2:], PLANT_COLUMNS[2:])
        ]
        if parse_integer(row[0], where, "an axis number", field="axis") != len(rows) + 1:
            raise InputError(where, f"axis {row[0]}", f"axis {len(rows) + 1} (rows in axis order)")
        rows.append(values)
    description = twin_arm(arm)
    if len(rows) != description.n_axes:
        raise InputError(
            str(path), f"{len(rows)} axes", f"{description.n_axes} ({description.name})"
        )
    table = np.array(rows)
    arm = table[: description.n_joints]
    if not (np.all(table[:, :2] > 0) and np.all(arm[:, 2:4] > 0)):
        raise InputError(
            str(path), "a torque constant, stiffness or damping is not positive", "positive values"
        )
    if not np.all((arm[:, 7:9] > 0) & (arm[:, 7:9] <= 1)):
        raise InputError(str(path), "a gear efficiency outside (0, 1]", "efficiencies in (0, 1]")
    motor = table[:, 9:12]
    if not (np.all(motor > 0) and np.all(motor[:, 0] == motor[0, 0])):
        raise InputError(
            str(path),
            "a supply voltage, stall current or no-load speed is not positive, or the voltages "
            "differ",
            "positive values, one supply voltage",
        )
    return PlantSettings(
        table[:, 0],
        table[:, 1],
        arm[:, 2],
        arm[:, 3],
        arm[:, 4],
        arm[:, 7],
        arm[:, 8],
        float(motor[0, 0]),
        motor[:, 1],
        motor[:, 2],
    )


def check_physical(truth: ParameterSet, source: str = "truth", arm: str = CRANE_X7) -> None:
    """Raise InputError unless the standard parameters of `arm` (the CRANE-X7: 94) describe
    physical bodies and drives: per arm link a positive mass and a positive definite
    pseudo-inertia matrix [[tr(I)/2 E - I, h], [h^T, m]] (I about the frame origin, h the first
    moments; Wensing, Kim and Slotine 2017: the density realizability condition), per axis a
    positive rotor inertia and non-negative viscous and Coulomb friction."""
    value = truth.as_dict()
    description = twin_arm(arm)
    for j in range(1, description.n_joints + 1):
        mass = value[f"M{j}"]
        if not mass > 0:
            raise InputError(f"{source}: M{j}", f"mass {mass:g} kg", "a positive mass")
        inertia = np.array(
            [
                [value[f"XX{j}"], value[f"XY{j}"], value[f"XZ{j}"]],
                [value[f"XY{j}"], value[f"YY{j}"], value[f"YZ{j}"]],
                [value[f"XZ{j}"], value[f"YZ{j}"], value[f"ZZ{j}"]],
            ]
        )
        first = np.array([value[f"MX{j}"], value[f"MY{j}"], value[f"MZ{j}"]])
        pseudo = np.zeros((4, 4))
        pseudo[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
        pseudo[:3, 3] = pseudo[3, :3] = first
        pseudo[3, 3] = mass
        smallest = float(np.linalg.eigvalsh(pseudo)[0])
        if not smallest > 0:
            raise InputError(
                f"{source}: link {j}",
                f"XX{j}..M{j} are not a physical body (pseudo-inertia lambda_min {smallest:.3g})",
                "a positive definite pseudo-inertia: inertia about the origin consistent with mass "
                "and first moments",
            )
    for axis in range(1, description.n_axes + 1):
        if not value[f"IA{axis}"] > 0:
            raise InputError(
                f"{source}: IA{axis}",
                f"rotor inertia {value[f'IA{axis}']:g} kg·m^2",
                "a positive rotor inertia",
            )
        for kind in ("FV", "FS"):
            if value[f"{kind}{axis}"] < 0:
                raise InputError(
                    f"{source}: {kind}{axis}",
                    f"friction {value[f'{kind}{axis}']:g}",
                    "non-negative friction",
                )


def load_truth(path=TWIN_TRUTH_CSV, arm: str = CRANE_X7) -> ParameterSet:
    """A truth file: all standard parameters of `arm` (the CRANE-X7: 94), physical bodies and
    drives (errors name the file and the line or parameter; see `check_physical`)."""
    truth = load_parameters(path, expected_names=twin_arm(arm).standard_parameter_names())
    check_physical(truth, str(path), arm)
    return truth


def write_truth_files(truth_path=TWIN_TRUTH_CSV, plant_path=TWIN_PLANT_CSV) -> None:
    """Write the twin's truth parameters and drive settings."""
    truth = truth_parameters()
    save_parameters(truth_path, truth, comment=TRUTH_COMMENT)
    with atomic_write(plant_path, encoding="utf-8", newline="\n") as handle:
        handle.write(format_plant_settings(compute_plant_settings(truth)))


def main(argv=None) -> None:
    """Write the truth files from the command line."""
    parser = argparse.ArgumentParser(
        description="Write the twin's truth parameters and drive settings."
    )
    parser.add_argument("--truth", type=Path, default=TWIN_TRUTH_CSV)
    parser.add_argument("--plant", type=Path, default=TWIN_PLANT_CSV)
    args = parser.parse_args(argv)
    write_truth_files(args.truth, args.plant)
    print(f"wrote {args.truth} and {args.plant}")


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------- options for the torque-scale
# and payload checks (additive: the default twin above is untouched by them)


def rigid_body_parameters(
    arm: str, mass: float, com: np.ndarray, inertia: np.ndarray | None = None
) -> dict[str, float]:
    """XXn..Mn of a rigid body fixed to `arm`'s last link n, in frame n about O_n: first moments
    m c, inertia I_c + m (|c|^2 E - c c^T) (parallel axes); `com` (m) in frame n, `inertia` about
    the centre of mass in frame-n axes (kg·m^2, default a point mass)."""
    n = twin_arm(arm).n_joints
    c = np.asarray(com, dtype=float).reshape(3)
    tensor = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
    about_origin = tensor + mass * (c @ c * np.eye(3) - np.outer(c, c))
    first = mass * c
    index = {"XX": (0, 0), "XY": (0, 1), "XZ": (0, 2), "YY": (1, 1), "YZ": (1, 2), "ZZ": (2, 2)}
    values = {f"{k}{n}": float(about_origin[i]) for k, i in index.items()}
    values.update({f"MX{n}": first[0], f"MY{n}": first[1], f"MZ{n}": first[2], f"M{n}": mass})
    return {k: float(v) for k, v in values.items()}


def with_payload(
    arm: str,
    mass: float,
    com: np.ndarray,
    inertia: np.ndarray | None = None,
    truth: ParameterSet | None = None,
) -> ParameterSet:
    """`arm`'s truth (default `truth_parameters(arm)`) with a rigid payload fixed to its last
    link (`rigid_body_parameters` added to link n's standard parameters)."""
    base = truth_parameters(arm) if truth is None else truth
    added = rigid_body_parameters(arm, mass, com, inertia)
    values = base.as_dict()
    for name, value in added.items():
        values[name] += value
    return ParameterSet(base.names, np.array([values[n] for n in base.names]))


def with_gain_error(settings: PlantSettings, spread: float, seed: int) -> PlantSettings:
    """Drive settings whose true torque constants are the logged ones times 1 + U(-spread,
    +spread) per axis, drawn with `seed` (a unit whose current-to-torque scale nobody states)."""
    rng = np.random.default_rng(int(seed))
    gain = 1.0 + rng.uniform(-spread, spread, len(settings.kt_logged))
    return replace(settings, kt_true=np.asarray(settings.kt_logged, dtype=float) * gain)
