"""Parameter files: round trip, and bad input that names the entry and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import (
    ParameterSet,
    load_parameters,
    save_parameters,
    standard_parameter_names,
    unit_of,
)


@pytest.fixture
def reduced_names():
    return DynamicModel("reduced").names


def test_round_trip_is_exact(tmp_path, reduced_names, rng):
    params = ParameterSet(
        reduced_names, rng.normal(size=39), rng.uniform(size=39), {"source": "test"}
    )
    path = tmp_path / "model.csv"
    save_parameters(path, params)
    loaded = load_parameters(path, expected_names=reduced_names)
    np.testing.assert_array_equal(loaded.values, params.values)
    np.testing.assert_array_equal(loaded.std_errors, params.std_errors)
    assert loaded.meta["source"] == "test"
    text = path.read_text()
    assert "ZZR1," in text and "kg·m^2" in text


def test_order_in_the_file_does_not_matter(tmp_path, reduced_names, rng):
    values = rng.normal(size=39)
    shuffled = rng.permutation(39)
    save_parameters(
        tmp_path / "m.csv", ParameterSet([reduced_names[i] for i in shuffled], values[shuffled])
    )
    np.testing.assert_array_equal(load_parameters(tmp_path / "m.csv", reduced_names).values, values)


def _write(tmp_path, rows, header="name,value,unit"):
    path = tmp_path / "bad.csv"
    path.write_text("# a comment\n" + header + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    "rows, line, fragment",
    [
        (["ZZR1,0.1,kg·m^2", "QQ2,1,kg"], 4, "unknown parameter name 'QQ2'"),
        (["ZZR1,abc,kg·m^2"], 3, "not a number"),
        (["ZZR1,inf,kg·m^2"], 3, "finite"),
        (["ZZR1,0.1,kg·m^2", "ZZR1,0.2,kg·m^2"], 4, "repeated"),
        (["ZZR1,0.1"], 3, "2 fields"),
        (["MXR2,0.1,kg·m^2"], 3, "unit"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, rows, line, fragment):
    path = _write(tmp_path, rows)
    with pytest.raises(InputError) as err:
        load_parameters(path)
    assert f"{path}:{line}" in str(err.value)
    assert fragment in str(err.value)


def test_bad_header(tmp_path):
    path = _write(tmp_path, ["ZZR1,0.1,kg·m^2"], header="parameter,value")
    with pytest.raises(InputError, match=r"bad.csv:2.*header"):
        load_parameters(path)


def test_missing_and_unknown_names_are_listed(tmp_path, reduced_names):
    rows = [f"{n},0.1,{unit_of(n)}" for n in reduced_names[1:]]
    rows.append("FS1,0.2,N·m")
    path = _write(tmp_path, rows)
    with pytest.raises(InputError) as err:
        load_parameters(path, expected_names=reduced_names)
    assert "missing ['ZZR1']" in str(err.value) and "unknown ['FS1']" in str(err.value)


def test_base_from_standard_requires_all_94(rng):
    model = DynamicModel("reduced")
    standard = dict(zip(standard_parameter_names(), rng.normal(size=94)))
    del standard["M7"]
    standard["M9"] = 1.0
    with pytest.raises(InputError, match=r"missing \['M7'\]; unknown \['M9'\]"):
        model.base_from_standard(standard)


def test_wrong_shapes_and_nonfinite_states_are_named():
    model = DynamicModel("reduced")
    with pytest.raises(InputError, match=r"\(39,\)"):
        model.inertia_matrix(np.zeros((2, 8)), np.zeros(38))
    q = np.zeros((3, 8))
    q[2, 4] = np.nan
    with pytest.raises(InputError, match="q sample 2, axis 5"):
        model.regressor(q, np.zeros((3, 8)), np.zeros((3, 8)))


def test_unknown_names_are_refused_at_construction():
    with pytest.raises(InputError, match="BAD9"):
        ParameterSet(["ZZR1", "BAD9"], [1.0, 2.0])


def test_failed_save_leaves_nothing(tmp_path, reduced_names, monkeypatch):
    """A failure while the file is being written leaves neither the file nor a temporary."""
    import crane_lib.errors as errors

    path = tmp_path / "model.csv"
    params = ParameterSet(reduced_names, np.ones(39))
    real_replace = errors.os.replace

    def failing_replace(*args):
        raise OSError("disk full")

    monkeypatch.setattr(errors.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        save_parameters(path, params)
    monkeypatch.setattr(errors.os, "replace", real_replace)
    assert not path.exists() and not list(tmp_path.iterdir())
    save_parameters(path, params)  # and a later save works
    assert path.exists()
