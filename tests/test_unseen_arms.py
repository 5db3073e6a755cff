"""An arm nobody here described, on the twin: the Koch low-cost arm's MJCF (Menagerie) described
with XL330-M288 servos records, its log naming the folder, its fingerprint and its axes, and is
accepted; a log of one arm is refused for another; the twin's drive magnitudes come from the servo
catalogue and an unknown field is refused; the gripper sweeps to the side with room; the Panda's
joint 4 (zero outside its range) ends at its range's midpoint."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.errors import InputError
from crane_lib.excitation import arms as excitation_arms
from crane_lib.excitation import commands
from crane_lib.excitation import design as ex
from crane_lib.logs import raw_log
from crane_lib.model import arm_description, describe, servo_catalogue
from crane_lib.twin import truth
from tests.test_describe import LOW_COST_ARM, UNSEEN, write

XL330 = "XL330-M288"


@pytest.fixture(scope="module")
def koch(tmp_path_factory):
    """The Koch arm described with six XL330-M288 (one supply, one current register unit), its
    PI_ALPHA block recorded on the twin by the command line."""
    root = tmp_path_factory.mktemp("koch")
    folder, blocks, log = root / "description", root / "blocks", root / "pi_alpha.npz"
    argv = ["describe", str(LOW_COST_ARM), "--out", str(folder), "--gripper", "gripper"]
    assert cli.main([*argv, "--servos", ",".join([XL330] * 6)]) == 0
    assert cli.main(["excite", "--robot", str(folder), "--out", str(blocks)]) == 0
    command = blocks / "PI_ALPHA.txt"
    assert cli.main(["record", str(command), "--out", str(log), "--robot", str(folder)]) == 0
    return folder, command, log


def test_a_folder_arm_records_and_is_accepted(koch, tmp_path, capsys):
    """The log names the folder, its fingerprint and six axes, reads without the folder, and
    `accept` accepts it (Algorithm 1), the model file carrying the folder's fingerprint."""
    folder, command, log = koch
    recording = raw_log.read_raw_log(log)
    assert recording.arm == str(folder.resolve()) and recording.n_axes == 6
    assert recording.metadata["arm_fingerprint"] == raw_log.folder_fingerprint(folder)
    assert recording.samples.shape[1] == raw_log.n_columns(6)
    catalogue = servo_catalogue.load()
    kt = catalogue.value(XL330, "kt_N_m_per_A")
    np.testing.assert_array_equal(recording.layout.kt, np.full(6, kt))
    # the twin's supply and drive line are the catalogue's XL330 values, not the 12 V tables'
    assert recording.metadata["supply_voltage_V"] == "5"
    stall, no_load, _, _ = truth.motor_line(1, str(folder))
    assert stall == catalogue.value(XL330, "stall_current_A")
    assert no_load == pytest.approx(catalogue.value(XL330, "no_load_speed_rpm") * np.pi / 30)
    # the layout is in the metadata: a log whose folder is gone still reads
    gone = {**recording.metadata, "arm": str(tmp_path / "gone")}
    moved = raw_log.write_raw_log(tmp_path / "moved.npz", recording.samples[:100], gone)
    np.testing.assert_array_equal(raw_log.read_raw_log(moved).layout.kt, recording.layout.kt)
    model = tmp_path / "m.csv"
    argv = ["accept", str(log), "--trajectory", str(command), "--out", str(model)]
    status = cli.main([*argv, "--robot", str(folder)])
    printed = capsys.readouterr().out
    assert status == 0 and "ACCEPTED" in printed, printed
    assert f"provenance.log.arm_fingerprint: {raw_log.folder_fingerprint(folder)}" in (
        model.read_text()
    )


def test_a_log_of_one_arm_is_refused_for_another(koch, tmp_path, capsys):
    """The same folder with one link mass changed is another arm (another fingerprint): accept
    refuses the log, exit 2, nothing written; so does a shipped arm."""
    folder, command, log = koch
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    rows = (other / "links.csv").read_text().splitlines()
    mass = rows[0].split(",").index("mass_kg")
    k = next(k for k, row in enumerate(rows) if k and row.split(",")[mass])  # first massive link
    cells = rows[k].split(",")
    cells[mass] = repr(float(cells[mass]) * 1.1)
    rows[k] = ",".join(cells)
    (other / "links.csv").write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.csv"
    for robot in (str(other), "so101"):
        argv = ["accept", str(log), "--trajectory", str(command), "--out", str(model)]
        assert cli.main([*argv, "--robot", robot]) == 2
        err = capsys.readouterr().err
        assert f"was recorded on the arm {folder.resolve()}" in err, err
        assert not model.exists()


def test_drive_magnitudes_come_from_the_catalogue(monkeypatch, tmp_path):
    """The shipped servos' tables equal the catalogue; the gear-stage rule gives their four
    meshes; a field the catalogue marks unknown is refused naming the servo and the field."""
    catalogue = servo_catalogue.load()
    for model in truth.STALL_TORQUE_N_M:
        sheet = truth.datasheet(model)
        for field, value in sheet.items():
            assert catalogue.value(model, field) == pytest.approx(value), (model, field)
        assert truth.mesh_count(sheet["gear_ratio"]) == truth.GEAR_STAGES[model]
    lines = servo_catalogue.CATALOGUE_CSV.read_text(encoding="utf-8").splitlines()
    field = "XL330-M288,no_load_speed_rpm,"
    assert sum(line.startswith(field) for line in lines) == 1
    lines = [f"{field},rev/min,none,unknown" if x.startswith(field) else x for x in lines]
    edited = tmp_path / "catalogue.csv"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    original = servo_catalogue.load
    monkeypatch.setattr(servo_catalogue, "load", lambda path=edited: original(path))
    truth.datasheet.cache_clear()
    try:
        with pytest.raises(InputError, match="'XL330-M288'.*no_load_speed_rpm is unknown"):
            truth.datasheet(XL330, "koch: axis 1")
    finally:
        truth.datasheet.cache_clear()


def test_servos_of_two_supply_voltages_are_refused(tmp_path):
    """XM430-W350 (12 V) and XL330-M288 (5 V) on one arm: the twin's one supply refuses them."""
    path, options = UNSEEN["low_cost_robot_arm"]
    folder = write(describe.describe(path, **options), tmp_path / "mixed")
    with pytest.raises(InputError, match="XM430-W350 12 V, XL330-M288 5 V"):
        truth.supply_voltage(str(folder))


def test_the_gripper_sweeps_to_the_side_with_room(tmp_path):
    """+δ where the range allows it (the CRANE-X7's hand), -δ where only that side has room (the
    Koch arm's -91.7..1.8°), to the whole degree inside the roomier limit where neither has δ."""
    assert ex.sweep_angles(ex.CRANE_X7_DESIGN.hand_axis, 0.0, None) == [ex.DELTA_DEG, 0.0]
    path, options = UNSEEN["low_cost_robot_arm"]
    arm = arm_description.load_urdf_arm(write(describe.describe(path, **options), tmp_path))
    design = excitation_arms.block_design(arm)
    hand = design.hand_axis
    lo, hi = design.limits_deg[hand - 1]
    assert hi < ex.DELTA_DEG and lo < -ex.DELTA_DEG
    assert ex.sweep_angles(hand, 0.0, None, design) == [-ex.DELTA_DEG, 0.0]
    assert ex.sweep_angles(hand, 0.0, np.array([-30.5, 10.0]), design) == [-30.0, 0.0]
    files = excitation_arms.generate(arm, design)
    gripper = np.concatenate([_degrees(f)[:, hand - 1] for f in files.values()])
    assert gripper.min() == -ex.DELTA_DEG and np.all((lo <= gripper) & (gripper <= hi))


def test_the_panda_ends_at_its_joint_4_midpoint(tmp_path):
    """The Panda's joint 4 (-176..-4°) excludes zero: q̄0 puts it at its range's midpoint, whole
    degrees towards zero; every file ends there and stays inside the limits."""
    path, options = UNSEEN["panda"]
    arm = arm_description.load_urdf_arm(write(describe.describe(path, **options), tmp_path))
    design = excitation_arms.block_design(arm)
    limits = design.limits_deg
    q0 = design.postures["0"]
    assert not limits[3, 0] <= 0.0 <= limits[3, 1]
    assert q0[3] == np.trunc(limits[3].mean()) and limits[3, 0] < q0[3] < limits[3, 1]
    np.testing.assert_array_equal(np.delete(q0, 3), 0.0)
    np.testing.assert_array_equal(design.command_format.final_posture_deg, q0)
    for name, command in excitation_arms.generate(arm, design).items():
        angles = _degrees(command)
        np.testing.assert_array_equal(angles[-1], q0, err_msg=name)
        commands.check_command(command)  # the reader's q̄0 is the same posture
        assert np.all((limits[:, 0] <= angles) & (angles <= limits[:, 1])), name


def _degrees(command) -> np.ndarray:
    """A command file's waypoints in degrees, to the file's three decimals."""
    return np.round(np.degrees(command.waypoints), 3)
