"""crane-id describe and crane-id excite on the command line: the SO-101 from example-robot-data's
URDF gives the committed blocks byte for byte; bad input exits 2 with nothing written."""

from __future__ import annotations

import pytest

from crane_lib import cli
from crane_lib.paths import TRAJECTORY_DIR
from tests.test_describe import LOW_COST_ARM, SOURCES

SO101_SERVOS = ",".join(["STS3215-C018"] * 6)


@pytest.fixture(scope="module")
def so101_folder(tmp_path_factory):
    """The SO-101 described from the wheel's URDF by `crane-id describe`."""
    folder = tmp_path_factory.mktemp("so101") / "description"
    argv = ["describe", str(SOURCES["so101"]), "--out", str(folder), "--gripper", "gripper"]
    argv += ["--name", "SO-101"]
    assert cli.main([*argv, "--servos", SO101_SERVOS]) == 0
    return folder


def test_excite_writes_the_committed_blocks(so101_folder, tmp_path, capsys):
    """The described SO-101's blocks equal trajectories/so101/, its rank full."""
    out = tmp_path / "blocks"
    assert cli.main(["excite", "--robot", str(so101_folder), "--out", str(out)]) == 0
    assert "base rank 45/45" in capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in (TRAJECTORY_DIR / "so101").glob("*.txt"))
    for name in names:
        assert (out / name).read_bytes() == (TRAJECTORY_DIR / "so101" / name).read_bytes(), name


def test_excite_refuses_a_folder_with_an_unknown_servo_field(tmp_path, capsys):
    """An XL430-W250 (no current register) stops excite naming the empty column; no files."""
    folder, out = tmp_path / "koch", tmp_path / "blocks"
    servos = ",".join(["XL430-W250"] * 2 + ["XL330-M288"] * 4)
    argv = ["describe", str(LOW_COST_ARM), "--out", str(folder), "--gripper", "gripper"]
    assert cli.main([*argv, "--servos", servos]) == 0
    assert "current_unit_A is unknown" in capsys.readouterr().out
    assert cli.main(["excite", "--robot", str(folder), "--out", str(out)]) == 2
    assert "column 'current_unit_A' is empty" in capsys.readouterr().err
    assert not out.exists()


def test_describe_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    """A file that is no URDF or MJCF: one line naming it, exit 2, no folder."""
    bad, out = tmp_path / "arm.xml", tmp_path / "out"
    bad.write_text("<sdf/>\n")
    assert cli.main(["describe", str(bad), "--out", str(out), "--servos", "XM430-W350"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "arm.xml:1" in err and "root element <sdf>" in err
    assert not out.exists()


def test_describe_writes_the_position_drive_with_its_loop(tmp_path):
    """--drive position --position-loop FILE: arm.toml gets drive_mode and the loop's table."""
    loop = tmp_path / "loop.toml"
    loop.write_text(
        '[position_loop]\nfirmware = "feetech_sts"\np_gain = 16\ni_gain = 0\nd_gain = 32\n'
        "pwm_limit = 1.0\nprofile_velocity_rad_s = 0.0\nprofile_acceleration_rad_s2 = 0.0\n"
        'period_s = 0.001\nsource = "LeRobot so_follower"\n'
    )
    folder = tmp_path / "so101"
    argv = ["describe", str(SOURCES["so101"]), "--out", str(folder), "--gripper", "gripper"]
    argv += ["--servos", SO101_SERVOS, "--drive", "position", "--position-loop", str(loop)]
    assert cli.main(argv) == 0
    text = (folder / "arm.toml").read_text()
    assert 'drive_mode = "position"' in text and "p_gain = 16" in text
    loop.write_text('[position_loop]\nfirmware = "feetech_sts"\n')
    assert cli.main([*argv[:3], str(tmp_path / "other"), *argv[4:]]) == 2
    assert not (tmp_path / "other").exists()


def test_the_described_so101_runs_to_an_exported_model(so101_folder, tmp_path, capsys):
    """describe -> excite -> record (the twin) -> accept -> export, by the command line alone,
    on the shortest recording that identifies the arm (its PI_ALPHA block)."""
    blocks, log, model = tmp_path / "blocks", tmp_path / "pi_alpha.npz", tmp_path / "m.csv"
    robot = ("--robot", str(so101_folder))
    assert cli.main(["excite", *robot, "--out", str(blocks)]) == 0
    command = str(blocks / "PI_ALPHA.txt")
    assert cli.main(["record", command, "--out", str(log), *robot]) == 0
    status = cli.main(["accept", str(log), "--trajectory", command, "--out", str(model), *robot])
    printed = capsys.readouterr().out
    assert status in (0, 1) and ("accepted" in printed or "rejected" in printed), printed
    urdf, mjcf = tmp_path / "m.urdf", tmp_path / "m.xml"
    argv = ["export", str(model), "--urdf", str(urdf), "--mjcf", str(mjcf), *robot, "--nearest"]
    assert cli.main(argv) == 0
    assert urdf.stat().st_size > 0 and mjcf.stat().st_size > 0
