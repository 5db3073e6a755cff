"""Run every benchmarks/bench_*.py as a module, one after the other (arguments select by name)."""

import subprocess
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
selected = sys.argv[1:]
for script in sorted(here.glob("bench_*.py")):
    if selected and not any(s in script.stem for s in selected):
        continue
    print(f"\n=== {script.stem} ===", flush=True)
    subprocess.run([sys.executable, "-m", f"benchmarks.{script.stem}"], check=True, cwd=here.parent)
