"""The comparison with the field's tools (`export.peer_tools`): a known standard-parameter set
read back from MuJoCo's compiled MJCF and from FIGAROH's named parameters gives the model's base
parameters exactly; a short sysid run on a tiny recording moves the parameters toward the truth;
an unknown tool, an arm without an exported MJCF and a missing held-out recording are refused in
one line, exit 2, before any tool runs."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.export import peer_tools
from crane_lib.model.arm_description import load_arm
from crane_lib.model.dynamics import model as shared_model
from crane_lib.twin.truth import load_truth, truth_parameters

SYSID_EXTRAS = importlib.util.find_spec("absl") is not None  # mujoco[sysid]'s dependency


def arm_data(arm: str, bundle=None) -> peer_tools.ArmData:
    """The parts of ArmData the maps and the fit read (no recording, no record)."""
    description = None if arm == "crane_x7" else load_arm(arm)
    model = shared_model("reduced", arm=description)
    return peer_tools.ArmData(arm, description, model, None, bundle, [], [], {}, None, None)


def truth_standard(data: peer_tools.ArmData) -> np.ndarray:
    """The twin's truth as the arm's standard vector."""
    truth = load_truth() if data.arm == "crane_x7" else truth_parameters(data.arm)
    return truth.ordered(peer_tools.standard_names(data), "truth")


@pytest.mark.parametrize("arm", ["crane_x7", "so101"])
def test_mujoco_and_figaroh_readings_map_a_known_set_to_its_base_parameters(arm):
    import mujoco

    data = arm_data(arm)
    truth = truth_standard(data)
    expected = peer_tools.base_of(data, truth)
    robot = peer_tools.robot_of(data, truth)
    compiled = mujoco.MjModel.from_xml_string(peer_tools.files.mjcf_text(robot))
    from_mujoco = peer_tools.standard_from_mujoco(data, compiled, robot)
    np.testing.assert_allclose(
        peer_tools.base_of(data, from_mujoco), expected, rtol=1e-9, atol=1e-12
    )
    joints = [j.name for j in robot.axis_joints]
    names = [
        f"{k}_{j}"
        for j in joints
        for k in ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
    ]
    names += [f"{k}_{j}" for k in ("fv", "fs", "Ia") for j in joints]
    named = dict(zip(names, peer_tools.figaroh_vector(data, truth, names, joints)))
    from_figaroh = peer_tools.standard_from_figaroh(data, named, joints)
    np.testing.assert_allclose(
        peer_tools.base_of(data, from_figaroh), expected, rtol=1e-9, atol=1e-12
    )
    # the CRANE-X7's link frames are not its model's frames: the map above moved every link
    if arm == "crane_x7":
        assert all(not np.allclose(p, np.eye(4)) for p in peer_tools.link_poses(data))


def test_link_to_standard_is_the_parallel_axis_theorem():
    pose = np.eye(4)
    pose[:3, 3] = [0.1, -0.2, 0.05]
    mass, com = 2.0, np.array([0.3, 0.1, -0.1])
    central = np.diag([0.01, 0.02, 0.03])
    about_link = central + mass * (com @ com * np.eye(3) - np.outer(com, com))
    row = peer_tools.link_to_standard(mass, mass * com, about_link, pose)
    c = com - pose[:3, 3]
    expected = central + mass * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(row[[0, 3, 5]], np.diag(expected), rtol=1e-12)
    np.testing.assert_allclose(row[6:9], mass * c, rtol=1e-12)


def tiny_recording(data, truth: np.ndarray, seconds: float = 0.6, dt: float = 0.002):
    """The truth's MJCF driven by smooth controls (the SO-101's: goal positions of its servos'
    loop), sampled as a 10 ms bundle with the goal as theta_ref and the actuator torque as tau."""
    import mujoco

    robot = peer_tools.robot_of(data, truth)
    model = mujoco.MjModel.from_xml_string(peer_tools.files.mjcf_text(robot, timestep=dt))
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    state = mujoco.MjData(model)
    every = int(round(peer_tools.SYSID_TS / dt))
    rows = []
    for k in range(int(round(seconds / dt))):
        t = k * dt
        state.ctrl[:] = 0.3 * np.sin(2 * np.pi * (1 + np.arange(model.nu)) * t)
        mujoco.mj_forward(model, state)
        if k % every == 0:
            rows.append(
                (
                    t,
                    state.qpos.copy(),
                    state.qvel.copy(),
                    state.ctrl.copy(),
                    state.actuator_force.copy(),
                )
            )
        mujoco.mj_step(model, state)
    t, q, dq, goal, tau = (np.array(x) for x in zip(*rows))
    return SimpleNamespace(t=t, theta=q, dtheta=dq, theta_ref=goal, tau=tau)


@pytest.mark.skipif(not SYSID_EXTRAS, reason="mujoco.sysid needs the extra mujoco[sysid] (absl)")
@pytest.mark.parametrize("arm", ["crane_x7", "so101"])  # current motors; position actuators
def test_a_short_sysid_run_moves_the_parameters_toward_the_truth(arm):
    data = arm_data(arm)
    truth = truth_standard(data)
    data.sysid_bundle = tiny_recording(data, truth)
    sysid = peer_tools.sysid_module()
    start = peer_tools.with_drive_nominal(data, truth)  # the drive terms off the truth
    robot = peer_tools.robot_of(data, start)
    settings = {"duration_s": 0.5, "chunk_s": 0.5, "timestep_s": 0.002, "max_iters": 2}
    spec = peer_tools.sysid_spec(robot, settings["timestep_s"])
    sequences, compiled = peer_tools.sysid_sequences(sysid, spec, data.sysid_bundle, settings)
    params = peer_tools.sysid_parameters(sysid, spec, compiled, robot, pseudo_default=False)
    residual = sysid.build_residual_fn(
        models_sequences=[sequences], modify_residual=peer_tools.angle_residual, n_threads=1
    )
    fitted, _ = sysid.optimize(
        initial_params=params,
        residual_fn=residual,
        optimizer="mujoco",
        verbose=False,
        max_iters=settings["max_iters"],
    )
    end = peer_tools.standard_from_mujoco(data, sysid.apply_param_modifiers(fitted, spec), robot)
    truth_base = peer_tools.base_of(data, truth)
    before = np.linalg.norm(peer_tools.base_of(data, start) - truth_base)
    after = np.linalg.norm(peer_tools.base_of(data, end) - truth_base)
    assert after < 0.9 * before  # toward the truth, by a tenth at least


# ----------------------------------------------------------------------------- refusals


@pytest.fixture
def no_tool_runs(monkeypatch):
    """Fail the test if any tool is started."""

    def refuse(*args, **kwargs):
        raise AssertionError("a tool ran before the input was checked")

    monkeypatch.setattr(peer_tools, "run_tool", refuse)
    monkeypatch.setattr(peer_tools, "arm_data", refuse)


@pytest.fixture
def inputs_present(tmp_path, monkeypatch):
    """Every input of the CRANE-X7's comparison as an empty file under tmp_path."""
    made = {}

    def present(name):
        path = tmp_path / name
        path.write_text("")
        made[name] = path
        return path

    monkeypatch.setattr(peer_tools, "recording_path", lambda t, r=1: present(f"{t}_run{r}.npz"))
    monkeypatch.setattr(
        peer_tools.artefacts, "export_paths", lambda *a, **k: {"mjcf": present("accepted.xml")}
    )
    monkeypatch.setattr(
        peer_tools.accepted_stage,
        "accepted_paths",
        lambda *a, **k: (present("a.csv"), present("accepted.json")),
    )
    return made


def test_a_complete_request_passes_the_check(inputs_present):
    inputs = peer_tools.check_request("crane_x7", peer_tools.TOOLS, "quick")
    assert inputs.held_out and all(p.is_file() for p in inputs.held_out)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--arm", "crane_x7", "--tool", "matlab"], "unknown tool 'matlab'"),
        (["--arm", "vx300s"], "no exported MJCF"),
        (["--arm", "ur5"], "'ur5': no arm"),
    ],
)
def test_bad_options_are_refused_in_one_line(argv, says, capsys, no_tool_runs, inputs_present):
    assert peer_tools.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_a_missing_held_out_recording_is_refused(capsys, no_tool_runs, inputs_present, monkeypatch):
    present = peer_tools.recording_path
    missing = {"V02"}

    def recording(t, r=1):
        path = present(t, r)
        if t in missing:
            path.unlink()
        return path

    monkeypatch.setattr(peer_tools, "recording_path", recording)
    assert peer_tools.main(["--arm", "crane_x7"]) == 2
    err = capsys.readouterr().err.strip()
    assert "V02_run1.npz: missing: a held-out recording" in err
    assert len(err.splitlines()) == 1
    with pytest.raises(InputError, match="V02"):
        peer_tools.check_request("crane_x7", peer_tools.TOOLS, "quick")


def test_a_missing_exported_mjcf_is_refused(
    capsys, no_tool_runs, inputs_present, tmp_path, monkeypatch
):
    absent = tmp_path / "no_export.xml"
    monkeypatch.setattr(peer_tools.artefacts, "export_paths", lambda *a, **k: {"mjcf": absent})
    assert peer_tools.main(["--arm", "crane_x7"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no_export.xml: missing: the accepted model's exported MJCF" in err
    assert len(err.splitlines()) == 1
