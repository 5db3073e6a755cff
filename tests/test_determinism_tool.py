"""tools/determinism.py's rebuild check: a result file whose bytes or modification time changed
is listed as rewritten, the build's own timings are not."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))
import determinism  # noqa: E402


def test_a_rewritten_result_file_is_listed_and_the_timings_are_not(tmp_path):
    (tmp_path / "conditions").mkdir()
    (tmp_path / "timings").mkdir()
    kept = tmp_path / "conditions" / "a.json"
    touched = tmp_path / "conditions" / "b.json"
    changed = tmp_path / "conditions" / "c.json"
    for path in (kept, touched, changed):
        path.write_text("{}", encoding="utf-8")
    (tmp_path / "timings" / "pipeline_quick.json").write_text("1", encoding="utf-8")
    before = determinism.snapshot(tmp_path)
    os.utime(touched, ns=(0, 0))  # the same bytes written again
    changed.write_text('{"x": 1}', encoding="utf-8")
    (tmp_path / "conditions" / "d.json").write_text("{}", encoding="utf-8")
    (tmp_path / "timings" / "pipeline_quick.json").write_text("2", encoding="utf-8")
    after = determinism.snapshot(tmp_path)
    assert determinism.rewritten(before, after) == [
        "conditions/b.json",
        "conditions/c.json",
        "conditions/d.json",
    ]
    assert determinism.rewritten(before, before) == []
