"""The excitation set (Sec. V-A, Appendix B): generator, committed files, and the paper's counts.

Where our reconstruction of the lost Tables XIII-XV gives a different count from the paper,
the test asserts OUR computed value and says why; book/register_excitation.md explains each.
"""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.excitation import design as ex
from crane_lib.excitation.commands import (
    SUFFIX,
    commanded_duration,
    read_command_file,
    segment_statistics,
)
from crane_lib.paper_numbers import paper
from crane_lib.paths import TRAJECTORY_DIR


@pytest.fixture(scope="module")
def identification():
    return ex.generate_identification()


@pytest.fixture(scope="module")
def validation():
    return ex.generate_validation()


@pytest.fixture(scope="module")
def counts(identification):
    return ex.set_counts(identification)


def test_committed_trajectories_are_what_the_generator_writes(tmp_path):
    written = ex.write_all(tmp_path)
    names = sorted(p.name for p in written)
    committed = sorted(p.name for p in TRAJECTORY_DIR.glob(f"*{SUFFIX}"))
    assert names == committed
    for path in written:
        assert path.read_bytes() == (TRAJECTORY_DIR / path.name).read_bytes(), path.name


def test_committed_files_parse_and_match_the_generator(identification, validation):
    for name, cmd in {**identification, **validation}.items():
        back = read_command_file(TRAJECTORY_DIR / f"{name}{SUFFIX}")
        assert np.allclose(back.waypoints, cmd.waypoints, atol=np.radians(5e-4))


def test_forty_identification_files_and_three_validation_files(identification, validation):
    assert len(identification) == paper("id_candidate_count").value
    assert len(validation) == paper("validation_traj_count").value
    family = [n for n in identification if n[:2] in ("PA", "PB", "PC")]
    assert len(family) == paper("posture_family_traj_count").value
    assert len([n for n in identification if n.startswith("AP")]) == paper("ap_family_size").value
    assert len([n for n in identification if n.startswith("AG")]) == paper("ag_family_size").value


def test_three_joint_segments_reproduce_the_papers_breakdown(counts):
    # reproduced: 24 in all, never more than three, 19 files without one, AP03 among them
    assert counts.n_three_joint_segments == paper("three_joint_segment_count").value
    assert counts.max_moving_arm_joints == paper("max_commanded_joints_together").value
    assert len(counts.files_without_three_joint) == paper("traj_without_three_joint").value
    assert "AP03" in counts.files_without_three_joint
    gamma_files = [
        n for n, s in ex.trajectory_specs().items() if any(b.kind == "gamma" for b in s.blocks)
    ]
    assert len(gamma_files) == paper("pi_gamma_entry_three_joint").value
    expected = {n: 1 for n in gamma_files} | {"AP01": paper("ap01_opening_three_joint").value}
    for name in ("PB05", "PB10", "PB11"):  # B-E: the wrist offset rides on the Πγ entry
        expected[name] += 1
    assert sum(expected.values()) - len(gamma_files) - 1 == paper("wrist_offset_three_joint").value
    assert counts.three_joint_files == expected


def test_every_three_joint_segment_is_a_named_transit(identification):
    for name, cmd in identification.items():
        table = segment_statistics(cmd).segments
        for joints in table[table.n_moving_arm_joints == 3].moving_arm_joints:
            # Πγ (4,5) entry carries axis 2; PB05/10/11 entry carries the wrist offset with (1,2);
            # AP01's opening carries axis 4 with (1,2)
            assert joints in {(2, 4, 5), (1, 2, 6), (1, 2, 4)}, (name, joints)


def test_excitation_primitives_move_at_most_two_adjacent_joints():
    limits = ex._limits_deg()
    for block in ex.PAIR_BLOCKS.values():
        for pair in block.pairs:
            moved = np.flatnonzero(pair.excursion() - np.array(pair.home)) + 1
            assert tuple(moved) == pair.axes
            assert np.all(pair.excursion() >= limits[:, 0]) and np.all(
                pair.excursion() <= limits[:, 1]
            )
    assert paper("max_moving_joints_per_primitive").value == 2


def test_single_joint_block_follows_b_d():
    table = ex.table_single_joint_block()
    assert len(table) == paper("single_joint_block_sweeps").value
    # eight sweep one axis each (axes 1-7 and the hand); two repeat axes 5 and 6 at a held partner
    assert sum("with" not in p for p in table.primitive) == paper("single_axis_sweep_count").value
    assert sum("with" in p for p in table.primitive) == paper("wrist_variant_sweep_count").value
    # axis 4 two-sided at A, one-sided at B and C; axis 2 at C runs +60 -> 0 -> -60 -> +60
    nominal4 = paper("axis4_posture_bc_angle").value
    assert table.loc[4, "Posture A"].count("→") == 3
    assert table.loc[4, "Posture B"] == f"{nominal4:+g} → {nominal4 + 60:+g} → {nominal4:+g}"
    assert table.loc[2, "Posture C"] == "+60 → +0 → -60 → +60"
    # the wrist variants hold θ6 = -89° and θ5 = -90°
    assert f"θ6 = {paper('wrist_variant_theta6').value:g}°" in table.loc[6, "primitive"]
    assert f"θ5 = {paper('wrist_variant_theta5').value:g}°" in table.loc[8, "primitive"]


def test_posture_c_merge_is_the_only_two_joint_segment_of_s_c():
    # B-D: at Posture C "one transit segment moves two joints"; the other transits of S move
    # one joint each (E-9), so in S(C) alone the merged axis-2 return / axis-3 outbound leg is
    # the only two-joint segment
    cmd = ex.build(ex.TrajectorySpec("S_C", (ex.Block("S", "C"),)))
    table = segment_statistics(cmd).segments
    assert table[table.n_moving_arm_joints == 2].moving_arm_joints.tolist() == [(2, 3)]
    assert table.n_moving_arm_joints.max() == 2


def test_sweeps_run_minus_first_so_posture_c_is_a_rotation():
    # B-D: +60 -> 0 -> -60 -> +60 at C "visits the same three angles as at Postures A and B,
    # in a rotated order"; the A/B order it rotates is 0 -> -60 -> +60 -> 0
    table = ex.table_single_joint_block()
    assert table.loc[2, "Posture A"] == "+0 → -60 → +60 → +0"
    assert table.loc[2, "Posture C"] == "+60 → +0 → -60 → +60"


def test_speed_levels(identification):
    assert ex.PROXIMAL_SPEED == paper("speed_proximal_pairs").value
    assert ex.DISTAL_SPEED == paper("speed_distal_pairs").value
    assert ex.REDUCED_LEVELS == (
        paper("speed_reduced_levels").value,
        paper("speed_reduced_levels").value_hi,
    )
    assert set(identification["AP02"].speed_percent[:-1]) == {75.0, 90.0}
    assert set(identification["AP04"].speed_percent[:-1]) == {30.0}
    assert set(identification["AP05"].speed_percent[:-1]) == {60.0}
    # AP04/AP05 repeat AP02's waypoints
    assert np.array_equal(identification["AP04"].waypoints, identification["AP02"].waypoints)
    assert np.array_equal(identification["AP05"].waypoints, identification["AP02"].waypoints)
    for cmd in identification.values():
        assert cmd.speed_percent[-1] == paper("final_row_speed_factor").value


def test_ag02_is_the_longest_and_the_only_one_with_every_block(identification):
    sizes = {n: c.n_waypoints for n, c in identification.items()}
    assert max(sizes, key=sizes.get) == "AG02"
    # differs: paper 163 waypoints; our reading of Tables XIII/XIV gives 155 (E-8, E-9: the text
    # does not place the remaining ~8 posture-change rows)
    assert sizes["AG02"] < paper("ag02_waypoints").value
    assert sizes["AG02"] == 155
    full = [
        n
        for n, s in ex.trajectory_specs().items()
        if {b.posture for b in s.blocks if b.kind == "S"} == set("ABC")
        and {b.kind for b in s.blocks} >= set(ex.PAIR_BLOCKS)
    ]
    assert full == ["AG02"]


def test_durations(identification, counts):
    ag02 = commanded_duration(identification["AG02"])
    # differs: paper 107.8 s; ours 102.7 s with S at 0.75. 0.75 is the only level for S that
    # brackets 107.8 s for any reading of the transits with 153-164 rows (E-6)
    assert abs(ag02 - paper("ag02_commanded_duration").value) < 5.5
    assert ag02 == pytest.approx(102.7, abs=0.05)  # computed value of our reconstruction
    # the single-joint blocks take about the first two thirds of AG02 (Fig. 8)
    s_only = sum(
        commanded_duration(ex.build(ex.TrajectorySpec("S", (ex.Block("S", p),)))) for p in "ABC"
    )
    assert s_only / ag02 == pytest.approx(paper("ag02_single_joint_fraction").value, abs=0.1)
    # differs: paper 46 min for the 40 files (robot motion); ours 40.4 min commanded. Scaled by
    # AG02 (ours 102.7 s against 107.8 s commanded, ~115 s realized) the paper's total is
    # 41.1-43.8 min in our units; the rest is the block-size deficit of E-8/E-9 (E-11)
    assert counts.total_duration_s / 60 == pytest.approx(40.4, abs=0.05)
    assert counts.total_duration_s / 60 < paper("id_motion_total").value
    # reproduced: PA07 is the slowest (lowest mean commanded joint speed)
    assert counts.slowest == "PA07"
    # Table XI: PB01 is one of the three long repeated trajectories (>= 3124 samples at 40 ms,
    # >= 125 s recorded); in ours it takes 112 s commanded, AG02-like
    assert commanded_duration(identification["PB01"]) > 100.0


def test_segment_count(counts, identification):
    # differs: paper 2,543 commanded segments; ours 2,411. Per AG02 waypoint the two agree
    # (2543/163 = 15.60, ours 2411/155 = 15.55): the gap is the block-size deficit of AG02 (E-11)
    assert counts.n_segments < paper("commanded_segment_count").value
    assert counts.n_segments == 2411
    ratio_paper = paper("commanded_segment_count").value / paper("ag02_waypoints").value
    assert counts.n_segments / identification["AG02"].n_waypoints == pytest.approx(
        ratio_paper, rel=0.01
    )


def test_every_family_row_has_a_pair_block_and_rows_10_11_repeat_row_05():
    # V-A: every trajectory is S followed by "one or more" pair blocks; B-A: a block repeated at
    # another speed factor without changing a waypoint gives the speed ladder
    assert all(pairs for pairs, _ in ex.FAMILY_ROWS.values())
    assert sum("gamma" in pairs for pairs, _ in ex.FAMILY_ROWS.values()) == 5
    assert ex.FAMILY_ROWS[10][0] == ex.FAMILY_ROWS[11][0] == ex.FAMILY_ROWS[5][0]
    assert (ex.FAMILY_ROWS[5][1], ex.FAMILY_ROWS[10][1], ex.FAMILY_ROWS[11][1]) == (
        ex.NORMAL,
        0.60,
        0.30,
    )
    assert len(set(ex.FAMILY_ROWS.values())) == 11


def test_ramps_and_sampling(counts):
    # reproduced: median effective ramp 0.200 s, and every ramp spans >= 3 samples at 10/20/40 ms
    assert counts.ramp_median_s == pytest.approx(paper("ramp_duration_median").value, abs=1e-9)
    for ts in (0.010, 0.020, 0.040):
        assert counts.undersampled_share[ts] == (0.0, 0.0)
    # differs: paper minimum 0.139 s; no move of ours is short enough to shorten a 0.2 s ramp
    # (0.139 s needs e.g. a 20° wrist move at 0.75 or a 10° move of axis 1/3/4; E-3)
    assert counts.ramp_min_s == pytest.approx(0.200, abs=1e-9)
    assert counts.ramp_min_s > paper("ramp_duration_min").value
    # near: paper 59-68 % of ramps below three samples at 80 ms; ours 55-68 % per file, 38 of the
    # 40 files inside 59-68 % (AP03 55 %, AG01 58 %), from per-axis ramps counted as floor(r/Ts)
    low, high = counts.undersampled_share[0.080]
    assert (round(low, 2), round(high, 2)) == (0.55, 0.68)
    assert high <= paper("ramps_undersampled_80ms").value_hi / 100 + 0.005


def test_validation_trajectories(validation):
    amplitude = paper("validation_amplitude").value_hi
    total = 0.0
    for name, cmd in validation.items():
        rows = np.degrees(cmd.waypoints[:-2])  # before the return to q̄0
        offsets = rows[:, :7] - ex.VALIDATION_CENTRE[:7]
        assert np.abs(offsets).max() == pytest.approx(amplitude)
        total += commanded_duration(cmd)
        speeds = sorted(set(cmd.speed_percent[:-1]))
        assert len(speeds) == paper(f"{name.lower()}_speed_factor_count").value
    # V01 and V02 move all seven arm joints at once; V03 moves groups of four
    assert segment_statistics(validation["V01"]).max_moving_arm_joints == 7
    assert (
        segment_statistics(validation["V03"]).max_moving_arm_joints
        == paper("validation_group_joints").value
    )
    assert np.array_equal(
        np.unique(validation["V02"].waypoints[:-2], axis=0),
        np.unique(validation["V01"].waypoints[:-2], axis=0),
    )
    # the cycle counts are chosen to bring the total near the paper's 105 s (not stated otherwise)
    assert total == pytest.approx(paper("validation_motion_total").value, abs=1.0)


def test_ap03_alone_gives_full_rank(identification):
    regressor = pytest.importorskip("crane_lib.model.dynamics").regressor
    from crane_lib.excitation.commands import interpolate

    ref = interpolate(identification["AP03"], dt=0.040)
    w = regressor(ref.q, ref.qd, ref.qdd, parameter_set="reduced").reshape(-1, 39)
    assert np.linalg.matrix_rank(w) == paper("ap03_regressor_rank").value


def test_our_table_xv_is_one_of_the_compositions_that_fit():
    """The search behind register E-11 finds compositions meeting every constraint, ours among
    them, and every one has the reduced-level majority the totals force (E-11)."""
    from crane_lib.excitation import composition

    result = composition.search()
    assert result.n_fits > 0 and result.chosen_is_a_fit
    assert sum(result.row01.values()) == result.n_fits
    assert min(result.rows_at_level[0.30]) > len(ex.FAMILY_ROWS) / 2
