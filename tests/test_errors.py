"""InputError crosses process boundaries intact: the sweeps, the data set and the pages run their
work in worker processes, which send exceptions back pickled."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from crane_lib.errors import InputError
from crane_lib.export.consistent import NoConsistentModel
from crane_lib.identification.gate import NotIdentifiable

from .stand_in_jobs import raise_input_error


@pytest.mark.parametrize("kind", [InputError, NoConsistentModel, NotIdentifiable])
def test_pickling_keeps_the_kind_the_place_and_what_was_expected(kind):
    error = kind("AG02_run1.npz: sample 12", "theta is not finite", "finite angles in rad")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is kind and str(back) == str(error)
    assert (back.where, back.problem, back.expected) == (error.where, error.problem, error.expected)


def test_an_input_error_in_a_worker_process_reaches_the_caller_as_itself():
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        future = pool.submit(
            raise_input_error,
            "recordings/AP03_run1.npz",
            "no recording of AP03 run 1",
            "the twin's recording",
        )
        with pytest.raises(
            InputError,
            match=r"recordings/AP03_run1.npz: no recording of AP03 run 1 \(expected the twin's "
            r"recording\)",
        ):
            future.result()
