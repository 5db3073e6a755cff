"""crane-id describe: URDF and MJCF files into description folders, checked against Pinocchio
(URDF) and MuJoCo (MJCF) on random states; the SO-101 against its committed folder; bad input."""

from __future__ import annotations

import csv
import io
import tomllib
from pathlib import Path

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.model import arm_description, chain_model, describe
from crane_lib.paths import DATA_DIR, REPO_ROOT
from tests.arm_cases import arm_only, reference_dynamics, relative_error

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

ROBOTS = (
    REPO_ROOT / ".venv/lib/python3.11/site-packages/cmeel.prefix/share/example-robot-data/robots"
)
LOW_COST_ARM = DATA_DIR / "menagerie" / "low_cost_robot_arm" / "low_cost_robot_arm.xml"
XM = ["XM540-W270"] * 3 + ["XM430-W350"] * 4
# the unseen arms: file, describe's options
UNSEEN = {
    "z1": (ROBOTS / "z1_description/urdf/z1.urdf", {"gripper": "jointGripper", "servos": XM}),
    "xarm7": (ROBOTS / "xarm_description/urdf/xarm7.urdf", {"servos": XM}),
    "ur5": (ROBOTS / "ur_description/urdf/ur5_joint_limited_robot.urdf", {"servos": XM[1:]}),
    "panda": (ROBOTS / "panda_description/urdf/panda.urdf", {"tip": "panda_hand", "servos": XM}),
    "vx300s_menagerie": (
        DATA_DIR / "menagerie" / "trossen_vx300s" / "vx300s.xml",
        {"tip": "gripper_link", "servos": ["XM540-W270"] * 5 + ["XM430-W350"]},
    ),
    "low_cost_robot_arm": (
        LOW_COST_ARM,
        {"gripper": "gripper", "servos": ["XM430-W350"] * 2 + ["XL330-M288"] * 4},
    ),
}
N_STATES = 30
TOLERANCE = 1e-9


def write(description, folder: Path) -> Path:
    """The described folder's files written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in description.texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def states(arm, rng, n=N_STATES):
    """q within the limits, velocities and accelerations; the gripper (if any) at rest at 0."""
    limits = arm.joint_limits()
    q = rng.uniform(limits[:, 0], limits[:, 1], (n, arm.n_axes))
    qd, qdd = rng.normal(0, 2, q.shape), rng.normal(0, 5, q.shape)
    if arm.gripper is not None:
        q[:, -1] = qd[:, -1] = qdd[:, -1] = 0.0
    return q, qd, qdd


def no_drives(arm) -> dict[str, float]:
    """The inertial prior with zero rotor inertia and friction on every axis."""
    phi = dict(arm.inertial_prior)
    for a in range(1, arm.n_axes + 1):
        phi[f"IA{a}"] = phi[f"FV{a}"] = phi[f"FS{a}"] = 0.0
    return phi


def mujoco_reference(path: Path, arm, q, qd, qdd):
    """MuJoCo's inverse dynamics and joint-space inertia of the arm joints (the gripper at rest),
    armature, damping, friction and constraints off, gravity the arm's."""
    model = mujoco.MjModel.from_xml_path(str(path))
    model.dof_armature[:] = model.dof_damping[:] = model.dof_frictionloss[:] = 0.0
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    model.opt.gravity[:] = arm.gravity
    data = mujoco.MjData(model)
    dofs = [model.jnt_dofadr[model.joint(j.name).id] for j in arm.joints]
    axes = dofs + ([model.jnt_dofadr[model.joint(arm.gripper).id]] if arm.gripper else [])
    taus, masses = [], []
    full = np.zeros((model.nv, model.nv))
    for qi, qdi, qddi in zip(q, qd, qdd):
        data.qpos[:] = data.qvel[:] = data.qacc[:] = 0.0
        data.qpos[axes], data.qvel[axes], data.qacc[axes] = qi, qdi, qddi
        mujoco.mj_inverse(model, data)
        taus.append(data.qfrc_inverse[dofs].copy())
        mujoco.mj_fullM(model, data, full)
        masses.append(full[np.ix_(dofs, dofs)].copy())
    return np.array(taus), np.array(masses)


def check_errors(key: str, folder: Path, rng, snap: bool = False, source=None) -> dict[str, float]:
    """Relative errors of the described model's M(q) and inverse dynamics against the source
    file read by Pinocchio (URDF) or MuJoCo (MJCF)."""
    path = source or (UNSEEN[key][0] if key in UNSEEN else SOURCES[key])
    arm = arm_description.load_urdf_arm(folder, snap=snap)
    ours = chain_model.ChainModel(arm)
    phi = no_drives(arm)
    q, qd, qdd = states(arm, rng)
    n = arm.n_joints
    if path.suffix == ".xml":
        tau_ref, mass_ref = mujoco_reference(path, arm, q, qd, qdd)
    else:
        model = arm_only(
            pin.buildModelFromUrdf(str(path)), [j.name for j in arm.joints], arm.gravity
        )
        tau_ref, mass_ref = reference_dynamics(model, arm, phi, q, qd, qdd)
        tau_ref, mass_ref = tau_ref[:, :n], mass_ref[:, :n, :n]
    tau = ours.inverse_dynamics(q, qd, qdd, phi)[:, :n]
    mass = ours.inertia_matrix(q, phi)[:, :n, :n]
    return {"M": relative_error(mass, mass_ref), "ID": relative_error(tau, tau_ref)}


SOURCES = {"so101": ROBOTS / "so_arm_description/urdf/so101.urdf"}


@pytest.mark.parametrize("key", sorted(UNSEEN))
def test_described_model_matches_its_source(key, tmp_path, rng):
    """M(q) and inverse dynamics of the described arm equal Pinocchio's / MuJoCo's on its file."""
    path, options = UNSEEN[key]
    folder = write(describe.describe(path, **options), tmp_path / key)
    errors = check_errors(key, folder, rng)
    print(f"{key}: {errors}")
    assert max(errors.values()) < TOLERANCE, errors


def test_the_check_sees_a_moved_origin(tmp_path, rng):
    """A 1 mm change of one joint origin in the described folder is seen (the check can fail)."""
    path, options = UNSEEN["low_cost_robot_arm"]
    description = describe.describe(path, **options)
    text = description.texts["joints.csv"]
    description.texts["joints.csv"] = text.replace("-0.0148,0.0065,0.1083", "-0.0138,0.0065,0.1083")
    assert description.texts["joints.csv"] != text
    folder = write(description, tmp_path / "moved")
    assert max(check_errors("low_cost_robot_arm", folder, rng).values()) > 1e-4


def _rows(text: str) -> list[dict]:
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def test_so101_described_from_the_wheel_equals_the_committed_folder(tmp_path):
    """joints.csv, links.csv and actuators.csv equal data/so101_description's rows; arm.toml's
    facts equal but [bus] (servo IDs and baud are no part of a URDF; book/register_beyond.md),
    the servos' [position_loop] given as the committed folder's (`--position-loop`)."""
    committed = DATA_DIR / "so101_description"
    expected = tomllib.loads((committed / "arm.toml").read_text())
    description = describe.describe(
        SOURCES["so101"],
        gripper="gripper",
        servos=["STS3215-C018"] * 6,
        name="SO-101",
        drive=expected["drive_mode"],
        position_loop=expected["position_loop"],
    )
    for name in ("joints.csv", "links.csv"):
        assert _rows(description.texts[name]) == _rows((committed / name).read_text()), name
    ours = _rows(description.texts["actuators.csv"])
    theirs = _rows((committed / "actuators.csv").read_text())
    numbers = ("kt_N_m_per_A", "current_unit_A", "current_limit_units", "velocity_limit_rad_s")
    assert [[float(r[k]) for k in numbers] for r in ours] == [
        [float(r[k]) for k in numbers] for r in theirs
    ]
    facts = tomllib.loads(description.texts["arm.toml"])
    del expected["bus"]
    for axis in expected["axis"]:
        del axis["ids"]
    assert facts == expected


def test_position_drive_without_its_loop_is_refused():
    """--drive position needs the servos' [position_loop]: the folder's schema refuses it."""
    with pytest.raises(InputError, match="'position' without \\[position_loop\\]"):
        describe.describe(
            SOURCES["so101"], gripper="gripper", servos=["STS3215-C018"] * 6, drive="position"
        )


# ------------------------------------------------------------------ bad input


def _refused(path, match: str, **options) -> InputError:
    with pytest.raises(InputError, match=match) as caught:
        describe.describe(path, **options)
    return caught.value


URDF_HEAD = '<robot name="bad">\n<link name="base"/>\n'
LINK = (
    '<link name="{n}"><inertial><origin xyz="0 0 0.1"/><mass value="{m}"/>'
    '<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial></link>\n'
)
JOINT = (
    '<joint name="{n}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
    '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{extra}</joint>\n'
)
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def _urdf(tmp_path, links, joints, name="arm.urdf") -> Path:
    path = tmp_path / name
    path.write_text(URDF_HEAD + "".join(links) + "".join(joints) + "</robot>\n")
    return path


def _two_link(tmp_path, mass="1", inertia="0.01", kind="revolute", extra=LIMIT, more=()):
    links = [LINK.format(n="l1", m="1", i="0.01"), LINK.format(n="l2", m=mass, i=inertia)]
    joints = [
        JOINT.format(n="j1", t="revolute", p="base", c="l1", extra=LIMIT),
        JOINT.format(n="j2", t=kind, p="l1", c="l2", extra=extra),
        *more,
    ]
    return _urdf(tmp_path, links, joints)


def test_a_good_two_link_urdf_is_described(tmp_path):
    """The bad-input cases below differ from this accepted file in one element each."""
    description = describe.describe(_two_link(tmp_path), servos=["XM430-W350"] * 2)
    assert description.arm_joints == ["j1", "j2"]


def test_neither_urdf_nor_mjcf(tmp_path):
    """An XML file of another kind is refused at its root element."""
    path = tmp_path / "arm.sdf"
    path.write_text('<sdf version="1.6"><model name="x"/></sdf>\n')
    error = _refused(path, "root element <sdf>")
    assert error.where.endswith("arm.sdf:1")


def test_a_branch_without_tip(tmp_path):
    """Two moving subtrees below one link need --tip; with it the chain is found."""
    more = [
        LINK.format(n="l3", m="1", i="0.01"),
    ]
    path = _urdf(
        tmp_path,
        [LINK.format(n="l1", m="1", i="0.01"), LINK.format(n="l2", m="1", i="0.01"), *more],
        [
            JOINT.format(n="j1", t="revolute", p="base", c="l1", extra=LIMIT),
            JOINT.format(n="j2", t="revolute", p="l1", c="l2", extra=LIMIT),
            JOINT.format(n="j3", t="revolute", p="l1", c="l3", extra=LIMIT),
        ],
    )
    error = _refused(path, "link 'l1' branches", servos=["XM430-W350"] * 2)
    assert ":" in error.where and "--tip" in error.expected
    chosen = describe.describe(path, tip="l3", servos=["XM430-W350"] * 2)
    assert chosen.arm_joints == ["j1", "j3"]


def test_a_floating_base(tmp_path):
    """A floating joint (URDF) or a free joint (MJCF) is refused, naming it."""
    path = _two_link(tmp_path, kind="floating", extra="")
    _refused(path, "joint 'j2' is floating", servos=["XM430-W350"] * 2)
    xml = tmp_path / "free.xml"
    xml.write_text(
        '<mujoco><worldbody><body name="b"><freejoint name="free"/>'
        '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>\n'
    )
    _refused(xml, "joint 'free' is floating")


def test_mimic_joint_on_the_chain(tmp_path):
    """A joint that mimics a chain joint is refused; the mimic's line is named."""
    more = [JOINT.format(n="j3", t="revolute", p="l2", c="l3", extra=LIMIT + '<mimic joint="j1"/>')]
    links = [LINK.format(n=n, m="1", i="0.01") for n in ("l1", "l2", "l3")]
    joints = [
        JOINT.format(n="j1", t="revolute", p="base", c="l1", extra=LIMIT),
        JOINT.format(n="j2", t="revolute", p="l1", c="l2", extra=LIMIT),
        *more,
    ]
    path = _urdf(tmp_path, links, joints)
    _refused(path, "mimics", arm_joints=["j1", "j2"], servos=["XM430-W350"] * 2)


MJCF_CHAIN = """<mujoco>
  <worldbody>
    <body name="l1"><joint name="j1" axis="0 0 1" range="-1 1"/>
      <inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>
      <body name="l2" pos="0 0 0.2"><joint name="j2" axis="0 1 0" range="-1 1"/>
        <inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.01"/>
        <site name="s2"/>
      </body>
    </body>
    <body name="other" pos="1 0 0"><site name="s0"/></body>
  </worldbody>
  {extra}
</mujoco>
"""


def test_mjcf_closed_loop_and_tendon(tmp_path):
    """An equality constraint or a tendon on the chain is refused; the plain chain is not."""
    plain = tmp_path / "plain.xml"
    plain.write_text(MJCF_CHAIN.format(extra=""))
    assert describe.describe(plain, servos=["XM430-W350"] * 2).arm_joints == ["j1", "j2"]
    loop = tmp_path / "loop.xml"
    loop.write_text(
        MJCF_CHAIN.format(
            extra='<equality><connect body1="l2" body2="other" anchor="0 0 0"/></equality>'
        )
    )
    _refused(loop, "equality constraint", servos=["XM430-W350"] * 2)
    tendon = tmp_path / "tendon.xml"
    tendon.write_text(
        MJCF_CHAIN.format(
            extra='<tendon><fixed name="t"><joint joint="j1" coef="1"/>'
            '<joint joint="j2" coef="1"/></fixed></tendon>'
        )
    )
    _refused(tendon, "tendon 't' acts on the chain", servos=["XM430-W350"] * 2)


def test_continuous_arm_joint(tmp_path):
    """An arm joint without limits is refused, naming its line."""
    path = _two_link(tmp_path, kind="continuous", extra="")
    error = _refused(path, "arm joint 'j2' has no limits", servos=["XM430-W350"] * 2)
    assert error.where.endswith(":6")


@pytest.mark.parametrize(
    ("mass", "inertia", "match"),
    [
        ("-1", "0.01", "has mass -1 kg"),
        ("0", "0.01", "has mass 0 kg"),
        ("1", "-0.01", "eigenvalues"),
    ],
)
def test_bad_inertials(tmp_path, mass, inertia, match):
    """Mass <= 0 and an indefinite tensor are refused at the link's line."""
    error = _refused(_two_link(tmp_path, mass, inertia), match, servos=["XM430-W350"] * 2)
    assert error.where.endswith(":4")


def test_triangle_inequality(tmp_path):
    """Principal moments 0.01, 0.01, 0.03 (definite, yet no body has them) are refused."""
    path = _two_link(tmp_path)
    text = path.read_text()
    l2 = text.index('<link name="l2">')
    path.write_text(text[:l2] + text[l2:].replace('izz="0.01"', 'izz="0.03"', 1))
    _refused(path, "triangle inequality", servos=["XM430-W350"] * 2)


def test_servo_names_and_count(tmp_path):
    """An unknown servo, and a count other than the axes', are refused naming --servos."""
    path = _two_link(tmp_path)
    _refused(path, "unknown servo 'XM999'", servos=["XM430-W350", "XM999"])
    _refused(path, "1 servos for 2 axes", servos=["XM430-W350"])


VX300S_MJCF = DATA_DIR / "menagerie" / "trossen_vx300s" / "vx300s.xml"


def test_vx300s_from_the_menagerie_equals_the_committed_folder_but_its_rounding(tmp_path):
    """The Menagerie's ViperX: joint transforms exactly the committed folder's, limits within
    3e-6 rad, M(q) and inverse dynamics within 1e-7, no gripper axis (data/menagerie/README.md)."""
    servos = ["XM540-W270"] * 5 + ["XM430-W350"]
    description = describe.describe(VX300S_MJCF, tip="gripper_link", servos=servos)
    ours = arm_description.load_urdf_arm(write(description, tmp_path / "vx300s"))
    committed = arm_description.load_arm("vx300s")
    assert [(j.rotation, j.translation) for j in ours.joints] == [
        (j.rotation, j.translation) for j in committed.joints
    ]
    assert np.max(np.abs(ours.joint_limits() - committed.joint_limits()[:6])) < 3e-6
    assert ours.gripper is None and committed.gripper == "gripper"
    rng = np.random.default_rng(5)
    q, qd, qdd = states(ours, rng)
    extended = [np.hstack([x, np.zeros((len(x), 1))]) for x in (q, qd, qdd)]
    mine, theirs = chain_model.ChainModel(ours), chain_model.ChainModel(committed)
    tau = mine.inverse_dynamics(q, qd, qdd, no_drives(ours))
    tau_ref = theirs.inverse_dynamics(*extended, no_drives(committed))[:, :6]
    mass = mine.inertia_matrix(q, no_drives(ours))
    mass_ref = theirs.inertia_matrix(extended[0], no_drives(committed))[:, :6, :6]
    errors = {"M": relative_error(mass, mass_ref), "ID": relative_error(tau, tau_ref)}
    print(f"vx300s Menagerie against the committed folder: {errors}")
    assert 1e-12 < max(errors.values()) < 1e-7, errors
    assert len(mine.base_names) == len(theirs.base_names) - 3
