"""An arm's description folder is checked field by field before any stage reads it.

tests/arm_description_snapshot.json holds every field of the shipped arms' ArmDescription as
`canonical` text, written by the reader as it was before the schema, from the committed folders;
`python -m tests.test_arm_schema` rewrites it from today's reader (only for a deliberate change
of the shipped data).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.cli.common import robot_of
from crane_lib.errors import InputError
from crane_lib.excitation.arms import read_arm
from crane_lib.excitation.commands import CommandFile, write_command_file
from crane_lib.logs import raw_log
from crane_lib.model import arm_description
from crane_lib.paths import DATA_DIR

SNAPSHOT = Path(__file__).with_name("arm_description_snapshot.json")
SNAPSHOT_CASES = (("vx300s", True), ("so101", True), ("vx300s", False), ("so101", False))


def canonical(value) -> str:
    """An exact, type-tagged text of a description's field (floats by repr, fractions exact)."""
    if dataclasses.is_dataclass(value):
        inner = ", ".join(
            f"{f.name}={canonical(getattr(value, f.name))}" for f in dataclasses.fields(value)
        )
        return f"{type(value).__name__}({inner})"
    if isinstance(value, np.ndarray):
        return f"array({value.dtype}, {value.shape}, {canonical(value.tolist())})"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ", ".join(f"{canonical(k)}: {canonical(v)}" for k, v in items) + "}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}[" + ", ".join(canonical(v) for v in value) + "]"
    if isinstance(value, float):
        return f"float({value!r})"
    if isinstance(value, Fraction):
        return f"Fraction({value})"
    return f"{type(value).__name__}({value!r})"


def _description_fields(arm) -> dict[str, str]:
    """Every field of an ArmDescription as its canonical text."""
    return {f.name: canonical(getattr(arm, f.name)) for f in dataclasses.fields(arm)}


@pytest.mark.parametrize(("key", "snap"), SNAPSHOT_CASES)
def test_the_shipped_folders_load_exactly_as_before_the_schema(key, snap):
    """Every field of the shipped arms' ArmDescription equals the snapshot the reader before the
    schema wrote from the committed folders (tests/arm_description_snapshot.json)."""
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))[f"{key} snap={snap}"]
    arm = arm_description.load_urdf_arm(DATA_DIR / arm_description.ARMS[key], snap=snap)
    fields = _description_fields(arm)
    assert sorted(fields) == sorted(expected)
    for name, text in fields.items():
        assert text == expected[name], f"{key} (snap={snap}): field {name} differs"


def test_the_crane_x7_loads_exactly_as_before_the_schema():
    """The CRANE-X7's description (its arm.toml now read through the schema's UTF-8 reader)
    equals the snapshot, field by field."""
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["crane_x7"]
    fields = _description_fields(arm_description.crane_x7())
    assert sorted(fields) == sorted(expected)
    for name, text in fields.items():
        assert text == expected[name], f"crane_x7: field {name} differs"


# ------------------------------------------------------------------ one refusal per class


def _copy(tmp_path: Path, key: str = "vx300s") -> Path:
    folder = tmp_path / f"{key}_copy"
    shutil.copytree(DATA_DIR / arm_description.ARMS[key], folder)
    return folder


def _edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{name} holds no {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


TOML_CASES = {
    # class: (old text of arm.toml, new text, words the message must hold)
    "root_link missing": ('root_link = "base_link"\n', "", ["'root_link' missing"]),
    "gain not a number": (
        "encoder_noise_fraction = 0.5",
        'k_p = "abc"\nk_v = 60.0\nk_i = 6000.0',
        ["'controller.k_p'", "'abc'", "is a string", "s^-2"],
    ),
    "baud not an integer": (
        "baud = 1000000",
        'baud = "fast"',
        ["'bus.baud'", "'fast'", "an integer", "bit/s"],
    ),
    "baud a float": (
        "baud = 1000000",
        "baud = 1e6",
        ["'bus.baud'", "1000000.0", "is a number", "an integer"],
    ),
    "gravity a word": (
        "gravity_direction = [0, 0, -1]",
        'gravity_direction = "down"',
        ["'gravity_direction'", "'down'", "shape (3,)"],
    ),
    "gravity not along an axis": (
        "gravity_direction = [0, 0, -1]",
        "gravity_direction = [0, 0.6, -0.8]",
        ["'gravity_direction'", "along x, y or z"],
    ),
    "audit domain of the wrong shape": (
        'mounting = "upright"',
        'mounting = "upright"\naudit_domain_rad = [[-1.0, 1.0], [-1.0, 1.0]]',
        ["'audit_domain_rad'", "2 entries", "shape (6, 2)"],
    ),
    "arm joints a string": (
        "arm_joints = [",
        'arm_joints = "waist"\nformer_arm_joints = [',
        ["'arm_joints'", "'waist'", "is a string", "a list"],
    ),
    "unknown key (a typo)": (
        'root_link = "base_link"',
        'root_lnk = "base_link"',
        ["unknown key 'root_lnk'", "root_link", "arm_joints", "gravity_direction"],
    ),
    "unknown key in a table": (
        "encoder_noise_fraction = 0.5",
        "encoder_noise_fractoin = 0.5",
        ["unknown key 'controller.encoder_noise_fractoin'", "controller.encoder_noise_fraction"],
    ),
    "reverse bit not a boolean": (
        "reverse = [true, false]",
        "reverse = [1, 0]",
        ["'axis[2].reverse'", "true or false"],
    ),
    "an ID on two axes": ("ids = [6]", "ids = [1]", ["'axis[4].ids'", "ID 1", "'waist'"]),
    "gripper limits reversed": (
        "gripper_limits_rad = [-3.141592653589793, 3.1400586602237457]",
        "gripper_limits_rad = [1.0, -1.0]",
        ["'gripper_limits_rad'", "lower < upper"],
    ),
    "gripper limits given twice": (
        'mounting = "upright"',  # arm.toml as shipped; joints.csv edited below
        'mounting = "upright"',
        ["'gripper_limits_rad'", "joints.csv:9", "in one place"],
    ),
    "mounting unknown": ('mounting = "upright"', 'mounting = "sideways"', ["'mounting'"]),
    "fraction out of range": (
        "encoder_noise_fraction = 0.5",
        "encoder_noise_fraction = 1.5",
        ["'controller.encoder_noise_fraction'", "out of range", "value <= 1"],
    ),
}


@pytest.mark.parametrize("case", sorted(TOML_CASES))
def test_a_bad_arm_toml_is_refused_naming_file_and_key(tmp_path, case):
    """Each class of bad arm.toml value: one InputError naming arm.toml, the key, the expected."""
    old, new, words = TOML_CASES[case]
    folder = _copy(tmp_path)
    _edit(folder, "arm.toml", old, new)
    if case == "arm joints a string":  # the former list's lines: drop them with their key
        _edit(folder, "arm.toml", "former_arm_joints = [", "# former = [")
    if case == "gripper limits given twice":  # joints.csv gives limits too
        _edit(folder, "joints.csv", "1,0,0,,,3.141592653589793,1", "1,0,0,-3,3,3.141592653589793,1")
    with pytest.raises(InputError) as caught:
        arm_description.load_urdf_arm(folder)
    assert caught.value.where.endswith("arm.toml"), caught.value
    for word in words:
        assert word in str(caught.value), caught.value


CSV_CASES = {
    # class: (file, old text, new text, words the message must hold)
    "a mass that is no number": (
        "links.csv",
        "upper_arm_link,0.792592,",
        "upper_arm_link,heavy,",
        ["links.csv:4", "column 'mass_kg'", "'heavy'", "kg"],
    ),
    "a negative inertia": (
        "links.csv",
        "0.008925,0,0,0.008937",
        "-0.008925,0,0,0.008937",
        ["links.csv:4", "'upper_arm_link'", "indefinite", "positive semi-definite"],
    ),
    "an unknown column": (
        "links.csv",
        "link,mass_kg,",
        "link,mass_kg_,",
        ["links.csv:1", "unknown column 'mass_kg_'", "mass_kg"],
    ),
    "a fixed joint with an axis": (
        "joints.csv",
        "ee_arm,fixed,gripper_link,ee_arm_link,0.042825,0,0,0,0,0,,,,",
        "ee_arm,fixed,gripper_link,ee_arm_link,0.042825,0,0,0,0,0,1,0,0,",
        ["joints.csv:8", "column 'axis_x'", "on a fixed joint"],
    ),
    "an unknown joint type": (
        "joints.csv",
        "waist,revolute,",
        "waist,rotary,",
        ["joints.csv:2", "column 'type'", "'rotary'", "revolute"],
    ),
    "an actuator no axis drives": (
        "actuators.csv",
        "XM430-W350,1.783,",
        "XM430-W350,1.783,0.00269,1193,3.14,x\nXL330,1.783,",
        ["actuators.csv:10", "'XL330'", "drives no [[axis]]"],
    ),
    "a torque constant of zero": (
        "actuators.csv",
        "XM430-W350,1.783,",
        "XM430-W350,0,",
        ["actuators.csv:9", "column 'kt_N_m_per_A'", "> 0"],
    ),
    "a link in no joint": (
        "links.csv",
        "ee_gripper_link,",
        "ee_gripper_lnk,",
        ["links.csv:15", "'ee_gripper_lnk'", "a link of joints.csv"],
    ),
}


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_a_bad_csv_cell_is_refused_naming_file_line_and_column(tmp_path, case):
    """Each class of bad CSV cell: one InputError naming the file:line, the column, the expected."""
    name, old, new, words = CSV_CASES[case]
    folder = _copy(tmp_path)
    _edit(folder, name, old, new)
    with pytest.raises(InputError) as caught:
        arm_description.load_urdf_arm(folder)
    for word in words:
        assert word in str(caught.value), caught.value


@pytest.mark.parametrize("name", ["arm.toml", "links.csv"])
def test_a_latin1_file_is_refused_naming_file_and_line(tmp_path, name):
    """A folder file in Latin-1 (not UTF-8): refused naming the file and the line of the byte."""
    folder = _copy(tmp_path)
    path = folder / name
    data = path.read_bytes()
    first = data.index(b"\n") + 1  # a comment in Latin-1 as the second line
    path.write_bytes(data[:first] + "# Müller\n".encode("latin-1") + data[first:])
    with pytest.raises(InputError) as caught:
        arm_description.load_urdf_arm(folder)
    assert caught.value.where.endswith(f"{name}:2"), caught.value
    assert "not UTF-8" in str(caught.value), caught.value


def test_robot_option_with_an_empty_value_names_the_option(tmp_path, capsys, monkeypatch):
    """`--robot ''` names no folder (not 'arm.toml: missing' of the working folder): refused
    by robot_of, and `crane-id record --robot ''` exits 2 writing nothing."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as caught:
        robot_of("")
    assert caught.value.where == "--robot ''" and "names no arm and no folder" in str(caught.value)
    out = tmp_path / "log.npz"
    assert cli.main(["record", str(tmp_path / "X.txt"), "--out", str(out), "--robot", ""]) == 2
    err = capsys.readouterr().err
    assert "--robot '': names no arm and no folder" in err and "arm.toml" in err, err
    assert not out.exists()


# ------------------------------------------------------------------ a folder's twin


def _short_vx300s_command(folder: Path) -> Path:
    """Out to the first pose of the ViperX's PI_ALPHA and back (about 3 s of motion)."""
    cmd = read_arm("vx300s")["PI_ALPHA"]
    rows = [0, 1, 0, 0]
    short = CommandFile(
        "SHORT",
        cmd.waypoints[rows],
        np.array([75.0, 75.0, 75.0, 20.0]),
        command_format=cmd.command_format,
    )
    return write_command_file(folder / "SHORT.txt", short)


def test_the_twin_of_a_folder_arm_uses_the_folders_inertials(tmp_path):
    """`crane-id record --robot FOLDER`: a ViperX copy whose upper arm weighs 5 kg records
    another log than the shipped arm (its own truth and controller), a plain copy the same
    samples; both logs name the shipped arm, the truth names the folder."""
    command = _short_vx300s_command(tmp_path)
    heavy = _copy(tmp_path)
    _edit(heavy, "links.csv", "upper_arm_link,0.792592,", "upper_arm_link,5,")
    plain = tmp_path / "plain"
    shutil.copytree(DATA_DIR / arm_description.ARMS["vx300s"], plain)
    logs = {}
    for name, robot in (("shipped", "vx300s"), ("heavy", str(heavy)), ("plain", str(plain))):
        out = tmp_path / f"{name}.npz"
        assert cli.main(["record", str(command), "--out", str(out), "--robot", robot]) == 0
        logs[name] = raw_log.read_raw_log(out)
    assert {log.arm for log in logs.values()} == {"vx300s"}
    np.testing.assert_array_equal(logs["plain"].samples, logs["shipped"].samples)
    shipped, other = logs["shipped"], logs["heavy"]
    assert other.samples.shape != shipped.samples.shape or not np.array_equal(
        other.samples, shipped.samples
    )
    assert str(heavy) in other.metadata["truth_file"]
    m_hat = [float(v) for v in other.metadata["realization_M_hat"].split()]
    shipped_m_hat = [float(v) for v in shipped.metadata["realization_M_hat"].split()]
    assert m_hat[1] > shipped_m_hat[1]  # the shoulder carries the heavier upper arm


def write_snapshot() -> None:
    """Rewrite the snapshot from today's reader (a deliberate change of the shipped data only)."""
    cases = {f"{key} snap={snap}": (key, snap) for key, snap in SNAPSHOT_CASES}
    snapshot = {
        name: _description_fields(
            arm_description.load_urdf_arm(DATA_DIR / arm_description.ARMS[key], snap=snap)
        )
        for name, (key, snap) in cases.items()
    }
    snapshot["crane_x7"] = _description_fields(arm_description.crane_x7())
    SNAPSHOT.write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_snapshot()
