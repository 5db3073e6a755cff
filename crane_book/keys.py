"""What decides a record: its cache key, part by part, and why a stored record is stale.

A record's key is the digest of its parts and nothing else:

- `input <path>`: the content (sha256) of each input file it reads (a recording, a model);
- `parameters`: its parameters, as sorted JSON;
- `source <path>`: the text of a computing file outside crane_lib (a sweep's condition
  notebook, the claims module);
- `code <file>`: the source of every crane_lib module its computing code imports, transitively
  (`crane_lib.source_graph.closure`), one part per module;
- `arithmetic`: the floating-point kernels this process runs (`crane_lib.arithmetic`): the
  twin's closed loop turns a last-digit difference between kernels into another recording.

Not the chapter that presents the record, not the rest of the package: correcting a page's
prose re-executes that page only, editing a view under `crane_lib/reporting/` re-runs no data
step, editing `identification/clie.py` re-runs what imports it. The parts are stored beside the
key (`KeyStore`), so a recomputed record says which input, parameter or module changed.

A record is written (atomically) before its key is stored, and the key keeps the digests of the
record's files: a run killed between the two (SIGKILL, a power cut) leaves a record newer than
its key, which the next run recomputes even when the old key matches again.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from crane_lib import arithmetic, fingerprint, source_graph
from crane_lib.errors import atomic_write
from crane_lib.paths import REPO_ROOT, RESULTS_DIR

KEYS_DIR_NAME = "keys"


def _shown_path(path) -> str:
    path = Path(path).resolve()
    for root in (RESULTS_DIR.resolve(), REPO_ROOT.resolve()):
        try:
            return str(path.relative_to(root))
        except ValueError:
            continue
    return str(path)


def content_digest(path) -> str:
    """sha256 of a file's bytes, remembered per (path, size, modification time) in this process:
    the four intervals of a recording, and every claim reading it, hash it once."""
    stat = Path(path).stat()
    return _content_digest(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4096)
def _content_digest(path: str, size: int, mtime_ns: int) -> str:
    return fingerprint.file_digest(path)


@dataclass(frozen=True)
class Key:
    """The parts that decide a record (name -> digest or value) and their combined digest."""

    parts: dict = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """One digest of every part, names included (order-independent)."""
        return fingerprint.digest(*(f"{k}\0{v}" for k, v in sorted(self.parts.items())), length=64)


def code_parts(modules=(), files=()) -> dict:
    """`code <file>` parts: the closure of crane_lib modules, and of the crane_lib imports of
    source files outside the package (a condition notebook)."""
    reached = set(source_graph.closure(modules))
    for path in files:
        reached.update(source_graph.file_closure(path))
    parts = {}
    for module in sorted(reached):
        source = source_graph.module_file(module)
        parts[f"code {source.relative_to(REPO_ROOT)}"] = fingerprint.file_digest(source)
    return parts


def record_key(
    inputs=(), parameters=None, modules=(), sources=(), extra=None, code: dict | None = None
) -> Key:
    """The key of a record computed by crane_lib `modules` (or by `sources` outside the package,
    with their imports) from the `inputs` files with `parameters`; `extra`: named values that
    also decide it; `code`: the code parts when the caller computed them once for many records."""
    parts = dict(code) if code is not None else code_parts(modules, sources)
    for path in sources:
        parts[f"source {_shown_path(path)}"] = fingerprint.file_digest(path)
    for path in inputs:
        parts[f"input {_shown_path(path)}"] = content_digest(path)
    if parameters is not None:
        parts["parameters"] = json.dumps(parameters, sort_keys=True, default=str)
    for name, value in (extra or {}).items():
        parts[f"setting {name}"] = str(value)
    parts["arithmetic"] = arithmetic.signature()
    return Key(parts)


def changes(stored: dict | None, current: dict) -> list[str]:
    """Why a record with the `stored` parts is stale under the `current` ones, as short phrases:
    'new' when none is stored, else each part added, removed or changed."""
    if stored is None:
        return ["new"]
    reasons = []
    for name in sorted(set(stored) | set(current)):
        if name not in current:
            reasons.append(f"{name.partition(' ')[2] or name} no longer read")
        elif name not in stored:
            reasons.append(f"{name.partition(' ')[2] or name} newly read")
        elif stored[name] != current[name]:
            reasons.append(f"{name.partition(' ')[2] or name} changed")
    return reasons


class KeyStore:
    """The keys of one step's records: `results/keys/<step>/<record>.json` (digest and parts),
    or in `folder` when the step keeps them beside its own files (a sweep)."""

    def __init__(self, step: str, results_dir: Path | None = None, folder: Path | None = None):
        self.step = step
        default = Path(results_dir or RESULTS_DIR) / KEYS_DIR_NAME / step
        self.folder = Path(folder) if folder is not None else default
        self._outputs: dict[str, list[Path]] = {}  # per record: its files, as `stale` saw them

    def path(self, name: str) -> Path:
        """Where the key of record `name` is kept."""
        return self.folder / f"{name}.json"

    def _entry(self, name: str) -> dict:
        try:
            data = json.loads(self.path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def stored(self, name: str) -> dict | None:
        """The stored parts of record `name`, or None (never stored, or unreadable)."""
        return self._entry(name).get("parts")

    def stale(self, name: str, key: Key, outputs=()) -> list[str]:
        """Why record `name` must be recomputed ([] when its key matches, `outputs` exist and
        are the files the key was stored with)."""
        entry = self._entry(name)
        reasons = changes(entry.get("parts"), key.parts)
        self._outputs[name] = [Path(p) for p in outputs]
        missing = [p for p in outputs if not Path(p).is_file()]
        if not reasons and missing:
            reasons = [f"{_shown_path(missing[0])} missing"]
        if not reasons:
            written = entry.get("outputs") or {}  # absent in keys stored before it was kept
            for path in outputs:
                digest = written.get(_shown_path(path))
                if digest is not None and digest != content_digest(path):
                    reasons = [f"{_shown_path(path)} written after its key (a run was stopped)"]
                    break
        return reasons

    def store(self, name: str, key: Key) -> None:
        """Keep `key` as the key of record `name` (after the record itself was written), with the
        digests of the record's files that `stale` was given."""
        self.folder.mkdir(parents=True, exist_ok=True)
        entry = {"key": key.digest, "parts": key.parts}
        outputs = [p for p in self._outputs.get(name, []) if p.is_file()]
        if outputs:
            entry["outputs"] = {_shown_path(p): content_digest(p) for p in outputs}
        with atomic_write(self.path(name), encoding="utf-8") as handle:
            json.dump(entry, handle, indent=1, sort_keys=True)
            handle.write("\n")


@dataclass
class StepLog:
    """How many records a step reused and why each recomputed one was stale (printed per step)."""

    step: str
    reused: int = 0
    reasons: Counter = field(default_factory=Counter)
    recomputed: int = 0

    def note(self, reasons: list[str]) -> None:
        """Count one record: reused when `reasons` is empty, else recomputed for them."""
        if not reasons:
            self.reused += 1
            return
        self.recomputed += 1
        self.reasons.update(reasons)

    def line(self) -> str:
        """'step: 12 reused, 4 recomputed (identification/clie.py changed: 4)'."""
        text = f"{self.step}: {self.reused} reused, {self.recomputed} recomputed"
        if self.reasons:
            shown = ", ".join(f"{r}: {n}" for r, n in self.reasons.most_common(6))
            more = len(self.reasons) - 6
            text += f" ({shown}{f', and {more} other reasons' if more > 0 else ''})"
        return text
