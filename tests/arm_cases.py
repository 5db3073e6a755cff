"""The three arms built in Pinocchio from the same description files the model reads, and the
random states and parameters their comparisons use (tests and benchmarks share them)."""

from __future__ import annotations

import csv

import numpy as np

from crane_lib.model import arm_description
from crane_lib.paths import DATA_DIR

N_STATES = 300


def joint_rows(arm: str):
    """The description's joints (as the model reads them) and its links.csv rows."""
    folder = DATA_DIR / ("crane_x7_description" if arm == "crane_x7" else arm_description.ARMS[arm])
    joints, _ = arm_description.read_urdf_joints(folder, snap=arm != "crane_x7")
    with open(folder / "links.csv", encoding="utf-8") as handle:
        links = [row for row in csv.DictReader(line for line in handle if not line.startswith("#"))]
    return joints, links


def urdf_text(joints, links) -> str:
    """A URDF of the description's joints (as the model reads them) and its links' raw inertials."""
    parts = ['<robot name="arm">']
    for link in links:
        parts.append(f'<link name="{link["link"]}">')
        if link["mass_kg"]:
            if "inertial_roll" in link:
                rpy = " ".join(link[k] for k in ("inertial_roll", "inertial_pitch", "inertial_yaw"))
            else:  # the CRANE-X7's files note the source's rotated inertial frames
                rpy = (
                    "1.570795 0 0"
                    if "rotated rpy=(1.570795 0 0)" in link["frame_note"]
                    else "0 0 0"
                )
            inertia = " ".join(
                f'{k}="{link[k]}"' for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            )
            parts.append(
                f'<inertial><origin xyz="{link["com_x"]} {link["com_y"]} {link["com_z"]}" '
                f'rpy="{rpy}"/><mass value="{link["mass_kg"]}"/><inertia {inertia}/></inertial>'
            )
        parts.append("</link>")
    for j in joints.values():
        parts.append(
            f'<joint name="{j.name}" type="{j.type}"><parent link="{j.parent}"/>'
            f'<child link="{j.child}"/><origin xyz="{" ".join(map(repr, j.xyz))}" '
            f'rpy="{" ".join(map(repr, j.rpy))}"/>'
        )
        if j.axis is not None:
            parts.append(f'<axis xyz="{" ".join(map(repr, j.axis.tolist()))}"/>')
        if j.type in ("revolute", "prismatic"):
            parts.append(f'<limit lower="{j.lower}" upper="{j.upper}" effort="1" velocity="1"/>')
        parts.append("</joint>")
    parts.append("</robot>")
    return "\n".join(parts)


def arm_only(model, arm_joint_names, gravity):
    """Pinocchio model with every joint but the arm's locked at its neutral position."""
    import pinocchio as pin

    lock = [model.getJointId(n) for n in model.names[1:] if n not in arm_joint_names]
    reduced = pin.buildReducedModel(model, lock, pin.neutral(model)) if lock else model
    assert list(reduced.names[1:]) == list(arm_joint_names)
    reduced.gravity.linear = np.asarray(gravity, dtype=float)
    return reduced


def reference_dynamics(model, arm, phi, q, qd, qdd):
    """RNEA and CRBA on the arm plus rotor inertia and friction, the gripper decoupled."""
    import pinocchio as pin

    data = model.createData()
    n = arm.n_joints
    ia, fv, fs = (
        np.array([phi[f"{k}{a}"] for a in range(1, arm.n_axes + 1)]) for k in ("IA", "FV", "FS")
    )
    taus, masses = [], []
    for qi, qdi, qddi in zip(q, qd, qdd):
        tau = np.zeros(arm.n_axes)
        tau[:n] = pin.rnea(model, data, qi[:n], qdi[:n], qddi[:n])
        taus.append(tau + ia * qddi + fv * qdi + fs * np.sign(qdi))
        mass = np.zeros((arm.n_axes, arm.n_axes))
        upper = pin.crba(model, data, qi[:n])
        mass[:n, :n] = np.triu(upper) + np.triu(upper, 1).T
        masses.append(mass + np.diag(ia))
    return np.array(taus), np.array(masses)


def relative_error(ours, reference) -> float:
    """Largest over samples of |ours - reference| / |reference| (Frobenius per sample)."""
    flat = len(reference), -1
    return float(
        np.max(
            np.linalg.norm((ours - reference).reshape(flat), axis=1)
            / np.linalg.norm(reference.reshape(flat), axis=1)
        )
    )


def random_states(arm, rng, n=N_STATES):
    """q within the joint limits, normal velocities and accelerations, (n, n_axes) each."""
    limits = arm.joint_limits()
    q = rng.uniform(limits[:, 0], limits[:, 1], (n, arm.n_axes))
    return q, rng.normal(0, 2, (n, arm.n_axes)), rng.normal(0, 5, (n, arm.n_axes))


def prior_with_drives(arm, rng) -> dict[str, float]:
    """The inertial prior with random rotor inertias and friction on every axis."""
    phi = dict(arm.inertial_prior)
    for a in range(1, arm.n_axes + 1):
        phi[f"IA{a}"], phi[f"FV{a}"], phi[f"FS{a}"] = (
            rng.uniform(1e-3, 1e-2),
            rng.uniform(0, 1),
            rng.uniform(0, 1),
        )
    return phi


def pinocchio_model(name: str, arm):
    """Pinocchio's model of a shipped arm from its description files, the arm joints only."""
    import pinocchio as pin

    joints, links = joint_rows(name)
    return arm_only(
        pin.buildModelFromXML(urdf_text(joints, links)), [j.name for j in arm.joints], arm.gravity
    )
