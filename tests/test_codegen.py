"""Loading generated modules (`crane_lib.model.codegen.load_module`): the module's bytecode is
written beside it once, also where PYTHONDONTWRITEBYTECODE holds, and later loads read it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from crane_lib.model import codegen


def _generated(folder: Path) -> Path:
    path = folder / "generated_sum.py"
    path.write_text("def total(a, b):\n    return a + b\n", encoding="utf-8")
    return path


def test_a_generated_module_loads_and_its_bytecode_is_written_once(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # as under PYTHONDONTWRITEBYTECODE=1
    path = _generated(tmp_path)
    bytecode = Path(importlib.util.cache_from_source(str(path)))
    assert not bytecode.exists()
    module = codegen.load_module(path, "crane_test_generated_sum")
    assert module.total(2, 3) == 5
    assert bytecode.is_file()
    written = bytecode.stat().st_mtime_ns
    again = codegen.load_module(path, "crane_test_generated_sum_again")
    assert again.total(1, 1) == 2
    assert bytecode.stat().st_mtime_ns == written  # read, not written again
    monkeypatch.delitem(sys.modules, "crane_test_generated_sum")
    monkeypatch.delitem(sys.modules, "crane_test_generated_sum_again")


def test_a_cache_folder_that_cannot_be_written_still_loads(tmp_path, monkeypatch):
    path = _generated(tmp_path)

    def refused(*args, **kwargs):
        raise PermissionError("read-only cache")

    monkeypatch.setattr(codegen.py_compile, "compile", refused)
    module = codegen.load_module(path, "crane_test_generated_read_only")
    assert module.total(4, 5) == 9
    monkeypatch.delitem(sys.modules, "crane_test_generated_read_only")
