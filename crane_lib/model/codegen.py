"""Python source from a straight-line program, and loading generated modules from the cache.

The emitter knows nothing of the robot: it prints a program of sympy assignments as a Python
function. The generated functions use only +, -, * and ** on their inputs, so the same text runs on
numpy arrays (vectorized over samples) and, with exact constants, on Fractions (the exact
rank computation of the base-parameter grouping).
"""

from __future__ import annotations

import importlib.util
import py_compile
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from crane_lib.paths import CACHE_DIR

if (
    TYPE_CHECKING
):  # sympy is imported when code is emitted; loading generated modules never needs it
    import sympy

CODEGEN_DIR = CACHE_DIR / "codegen"


@lru_cache(maxsize=2)
def _printer_class(exact: bool):
    from sympy.printing.str import StrPrinter

    class Printer(StrPrinter):
        def _print_Rational(self, expr):
            if exact:
                return f"_Q({expr.p}, {expr.q})"
            return repr(float(expr))

        def _print_Integer(self, expr):
            return str(int(expr))

        def _print_Float(self, expr):
            return repr(float(expr))

    return Printer


def _needed(program, outputs) -> list[tuple[sympy.Symbol, sympy.Expr]]:
    """Assignments the outputs depend on, in program order (dead code dropped)."""
    defs = program.definitions()
    needed: set = set()
    stack = [sym for expr in outputs for sym in expr.free_symbols]
    while stack:
        sym = stack.pop()
        if sym in needed or sym not in defs:
            continue
        needed.add(sym)
        stack.extend(defs[sym].free_symbols)
    return [(sym, expr) for sym, expr in program.assignments if sym in needed]


def emit_function(
    name: str,
    args: list[str],
    unpack: dict[str, str],
    program,
    stores: list[tuple[str, sympy.Expr]],
    exact: bool,
) -> str:
    """Source of `def name(*args, out)`: unpack inputs, run needed assignments, store outputs.

    `unpack` maps an input symbol name to the expression that reads it from the arguments;
    `stores` pairs an assignment target (e.g. 'out[..., 3, 7]') with its expression.
    """
    printer = _printer_class(exact)({"order": "none"})
    body = _needed(program, [expr for _, expr in stores])
    used = {
        str(s) for expr in [e for _, e in stores] + [e for _, e in body] for s in expr.free_symbols
    }
    lines = [f"def {name}({', '.join(args)}, out):"]
    for sym, reader in unpack.items():
        if sym in used:
            lines.append(f"    {sym} = {reader}")
    for sym, expr in body:
        lines.append(f"    {sym} = {printer.doprint(expr)}")
    for target, expr in stores:
        lines.append(f"    {target} = {printer.doprint(expr)}")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def load_module(path: Path, module_name: str):
    """Import the generated module at `path` under `module_name`.

    Its bytecode is written beside it once, whatever PYTHONDONTWRITEBYTECODE says: a generated
    module is a cache file of this project's, and compiling its source again cost every process
    that loads the four parameter sets' kernels about 0.13 s."""
    try:
        if not Path(importlib.util.cache_from_source(str(path))).is_file():
            py_compile.compile(str(path), doraise=True)  # written atomically, as import writes it
    except OSError:  # a cache folder this process cannot write: the import compiles the source
        pass
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
