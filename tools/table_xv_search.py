"""Search the Table XV row compositions that fit the paper's counts (register E-11).

The search itself is `crane_lib.excitation.composition.search` (the constraints are in its
docstring); the chapter "Excitation" runs it in every build. This prints its summary:

    .venv/bin/python tools/table_xv_search.py
"""

from __future__ import annotations

from crane_lib.excitation import composition


def main() -> None:
    """Print the family compositions that meet the paper's counts."""
    result = composition.search()
    t = result.targets
    print(
        f"targets in our AG02's units: {t['segments']:.0f} segments, "
        f"{t['duration_low_s'] / 60:.1f}-{t['duration_high_s'] / 60:.1f} min"
    )
    print(f"compositions fitting every constraint: {result.n_fits}")
    for level, counts in result.rows_at_level.items():
        print(f"rows at {level}: {counts}")
    print("row 01:", result.row01)
    print("row 05:", result.row05)
    print("the chosen FAMILY_ROWS is among them:", result.chosen_is_a_fit)


if __name__ == "__main__":
    main()
