"""The twin's effects by name, the candidate effects' physics, the screen's violating poses,
the study's bad-input rules and one study point."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crane_lib.acceptance import audit, screen
from crane_lib.acceptance import nonideality as science
from crane_lib.constants import N_ARM_JOINTS, N_AXES
from crane_lib.errors import InputError
from crane_lib.model.dynamics import model
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.reporting.chapters import audit_failure as nonideality
from crane_lib.twin import effects
from crane_lib.twin import recorder as twin
from crane_lib.twin.truth import load_plant_settings, load_truth

SHORT = TRAJECTORY_DIR / "AP01.txt"


@pytest.fixture(scope="module")
def reduced():
    return model("reduced")


@pytest.fixture(scope="module")
def truth_beta(reduced):
    return reduced.base_from_standard(load_truth()).values


# ---------------------------------------------------------------- the effects


def test_todays_twin_is_the_default_profile_byte_for_byte():
    plain, plain_meta = twin.record(SHORT, seed=7)
    profiled, profiled_meta = twin.record(SHORT, seed=7, effects=effects.profile("default"))
    assert np.array_equal(plain, profiled)
    assert plain_meta == profiled_meta
    changed, changed_meta = twin.record(
        SHORT, seed=7, effects=effects.profile("default").changed(backlash=0.25)
    )
    assert not np.array_equal(plain, changed)
    assert changed_meta["twin_effects"] == "custom: backlash=0.25"


def test_every_effect_has_a_consistent_entry():
    for e in effects.EFFECTS:
        assert e.admits(e.default) and e.admits(e.off) and e.admits(e.nominal), e.name
        assert e.candidate == (e.default == e.off), (
            e.name
        )  # candidates are off by default, the rest on
        assert e.source
    ideal = effects.profile("ideal")
    assert all(ideal[e.name] == e.off for e in effects.EFFECTS)
    assert effects.profile("default").is_default and not ideal.is_default


@pytest.mark.parametrize(
    "name, value, problem",
    [
        ("backlash", 1.5, "outside its physical range"),
        ("gear_friction", 0.5, "outside its physical range"),
        ("voltage_limit", 24.0, "outside its physical range"),
        ("encoder_quantization", 0.5, "outside its physical range"),
        ("cable_torque", 0.1, "unknown effect"),
        ("backlash", "wide", "is not a number"),
    ],
)
def test_a_bad_magnitude_names_where_and_the_allowed_range(name, value, problem):
    with pytest.raises(InputError) as caught:
        effects.check_value(name, value, "conditions.csv:7")
    assert caught.value.where == "conditions.csv:7" and problem in caught.value.problem
    if name in effects.BY_NAME:
        assert caught.value.expected == effects.BY_NAME[name].allowed()


def test_profiles_turn_into_the_plants_settings():
    truth, settings = load_truth(), load_plant_settings()
    base = effects.profile("default")
    same = effects.realization(base, truth, settings)
    assert (
        same.settings is settings
        and same.truth is truth
        and same.compliant
        and same.load_friction
        and same.voltage_limit
    )
    chosen = effects.realization(
        base.changed(
            kt_error=0,
            compliance=200,
            gear_friction=1.0,
            voltage_limit=14.8,
            coulomb_friction=0,
            products_of_inertia=0,
            dead_time=2.0,
            backlash=0.5,
        ),
        truth,
        settings,
    )
    np.testing.assert_array_equal(chosen.settings.kt_true, settings.kt_logged)
    np.testing.assert_allclose(chosen.settings.stiffness, 4.0 * settings.stiffness)
    np.testing.assert_allclose(chosen.settings.resonance_hz, 2.0 * settings.resonance_hz)
    np.testing.assert_allclose(chosen.settings.stall_current, settings.stall_current * 14.8 / 12.0)
    assert (
        not chosen.load_friction
        and chosen.voltage_limit
        and chosen.latency_s == pytest.approx(2e-3)
    )
    assert (
        all(chosen.truth[f"FS{j}"] == 0 for j in range(1, N_AXES + 1))
        and chosen.truth["XY3"] == 0
        and chosen.truth["XX3"] == truth["XX3"]
    )
    np.testing.assert_allclose(chosen.backlash_half_gap, np.full(N_ARM_JOINTS, math.radians(0.25)))
    rigid = effects.realization(base.changed(compliance=math.inf), truth, settings)
    assert (
        not rigid.compliant and not rigid.load_friction
    )  # gear friction is defined on the drivetrain spring
    with pytest.raises(InputError, match="rigid"):
        effects.realization(base.changed(compliance=math.inf, backlash=0.25), truth, settings)


def test_backlash_transmits_nothing_inside_the_gap_and_the_spring_beyond_it():
    def plant(half_gap=0.0, spring=True):
        p = twin.build_plant(load_truth(), load_plant_settings())
        p.load_friction, p.voltage_limit = False, False
        p.fs, p.fv = np.zeros(N_AXES), np.zeros(N_AXES)
        p.backlash_half_gap = np.full(N_ARM_JOINTS, half_gap)
        if not spring:
            p.stiffness, p.damping = np.zeros(N_ARM_JOINTS), np.zeros(N_ARM_JOINTS)
        return p

    core = twin._core()
    gap = math.radians(0.25)
    q0 = np.radians([0.0, 0.0, 0.0, -90.0, 0.0, 0.0, 0.0, 0.0])

    def state(rotor_offset, rotor_speed=0.0):
        x = twin.initial_state(q0)
        x[core.XQM : core.XQM + N_ARM_JOINTS] += rotor_offset
        x[core.XVM + 6] = rotor_speed
        return x

    # inside the gap: axis 7's rotor keeps its speed (no motor torque, no friction) and the links
    # move
    # exactly as links with no drivetrain spring at all
    inside, free = state(0.5 * gap, 0.2), state(0.5 * gap, 0.2)
    twin.integrate(plant(gap), inside, np.zeros(N_AXES), 8)
    twin.integrate(plant(0.0, spring=False), free, np.zeros(N_AXES), 8)
    assert inside[core.XVM + 6] == pytest.approx(0.2, rel=1e-12)
    np.testing.assert_allclose(
        inside[core.XV : core.XV + N_AXES], free[core.XV : core.XV + N_AXES], rtol=1e-9, atol=1e-15
    )
    assert abs(inside[core.XV + 3]) > 1e-3  # the elbow's link does fall through its gap
    # beyond the gap: the spring of a play b stretched by b + e acts as the spring without play
    # stretched by e
    beyond, plain = state(gap + 1e-4), state(1e-4)
    twin.integrate(plant(gap), beyond, np.zeros(N_AXES), 1)
    twin.integrate(plant(0.0), plain, np.zeros(N_AXES), 1)
    np.testing.assert_allclose(
        beyond[core.XVM : core.XVM + N_ARM_JOINTS],
        plain[core.XVM : core.XVM + N_ARM_JOINTS],
        rtol=1e-9,
        atol=1e-15,
    )
    np.testing.assert_allclose(
        beyond[core.XV : core.XV + N_AXES], plain[core.XV : core.XV + N_AXES], rtol=1e-9, atol=1e-15
    )
    assert plain[core.XVM + 6] < 0  # and it does pull the rotor back


def test_the_encoder_adds_its_position_dependent_error_then_rounds():
    core = twin._core()
    shape = effects.encoder_error_shape(0.5)
    assert np.all(np.abs(shape[0]) + np.abs(shape[2]) <= math.radians(0.5) + 1e-15)
    q = np.linspace(-2.0, 2.0, N_AXES)
    ticks, theta = np.zeros(N_AXES), np.zeros(N_AXES)
    scal = np.zeros(11)
    scal[core.P_ENCODER_RES], scal[core.P_ENCODER_ERROR] = 2 * math.pi / 4096, 1.0
    core._encoder(
        q, scal, np.zeros(3), shape, np.random.default_rng(0), ticks, theta
    )  # not rounded
    error = shape[0] * np.sin(q + shape[1]) + shape[2] * np.sin(2 * q + shape[3])
    np.testing.assert_allclose(theta, q + error, atol=1e-12)
    scal[core.P_ENCODER_QUANTIZE] = 1.0
    core._encoder(q, scal, np.zeros(3), shape, np.random.default_rng(0), ticks, theta)
    assert np.array_equal(ticks, np.rint(ticks)) and np.all(
        np.abs(theta - (q + error)) <= math.pi / 4096 + 1e-12
    )


# ---------------------------------------------------------------- the screen's violating poses


def test_the_screen_names_every_violating_pose_and_the_folded_count_follows(reduced, truth_beta):
    # uniform draws plus folded-region draws (acceptance/screen.py's verdict and margin are tested
    # in test_screen.py)
    uniform, folded = (
        audit.uniform_poses(3000, 3),
        audit.uniform_poses(1000, 4, audit.folded_region()),
    )
    pose_set = audit.PoseSet(
        np.vstack([uniform, folded]),
        np.repeat(np.array([0, 1], dtype=np.int8), [3000, 1000]),
        (audit.UNIFORM, audit.FOLDED),
        3,
        "test",
    )
    prepared = screen.prepare(pose_set, reduced)
    broken = audit.minimal_pd_break(truth_beta, [0.0, 1.2, 0.3, -2.0, 0.1, 1.2, 0.0], 1e-4, reduced)
    for beta in (truth_beta, broken):
        found = screen.screened_audit(beta, prepared, reduced)
        exact = np.flatnonzero(reduced.arm_min_eigenvalue(pose_set.poses, beta) <= 0.0)
        np.testing.assert_array_equal(found.violating_indices, exact)
        in_uniform = exact[pose_set.component[exact] == 0]
        inside = int(
            np.count_nonzero(
                np.all(
                    (pose_set.poses[in_uniform] >= audit.folded_region()[:, 0])
                    & (pose_set.poses[in_uniform] <= audit.folded_region()[:, 1]),
                    axis=1,
                )
            )
        )
        assert science.uniform_violations_in_folded(found, prepared) == inside
    assert len(exact) > 0  # the broken model does violate, so the comparison is not vacuous


def test_rayleigh_shares_split_the_drop_from_the_truth_exactly(reduced, truth_beta):
    rng = np.random.default_rng(1)
    estimate = truth_beta + 0.05 * np.abs(truth_beta) * rng.normal(size=truth_beta.size)
    pose = np.radians([0.0, 60.0, 10.0, -120.0, 30.0, 70.0, 0.0])
    shares = science.rayleigh_shares(estimate, truth_beta, pose, reduced)
    smallest = np.linalg.eigvalsh(reduced.inertia_matrix(pose[None], estimate)[0, :7, :7])[0]
    assert shares["lambda_min"] == pytest.approx(smallest, rel=1e-12)
    assert shares["shares"].sum() == pytest.approx(
        shares["lambda_min"] - shares["truth_quotient"], rel=1e-9, abs=1e-15
    )


# ---------------------------------------------------------------- the study's conditions


def _conditions(tmp_path, *rows):
    path = tmp_path / "nonideality_test.csv"
    path.write_text(
        "# a study\nbase,effect,magnitude,trajectory,seed,accept\n"
        + "".join(r + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def test_the_committed_conditions_files_parse():
    for profile in ("quick", "full"):
        conditions = science.read_study_conditions(science.study_conditions_path(profile))
        assert {c.base for c in conditions} >= {"default", "ideal"}
        assert any(c.label() == "default" and c.trajectory == "AG02" for c in conditions)
    assert any(c.accept for c in conditions)  # the full profile runs Algorithm 1 on one rung


@pytest.mark.parametrize(
    "row, problem",
    [
        ("default,backlash,2.0,AG02,1,False", "outside its physical range"),
        ("default,cable_torque,0.1,AG02,1,False", "unknown effect"),
        ("default,backlash+encoder_error,0.25,AG02,1,False", "2 effects"),
        ("ideal,backlash,0.25,AG02,1,False", "rigid"),
        ("warm,none,0,AG02,1,False", "base profile"),
        ("default,none,0.5,AG02,1,False", "effect 'none'"),
        ("ideal,none,0,AG02,1,True", "Algorithm 1 on the ideal twin"),
    ],
)
def test_a_bad_conditions_row_is_refused_with_its_file_and_line(tmp_path, row, problem):
    with pytest.raises(InputError) as caught:
        science.read_study_conditions(_conditions(tmp_path, "default,none,0,AG02,1,False", row))
    assert caught.value.where.endswith("nonideality_test.csv:4") and problem in str(caught.value)


def test_one_study_point_records_identifies_and_audits(monkeypatch):
    condition = science.parse_condition("default", "backlash", "0.25", "AP01", 5)
    record, timing = science.run_condition(condition, intervals=(0.02,))
    (point,) = record["intervals"]
    assert (
        record["label"] == "default + backlash 0.25"
        and record["profile"] == "custom: backlash=0.25"
    )
    assert point["pd_visited"] == (point["lambda_min_visited"] > 0) and point["route"] in (
        "O-C",
        "O-S-C",
    )
    assert (
        point["pd_theta"]
        == (point["lambda_min_theta"] > 0)
        == (sum(point["violations"].values()) == 0)
    )
    assert point["share_sum"] == pytest.approx(
        point["lambda_min_theta"] - point["truth_quotient"], rel=1e-6, abs=1e-12
    )
    assert len(point["estimate"]) == len(record["names"]) == 39 and timing["record_s"] > 0


# ---------------------------------------------------------------- what the chapter computes from
# the records


def _frame(rows):
    import pandas as pd

    out = []
    for label, seed, margins in rows:
        base, _, rest = label.partition(" + ")
        effect, _, magnitude = rest.partition(" ")
        for ts, margin in zip(nonideality.INTERVALS_MS, margins):
            out.append(
                {
                    "label": label,
                    "base": base,
                    "effect": effect or "none",
                    "magnitude": magnitude or "0",
                    "trajectory": "AG02",
                    "seed": seed,
                    "ts_ms": ts,
                    "failure": None,
                    "pd_visited": True,
                    "pd_theta": margin > 0,
                    "lambda_theta": margin,
                }
            )
    return pd.DataFrame(out)


def test_the_paper_pattern_and_the_field_rule_are_computed_not_assumed(monkeypatch):
    e = 1e-3
    frame = _frame(
        [
            ("default", 1, (1 * e, 4 * e, 4 * e, 4 * e)),
            ("default", 2, (3 * e, 4.2 * e, 4.2 * e, 4.2 * e)),
            ("default + backlash 0.25", 1, (-1 * e, -1 * e, -1 * e, 2 * e)),
            ("default + backlash 0.25", 2, (-2 * e, -1 * e, -1 * e, 2 * e)),
            ("default + encoder_error 0.5", 1, (-1 * e, 3.5 * e, 3.9 * e, 4 * e)),
            ("default + encoder_error 0.5", 2, (2.9 * e, 4.2 * e, 4.2 * e, 4.2 * e)),
        ]
    )
    patterns = nonideality.interval_patterns(frame)
    assert patterns["paper_pattern"].groupby("label").all().to_dict() == {
        "default": False,
        "default + backlash 0.25": True,
        "default + encoder_error 0.5": False,
    }
    ladder = nonideality.ladder(frame).set_index(["label", "ts_ms"])
    assert ladder.loc[("default + encoder_error 0.5", 10), "non_pd_theta"] == 1
    assert ladder.loc[("default + encoder_error 0.5", 10), "pd_data_not_theta"] == 1
    rule, chosen = nonideality.field_rule(frame)
    # backlash drops the 20 ms margin by 5e-3 in both executions, far beyond twice the 0.2e-3
    # difference; encoder error does not
    assert (
        chosen == ["default + backlash 0.25"]
        and not rule[rule["candidate"].str.contains("encoder_error")]["passes"].any()
    )
    monkeypatch.setattr(effects, "FIELD_CHANGES", {})
    with pytest.raises(RuntimeError, match="not what the register's rule selects"):
        nonideality.field_check(frame)
    monkeypatch.setattr(effects, "FIELD_CHANGES", {"backlash": 0.25})
    assert nonideality.field_check(frame)[1:] == (
        ["default + backlash 0.25"],
        ["default + backlash 0.25"],
    )


def test_the_mechanism_states_directions_it_computed():
    import pandas as pd

    def removals(quantization, friction):  # the two removals' errors in XXR2 and FV2
        errors = pd.DataFrame(
            {"error of XXR2": [-20e-3, *quantization], "error of FV2": [0.8, *friction]},
            index=["default", "default + encoder_quantization 0", "default + voltage_limit inf"],
        )
        effect = nonideality.removal_effects(errors, "XXR2")
        best = effect.index[:2].tolist()
        return effect, nonideality.friction_direction(errors, best)

    shrinks, friction = removals((-2e-3, 3e-3), (0.2, 0.25))
    assert (shrinks["ratio"] < 1).all() and shrinks.index[0] == "encoder_quantization 0"
    assert shrinks.loc["voltage_limit inf", "ratio"] == pytest.approx(3e-3 / 20e-3)
    assert friction == ("FV2", "cut")
    grows, friction = removals((-30e-3, 25e-3), (1.2, 0.9))
    assert not (grows["ratio"] < 1).any() and friction == ("FV2", "raise")
    assert removals((-30e-3, 2e-3), (1.2, 0.1))[1] == ("FV2", "move")
    # no drop to split: nothing lost half the truth's margin, no dominant parameter
    shares = pd.DataFrame({"XXR2": [-3e-3], "FV2": [0.0], "lambda_theta": [4e-3]})
    assert nonideality.dominant_parameters(shares, ["XXR2", "FV2"], truth_margin=5e-3) == []
    lost = shares.assign(lambda_theta=1e-3)
    assert nonideality.dominant_parameters(lost, ["XXR2", "FV2"], truth_margin=5e-3) == ["XXR2"]
    assert nonideality.removal_effects(pd.DataFrame(), "XXR2").empty


def test_the_twin_profile_named_by_crane_twin_reaches_the_recordings_cache_key(monkeypatch):
    from crane_lib.twin import dataset

    execution = dataset.executions("quick")[0]
    today = dataset.cache_key(execution, effects.profile("default"))
    monkeypatch.setenv("CRANE_TWIN", "field")
    monkeypatch.setattr(effects, "FIELD_CHANGES", {})
    assert (
        effects.active_profile().is_default
        and dataset.cache_key(execution, effects.active_profile()) == today
    )
    monkeypatch.setattr(effects, "FIELD_CHANGES", {"backlash": 0.25})
    field = effects.active_profile()
    assert (
        field.name == "field"
        and field["backlash"] == 0.25
        and dataset.cache_key(execution, field) != today
    )
    monkeypatch.setenv("CRANE_TWIN", "feild")
    with pytest.raises(InputError) as caught:
        effects.active_profile()
    assert "CRANE_TWIN" in caught.value.where and "field" in caught.value.expected


def test_the_conclusion_and_the_field_rule_follow_the_numbers():
    e = 1e-3
    frame = _frame(
        [
            ("default", 1, (1 * e, 4 * e, 4 * e, 4 * e)),
            ("default", 2, (3 * e, 4.2 * e, 4.2 * e, 4.2 * e)),
            ("default + backlash 0.25", 1, (2 * e, 4.1 * e, 4.1 * e, 4.1 * e)),
            ("default + backlash 0.25", 2, (3.5 * e, 4.3 * e, 4.3 * e, 4.3 * e)),
            ("default + kt_error 0", 1, (-1 * e, -1 * e, -1 * e, 2 * e)),
            ("default + kt_error 0", 2, (-1 * e, 3 * e, -1 * e, 2 * e)),
        ]
    )
    # the paper's pattern on no rung in every execution, in one single execution
    assert nonideality.pattern_rungs(frame) == ([], [("default + kt_error 0", 1)])
    spread = nonideality.seed_spread(frame, min_seeds=2)
    today = spread[spread["rung"] == "default"].set_index("ts_ms")
    # today's twin's spread at 10 ms, max − min, and its executions
    assert today.loc[10, "max"] - today.loc[10, "min"] == pytest.approx(2 * e)
    assert today["executions"].max() == 2 and today["non_pd_theta"].sum() == 0
    rule, chosen = nonideality.field_rule(frame)
    # no candidate lowers the margin over Θ in both executions at any interval
    assert not chosen and (rule["drop_min"] <= 0).all()


def test_the_algorithm_1_facts_say_what_the_run_did():
    frame = _frame([("default + kt_error 0", 1011, (-1e-3, -1e-3, -3.5e-3, 2e-3))]).assign(
        pd_visited=True
    )
    record = {
        "label": "default + kt_error 0",
        "condition": {"seed": 1011},
        "accepted": {
            "route": "O-C",
            "first_audits": [{"lambda_min": 4.9e-3, "passed": True, "violations": {}}] * 5,
            "final_audits": [{"lambda_min": 4.9e-3, "worst_component": "grid"}] * 5,
            "rescued": False,
            "rescue_passes": None,
            "accepted": True,
        },
    }
    (run,) = nonideality.accepted_summary([record, {"label": "default"}])
    assert run["first audit: seeds failing"] == 0 and not run["rescued"]
    assert nonideality.accepted_ols(run, frame) == {
        "pd_theta": False,
        "lambda_theta": -3.5e-3,
        "pd_visited": True,
    }
    failing = {"lambda_min": -1e-3, "passed": False, "violations": {"grid": 900, "uniform": 37}}
    record["accepted"].update(
        first_audits=[failing] * 5,
        final_audits=[{"lambda_min": 5e-4, "worst_component": "uniform"}]
        + [{"lambda_min": 4.9e-3, "worst_component": "grid"}] * 4,
        rescued=True,
        rescue_passes=1,
    )
    (rescued,) = nonideality.accepted_summary([record])
    assert rescued["first audit: seeds failing"] == 5
    assert rescued["first audit: violations (seed 1)"] == 937
    assert rescued["rescued"] and rescued["rescue passes"] == 1 and rescued["accepted"]
    assert rescued["final λmin, smallest"] == 5e-4 and rescued["final worst component"] == "uniform"
    assert nonideality.accepted_ols({**run, "seed": 7}, frame) is None


def test_an_effect_switched_off_is_not_read_as_its_magnitude():
    """'first indefinite at 0 deg (today 0)' read as if a magnitude of an effect off did it."""
    e = 1e-3
    frame = _frame(
        [
            ("default", 1, (-1 * e, 4 * e, 4 * e, 4 * e)),
            ("default + backlash 0.25", 1, (-1 * e, 4 * e, 4 * e, 4 * e)),
            ("default + kt_error 0", 1, (-1 * e, 4 * e, 4 * e, 4 * e)),
            ("default + encoder_error 0.5", 1, (-1 * e, 4 * e, 4 * e, 4 * e)),
        ]
    )
    found = {
        name: nonideality.first_indefinite(frame, name)
        for name in ("backlash", "kt_error", "encoder_error")
    }
    # backlash is off today: its first indefinite value is the effect off and today's value
    assert found["backlash"]["value"] == 0 and found["backlash"]["off"]
    assert found["backlash"]["today"]
    # kt_error 0 switches an effect that is on today off: off, not today's value
    assert found["kt_error"]["off"] and not found["kt_error"]["today"]
    assert found["kt_error"]["intervals"] == [10]
    # encoder_error first fails at today's value (off), not at the 0.5 deg it was scaled to
    assert found["encoder_error"]["value"] == 0 and found["encoder_error"]["today"]
    assert nonideality.first_indefinite(frame.assign(pd_theta=True), "backlash") is None
