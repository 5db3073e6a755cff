"""The servo catalogue: its rows checked, derived torque constants recomputed, unknown fields
left empty and refused by the folder's reader naming the column."""

from __future__ import annotations

import math

import pytest

from crane_lib.errors import InputError
from crane_lib.model import arm_schema, servo_catalogue
from crane_lib.model.describe import describe
from crane_lib.paths import DATA_DIR
from tests.test_describe import LOW_COST_ARM, write

MODELS = (
    "XM430-W350",
    "XM540-W270",
    "XL430-W250",
    "XL330-M288",
    "XC430-W150",
    "XH430-W350",
    "STS3215-C018",
    "STS3215-C001",
)


def test_the_catalogue_holds_the_models_with_a_source_per_field():
    """Every model of the brief, every field present, each with a source and a status."""
    catalogue = servo_catalogue.load()
    assert set(MODELS) <= set(catalogue.models)
    for model in MODELS:
        for name in servo_catalogue.FIELDS:
            entry = catalogue.entries[model][name]
            assert entry.source.strip(), (model, name)
            assert (entry.value is None) == (entry.status == "unknown")


def test_derived_torque_constants_are_stall_torque_over_stall_current():
    """A derived kt is the stall torque over the stall current, to the 4-5 digits it is printed."""
    catalogue = servo_catalogue.load()
    for model in catalogue.models:
        entry = catalogue.entries[model]["kt_N_m_per_A"]
        if entry.status != "derived":
            continue
        ratio = catalogue.value(model, "stall_torque_N_m") / catalogue.value(
            model, "stall_current_A"
        )
        assert math.isclose(entry.value, ratio, rel_tol=5e-4), model


def test_the_catalogue_gives_the_committed_arms_actuators():
    """The ViperX's and the SO-101's committed torque constants, units and current limits."""
    catalogue = servo_catalogue.load()
    for folder in ("vx300s_description", "so101_description"):
        for _, row in arm_schema.read_actuators(DATA_DIR / folder):
            model = row["model"]
            assert catalogue.value(model, "kt_N_m_per_A") == row["kt_N_m_per_A"], model
            assert catalogue.value(model, "current_unit_A") == row["current_unit_A"], model
            assert catalogue.value(model, "current_limit_units") == row["current_limit_units"]


def test_an_unknown_field_stays_empty_and_the_folder_is_refused_naming_it(tmp_path):
    """The XL430-W250 has no current register: its cells are empty, the reader names the column."""
    description = describe(
        LOW_COST_ARM, gripper="gripper", servos=["XL430-W250"] * 2 + ["XL330-M288"] * 4
    )
    assert description.unknown == ["XL430-W250 current_unit_A", "XL430-W250 current_limit_units"]
    folder = write(description, tmp_path / "koch")
    with pytest.raises(InputError, match="column 'current_unit_A' is empty"):
        arm_schema.read_folder(folder)


def test_a_bad_catalogue_row_is_refused(tmp_path):
    """A value where the status says unknown, and an unknown field, are refused with the line."""
    text = servo_catalogue.CATALOGUE_CSV.read_text(encoding="utf-8")
    bad = tmp_path / "catalogue.csv"
    bad.write_text(
        text.replace("XM430-W350,rotor_inertia_kg_m2,,", "XM430-W350,rotor_inertia_kg_m2,1,")
    )
    with pytest.raises(InputError, match="status 'unknown'"):
        servo_catalogue.load(bad)
    bad.write_text(text.replace("XM430-W350,gear_ratio,", "XM430-W350,gear,"))
    with pytest.raises(InputError, match="field 'gear'"):
        servo_catalogue.load(bad)
