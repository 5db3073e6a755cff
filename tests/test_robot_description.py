"""Geometry of the MDH table against the manufacturer's description, and bad MDH files."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.model import robot_description
from crane_lib.paper_numbers import paper


def test_mdh_axes_coincide_with_the_description():
    for row in robot_description.geometry_check():
        assert row["axis_angle_deg"] < 1e-9, row
        assert row["line_distance_m"] < 1e-12, row


def test_offsets_reproduce_table_i_and_the_two_urdf_offsets():
    rows = {r["joint"]: r for r in robot_description.geometry_check()}
    assert rows[4]["mdh_origin_height_m"] - rows[2]["mdh_origin_height_m"] == pytest.approx(
        paper("dh_offset_rl3").value, abs=1e-12
    )
    assert rows[6]["mdh_origin_height_m"] - rows[4]["mdh_origin_height_m"] == pytest.approx(
        paper("dh_offset_rl5").value, abs=1e-12
    )
    placement = robot_description.place_mdh_frames()
    assert placement.base_in_description[2, 3] == pytest.approx(
        paper("urdf_joint1_rise").value, abs=1e-12
    )
    assert rows[7]["origin_offset_m"] == pytest.approx(paper("urdf_z7_offset").value, abs=1e-12)


def test_wrong_alpha_sign_is_detected(tmp_path):
    """The geometry check can fail: flipping alpha2 turns joint 2 about +y instead of the
    description's -y."""
    text = robot_description.MDH_TABLE_CSV.read_text().replace("2,1,0,90,", "2,1,0,-90,")
    path = tmp_path / "flipped.csv"
    path.write_text(text)
    rows = robot_description.geometry_check(robot_description.load_mdh_table(path))
    assert rows[1]["axis_angle_deg"] == pytest.approx(180.0)


def test_description_masses_are_lumped():
    params = robot_description.description_standard_parameters()
    # link 7 carries the gripper base and both fingers
    assert params["M7"] == pytest.approx(0.121 + 0.0158 + 0.0139)
    assert params["M2"] == pytest.approx(0.136)
    # the inertia tensor about O_j stays positive definite
    for j in range(1, 8):
        tensor = np.array(
            [
                [params[f"XX{j}"], params[f"XY{j}"], params[f"XZ{j}"]],
                [params[f"XY{j}"], params[f"YY{j}"], params[f"YZ{j}"]],
                [params[f"XZ{j}"], params[f"YZ{j}"], params[f"ZZ{j}"]],
            ]
        )
        assert np.linalg.eigvalsh(tensor).min() > 0


def test_joint_limits_in_radians():
    limits = np.rad2deg(robot_description.joint_limits_rad())
    np.testing.assert_allclose(limits[3], [-159.0, 0.001], atol=1e-9)
    np.testing.assert_allclose(limits[7], [-5.0, 90.0], atol=1e-9)


GOOD = robot_description.MDH_TABLE_CSV.read_text()


@pytest.mark.parametrize(
    "mutate, line, fragment",
    [
        (lambda t: t.replace("j,ant,sigma", "j,ant,sig"), 5, "header"),
        (lambda t: t.replace("3,2,0,-90,0,0,0.25", "3,2,0,-90,0,0"), 8, "6 fields"),
        (lambda t: t.replace("3,2,0,-90,0,0,0.25", "3,2,0,-90,0,0,abc"), 8, "not a number"),
        (lambda t: t.replace("3,2,0,-90,0,0,0.25", "3,2,0,-90,0,0,nan"), 8, "finite"),
        (lambda t: t.replace("4,3,0,90", "5,3,0,90"), 9, "joint 4"),
        (lambda t: t.replace("4,3,0,90", "4,3,1,90"), 9, "revolute"),
    ],
)
def test_bad_mdh_table_names_file_and_line(tmp_path, mutate, line, fragment):
    path = tmp_path / "table.csv"
    path.write_text(mutate(GOOD))
    with pytest.raises(InputError) as err:
        robot_description.load_mdh_table(path)
    assert f"{path}:{line}" in str(err.value)
    assert fragment in str(err.value)


def test_mdh_table_with_missing_joint(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("\n".join(l for l in GOOD.splitlines() if not l.startswith("7,")) + "\n")
    with pytest.raises(InputError, match="6 joints"):
        robot_description.load_mdh_table(path)
