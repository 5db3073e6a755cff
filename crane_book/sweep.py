"""The papermill sweep driver: run a condition notebook once per condition, in parallel, cached.

A sweep is a condition notebook (`crane_book/conditions/<sweep>.py`: jupytext percent, a
`parameters` cell, the one call into a crane_lib stage that computes and writes the condition's
record) and a table of conditions (`papermill_params/*.csv`, one row per condition, columns =
notebook parameters). Each condition runs the notebook with those parameters through papermill;
the executed notebook of every condition is kept for inspection
(`results/sweeps/<sweep>/notebooks/<condition>.ipynb`). The chapters that present a sweep only
read its records. A condition is skipped when its stored key matches (`crane_book.keys`): the
notebook's text, the parameters, the input files the caller names and the source of the crane_lib
modules the notebook imports, transitively; a recomputed condition says which of them changed.

Batches. Starting a Jupyter kernel and importing crane_lib (numba kernels included) costs
seconds, more than many conditions compute. Conditions therefore run in batches: one
papermill run executes one notebook that holds the condition notebook once per condition of the
batch,
each copy with its own injected parameters and preceded by `%reset -f` (a clean namespace;
imported modules stay loaded). The executed batch is split back into one notebook per
condition, exactly as a single papermill run would have written it. A condition that fails is
reported with its error and the rest of its batch runs on. A worker keeps its kernel from one
batch to the next (`_worker_kernel`), so only its first batch pays the kernel start and the
imports; a kernel that died is replaced. papermill writes the executed notebook once, when
the batch ends, not at every cell's start and end (`_SAVE_AT_END`).

Executors. By default the batches run on a local process pool (`workers` processes). Given a
Dask distributed scheduler (`scheduler="tcp://host:8786"`, a `distributed.Client`, or the
environment variable CRANE_SCHEDULER, which `python -m crane_book.pipeline
--scheduler` sets), they run on its workers instead. The workers must run the same crane_lib
(version and source digest, checked before any work) and see the results folder at the same
path (a shared filesystem; checked too), because results land through the same record
writers whichever process executes them and the cache keys live there. A worker that dies
mid-batch has its batch retried elsewhere by the scheduler; files are only ever renamed into
place complete, so nothing half-written remains.
"""

from __future__ import annotations

import math
import os
import shutil
import threading
import time
import uuid
from concurrent.futures import as_completed as futures_as_completed
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from crane_book import kernels, keys, options
from crane_book.workers import worker_pool
from crane_lib.errors import atomic_write
from crane_lib.parameter_sets import condition_name, read_conditions  # noqa: F401 (the sweep's API)
from crane_lib.paths import REPO_ROOT, RESULTS_DIR

SCHEDULER_ENV = "CRANE_SCHEDULER"
# seconds to wait for a scheduler before giving up (an unreachable address fails fast)
CONNECT_TIMEOUT_S = 10.0
# a batch holds at most this many conditions (smaller when there are few per worker)
MAX_BATCH = 8
# tag of the cell that marks where a condition starts in a batch notebook
CONDITION_TAG = "sweep-condition"
RESET_TAG = "sweep-reset"


class SchedulerError(RuntimeError):
    """The Dask scheduler cannot be used: unreachable, or its workers differ from this client."""


def code_parts(notebook: Path) -> dict:
    """The source of every crane_lib module the notebook imports, transitively (key parts)."""
    return keys.code_parts(files=[notebook])


def condition_key(notebook: Path, parameters: dict, inputs: list[Path], code: dict) -> keys.Key:
    """What decides a condition's record: the notebook, its parameters, inputs and `code` parts."""
    return keys.record_key(inputs=inputs, parameters=parameters, sources=[notebook], code=code)


@dataclass
class ConditionOutcome:
    """What the sweep reports per condition.

    name, parameters  the condition
    status            "cached" (key unchanged, not run), "ran", or "failed"
    seconds           wall time of the condition's cells; the first condition of a batch also
                      carries the batch's time outside cells (kernel start, notebook I/O)
    error             the failing cell's last error line ("failed" only)
    cells_s           execution time of the condition's cells (papermill's per-cell timing)
    setup_s           of which the notebook's setup cell (its first code cell other than parameters:
                      imports)
    worker            where it ran ("local" or the Dask worker's address)
    """

    name: str
    parameters: dict
    status: str  # "cached", "ran", or "failed"
    seconds: float
    error: str = ""
    cells_s: float = 0.0
    setup_s: float = 0.0
    worker: str = ""


class SweepReport(list):
    """The outcomes in condition order (a list, as `run_sweep` always returned) and how they ran:
    `wall_s` the sweep's wall time, `executor` "local" or "dask <address>", `batches` the sizes
    of the batches submitted, `log` how many conditions were reused and why the others ran."""

    def __init__(
        self,
        outcomes=(),
        wall_s: float = 0.0,
        executor: str = "local",
        batches=(),
        workers: int = 1,
    ):
        super().__init__(outcomes)
        self.log = keys.StepLog("sweep")  # reused and recomputed conditions, and why
        self.wall_s = wall_s
        self.executor = executor
        self.batches = list(batches)
        self.workers = workers


def breakdown(report: SweepReport) -> str:
    """Where a sweep's time went, as lines of text (the benchmarks print it).

    Capacity is wall time x workers. In-notebook compute is the time the notebook's cells ran for
    each condition, less its setup cell (imports, model load); the rest of the capacity is
    overhead: kernel start and notebook I/O, setup cells, and workers waiting (the driver's
    cache keys, pool start, the last batches running alone)."""
    ran = [o for o in report if o.status != "cached"]
    capacity = report.wall_s * max(report.workers, 1)
    cells = sum(o.cells_s for o in ran)
    setup = sum(o.setup_s for o in ran)
    outside = sum(o.seconds - o.cells_s for o in ran)
    compute = cells - setup
    waiting = capacity - cells - outside
    share = (lambda x: 100 * x / capacity) if capacity > 0 else (lambda x: float("nan"))
    return "\n".join(
        [
            f"sweep of {len(ran)} conditions in {len(report.batches)} batches {report.batches} on "
            f"{report.executor} "
            f"({report.workers} workers): wall {report.wall_s:.1f} s, capacity (wall x workers) "
            f"{capacity:.1f} s",
            f"  in-notebook compute (cells, less setup)  {compute:8.1f} s  {share(compute):5.1f} %",
            f"  setup cells (imports, model load)        {setup:8.1f} s  {share(setup):5.1f} %",
            f"  kernel start and notebook I/O            {outside:8.1f} s  {share(outside):5.1f} %",
            f"  workers waiting (driver, pool, tail)     {waiting:8.1f} s  {share(waiting):5.1f} %",
            f"  overhead = 1 - compute / capacity: {share(capacity - compute):.1f} %",
        ]
    )


# ----------------------------------------------------------------------------- batch notebooks


def _read_notebook(path: Path):
    import jupytext

    notebook = jupytext.read(path)
    # papermill needs to know the kernel; the notebooks carry it in their header, but be explicit
    notebook.metadata.setdefault(
        "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
    )
    notebook.metadata.setdefault("language_info", {"name": "python"})
    return notebook


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def _parameters_cell(parameters: dict):
    import nbformat
    from papermill.translators import translate_parameters

    cell = nbformat.v4.new_code_cell(
        translate_parameters("python3", "python", parameters, "Parameters")
    )
    cell.metadata["tags"] = ["injected-parameters"]
    return cell


def batch_notebook(source_nb, conditions: list[dict]):
    """One notebook holding the source once per condition: a marker cell, `%reset -f`, then the
    source's cells with the condition's parameters injected after its `parameters` cell, as
    papermill injects them. Returns (notebook, [(first, end) cell span])."""
    import copy

    import nbformat

    cells, spans = [], []
    for k, parameters in enumerate(conditions):
        first = len(cells)
        marker = nbformat.v4.new_markdown_cell(
            f"**Sweep condition {k + 1} of {len(conditions)}:** `{condition_name(parameters)}`"
        )
        marker.metadata["tags"] = [CONDITION_TAG]
        cells.append(marker)
        reset = nbformat.v4.new_code_cell(
            "%reset -f"
        )  # also before the first: the kernel may have run a batch before
        reset.metadata["tags"] = [RESET_TAG]
        cells.append(reset)
        injected = False
        for cell in source_nb.cells:
            cell = copy.deepcopy(cell)
            cell["id"] = f"c{k}-{cell.get('id', len(cells))}"[
                :64
            ]  # cell ids are unique within a notebook
            cells.append(cell)
            if not injected and "parameters" in _tags(cell):
                cells.append(_parameters_cell(parameters))
                injected = True
        if not injected:  # no parameters cell: papermill puts the parameters first
            cells.insert(first + 2, _parameters_cell(parameters))
        spans.append((first, len(cells)))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(source_nb.metadata))
    return notebook, spans


def _duration(cell) -> float:
    value = cell.get("metadata", {}).get("papermill", {}).get("duration")
    return float(value) if value is not None else 0.0


def _condition_notebook(executed, span, parameters: dict):
    """The executed cells of one condition as a notebook of its own (marker and reset cells
    dropped)."""
    import copy

    import nbformat

    cells = [
        c
        for c in executed.cells[span[0] : span[1]]
        if not ({CONDITION_TAG, RESET_TAG} & set(_tags(c)))
    ]
    metadata = copy.deepcopy(executed.metadata)
    metadata.setdefault("papermill", {})["parameters"] = parameters
    return nbformat.v4.new_notebook(cells=copy.deepcopy(cells), metadata=metadata)


def _cell_times(cells) -> tuple[float, float]:
    """(all cells, the setup cell) of one condition's cells, s. The setup cell is the notebook's
    first code cell that is not a parameters cell (its imports), before or after the parameters
    cell."""
    total = sum(_duration(c) for c in cells)
    for cell in cells:
        if cell.cell_type == "code" and not (
            {"parameters", "injected-parameters", RESET_TAG} & set(_tags(cell))
        ):
            return total, _duration(cell)
    return total, 0.0


def _write_notebook(path: Path, notebook) -> None:
    import nbformat

    with atomic_write(path, encoding="utf-8") as handle:
        nbformat.write(notebook, handle)


def _limit_threads(threads: int) -> None:
    """Kernels started from here inherit these: one condition's numba and BLAS threads (BLAS
    threads only where the reference arithmetic does not fix them: they change its sums)."""
    from crane_lib import arithmetic

    fixed = arithmetic.reference_environment()
    for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if name not in fixed:
            os.environ[name] = str(threads)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "local"


# ----------------------------------------------------------------------------- the kernel of a
# worker

_SAVE_AT_END = (
    "crane-save-at-end"  # the papermill engine run_batch uses (registered by _register_engine)
)


def _register_engine() -> None:
    """papermill's nbclient engine, writing the executed notebook once when the run ends (by
    success,
    a cell's error or a dead kernel: papermill's notebook_complete saves in a `finally`) instead of
    at
    every cell's start and end. A batch notebook is rewritten whole at every save, so those writes
    grew with the batch (about 0.7 s for a batch of four OLS/SDP conditions)."""
    from papermill.engines import NBClientEngine, papermill_engines

    class SaveAtEndEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            output_path, nb_man.output_path = nb_man.output_path, None
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                nb_man.output_path = output_path

    papermill_engines.register(_SAVE_AT_END, SaveAtEndEngine)


# One kernel manager per worker process, working folder, thread setting and calling thread (its
# asyncio objects belong to that thread), kept from one batch to the next; nbclient starts the
# kernel on first use and, as the manager is not its own, leaves it running. The process id is
# part of the key: a forked worker inherits this dict, never its parent's kernels.
_KERNELS: dict = {}


def _worker_kernel(cwd: Path):
    """(key, kernel manager) this worker runs notebooks in `cwd` with; a dead kernel is replaced."""
    from jupyter_core.utils import run_sync

    key = (os.getpid(), str(cwd), os.environ.get("NUMBA_NUM_THREADS"), threading.get_ident())
    manager = _KERNELS.get(key)
    if manager is not None and manager.has_kernel and not run_sync(manager.is_alive)():
        _drop_kernel(key)
        manager = None
    if manager is None:
        manager = _KERNELS[key] = kernels.kernel_manager()
    return key, manager


@lru_cache(maxsize=None)
def _prepare_worker(pid: int) -> None:
    """Once per worker process (`pid`: a forked child does it again): the engine, and the kernels'
    shutdown when the worker ends (a local pool's process at the pool's shutdown, a Dask worker
    when it closes; multiprocessing runs its finalizers where atexit would not)."""
    from multiprocessing.util import Finalize

    _register_engine()
    Finalize(None, _shutdown_kernels, exitpriority=10)


def _drop_kernel(key) -> None:
    manager = _KERNELS.pop(key, None)
    try:
        kernels.shut_down(manager)
    except (RuntimeError, OSError) as error:  # already gone with its process: nothing to stop
        print(
            f"sweep: kernel of {key[1]} could not be shut down cleanly ({type(error).__name__}: "
            f"{error})"
        )


def _shutdown_kernels() -> None:
    for key in [k for k in _KERNELS if k[0] == os.getpid()]:
        _drop_kernel(key)


def run_batch(
    notebook_file: str,
    batch: list[tuple[dict, keys.Key]],
    out_dir: str,
    threads: int = 0,
    keep_kernel: bool = True,
) -> list[ConditionOutcome]:
    """Run the notebook for every (parameters, key) of `batch` in as few kernels as failures allow;
    the worker's kernel is kept for its next batch unless `keep_kernel` is False.

    Every file lands by rename: the executed notebook of each condition, then its key
    (`keys.KeyStore`; the key marks a condition as done, so it is written last, and only when the
    condition succeeded)."""
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    if threads:
        _limit_threads(threads)
    notebook_file, out_dir = Path(notebook_file), Path(out_dir)
    source_nb = _read_notebook(notebook_file)
    work = out_dir / ".work"
    work.mkdir(parents=True, exist_ok=True)
    where = _worker_name()
    outcomes: list[ConditionOutcome] = []
    pending = list(batch)
    while pending:
        notebook, spans = batch_notebook(source_nb, [p for p, _ in pending])
        token = uuid.uuid4().hex
        source, executed_path = work / f"{token}.input.ipynb", work / f"{token}.ipynb"
        nbformat.write(notebook, source)
        started = time.perf_counter()
        failure = None
        _prepare_worker(os.getpid())
        # without keep_kernel, the batch gets a kernel of its own, shut down after it
        if keep_kernel:
            kernel_key, kernel = _worker_kernel(notebook_file.parent)
        else:
            kernel_key = ("batch", token)
            kernel = _KERNELS[kernel_key] = kernels.kernel_manager()
        drop = not keep_kernel
        try:
            papermill.execute_notebook(
                str(source),
                str(executed_path),
                kernel_name="python3",
                cwd=str(notebook_file.parent),
                progress_bar=False,
                engine_name=_SAVE_AT_END,
                km=kernel,
            )
        except PapermillExecutionError as err:
            failure = (
                err.cell_index if hasattr(err, "cell_index") else None,
                f"{err.ename}: {err.evalue}",
            )
        except (
            Exception
        ) as err:  # a kernel that died, a timeout: the condition that was running fails
            drop = True  # and the rest of the batch gets a new kernel
            failure = (
                None,
                f"{type(err).__name__}: "
                f"{str(err).strip().splitlines()[-1] if str(err).strip() else repr(err)}",
            )
        finally:
            if drop:
                _drop_kernel(kernel_key)
            source.unlink(missing_ok=True)
        wall = time.perf_counter() - started
        executed = (
            nbformat.read(executed_path, as_version=4) if executed_path.exists() else notebook
        )
        executed_path.unlink(missing_ok=True)
        if failure is None:
            failed_at = len(pending)
        else:
            cell_index = failure[0]
            if cell_index is None:  # the first condition whose cells did not all run
                cell_index = next(
                    (
                        i
                        for i, c in enumerate(executed.cells)
                        if c.cell_type == "code" and c.get("execution_count") is None
                    ),
                    len(executed.cells) - 1,
                )
            failed_at = next(
                k for k, (a, b) in enumerate(spans) if a <= cell_index < b or k == len(spans) - 1
            )
        in_cells, before = 0.0, len(outcomes)
        for k, ((parameters, key), span) in enumerate(zip(pending[: failed_at + 1], spans)):
            name = condition_name(parameters)
            cells = executed.cells[span[0] : span[1]]
            cells_s, setup_s = _cell_times(cells)
            in_cells += cells_s
            _write_notebook(
                out_dir / "notebooks" / f"{name}.ipynb",
                _condition_notebook(executed, span, parameters),
            )
            if k < failed_at:
                keys.KeyStore(out_dir.name, folder=out_dir / "keys").store(name, key)
                outcomes.append(
                    ConditionOutcome(
                        name,
                        parameters,
                        "ran",
                        cells_s,
                        cells_s=cells_s,
                        setup_s=setup_s,
                        worker=where,
                    )
                )
            elif failure is not None:
                outcomes.append(
                    ConditionOutcome(
                        name,
                        parameters,
                        "failed",
                        cells_s,
                        failure[1],
                        cells_s=cells_s,
                        setup_s=setup_s,
                        worker=where,
                    )
                )
        # the batch's time outside any cell (kernel start, reading and writing notebooks) goes to
        # its first condition
        outcomes[before].seconds += max(wall - in_cells, 0.0)
        pending = pending[failed_at + 1 :]
    return outcomes


# ----------------------------------------------------------------------------- executors


def _identity(results_token: str | None = None) -> dict:
    """What a worker runs: crane_lib's version and source digest, and whether it sees the results
    folder."""
    import crane_lib as lib
    from crane_lib import arithmetic
    from crane_lib import fingerprint as fp

    return {
        "version": lib.__version__,
        "source": fp.package_digest(),
        "arithmetic": arithmetic.signature(),
        "sees_results": None if results_token is None else Path(results_token).exists(),
    }


def connect(scheduler, timeout_s: float = CONNECT_TIMEOUT_S):
    """A `distributed.Client` for `scheduler` (an address, or a Client passed through).

    A malformed address or timeout, an unreachable address, and a peer that does not answer as a
    Dask scheduler within `timeout_s` (another service on that port) are each a SchedulerError
    naming the address, raised before any work within about `timeout_s` + CLIENT_GRACE_S."""
    try:
        from distributed import Client
    except ImportError:
        raise SchedulerError(
            "sweeps on a Dask scheduler need the `distributed` package (pip install distributed)"
        ) from None
    if not isinstance(scheduler, str):
        return scheduler
    try:
        address = options.scheduler_address(scheduler)
    except ValueError as error:
        raise SchedulerError(f"Dask scheduler {options.shown(scheduler)}: {error}") from None
    try:
        timeout_s = options.timeout_seconds(timeout_s)
    except ValueError as error:
        raise SchedulerError(f"timeout {options.shown(timeout_s)} for {address}: {error}") from None
    started = time.monotonic()
    if not address.startswith("inproc://"):  # an in-process scheduler has no port to knock on
        _reach(address, timeout_s)
    left = max(timeout_s - (time.monotonic() - started), 1.0)
    return _start_client(Client, address, left, timeout_s)


# seconds between attempts while a port refuses connections (a scheduler starting up)
RETRY_S = 0.1
# seconds a starting client may run past its timeout before it is abandoned: distributed's
# handshake read has no timeout of its own, so a peer that never answers would hang it forever
CLIENT_GRACE_S = 1.0


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else 'no detail'}"


def _reach(address: str, timeout_s: float) -> None:
    """Return once something accepts a TCP connection at the address's host and port (retrying
    while it refuses, for `timeout_s`); otherwise raise SchedulerError."""
    import socket

    host, port = address.split("://", 1)[1].rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    while True:  # bounded: each pass sleeps RETRY_S or ends, and the deadline ends the retries
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=max(left, 0.01)):
                return
        except ConnectionRefusedError as error:
            if left <= RETRY_S:
                raise SchedulerError(
                    f"Dask scheduler {address} is unreachable ({_first_line(error)}, "
                    f"retried for {timeout_s:g} s)"
                ) from None
        except OSError as error:  # a name that does not resolve, no route, no answer in time
            raise SchedulerError(
                f"Dask scheduler {address} is unreachable ({_first_line(error)})"
            ) from None
        time.sleep(RETRY_S)


def _start_client(client_class, address: str, timeout_s: float, stated_s: float):
    """A client of `address` started in a thread abandoned after `timeout_s` + CLIENT_GRACE_S;
    a client that failed or was abandoned is closed here, while its event loop still runs (left
    to the interpreter's exit, its close waits out twice its timeout). `stated_s`: the timeout
    the caller gave, which a refusal names."""
    client = client_class.__new__(client_class)  # a handle even when the constructor fails
    outcome: list = []

    def start():
        try:
            client.__init__(address, timeout=timeout_s, set_as_default=False)
            outcome.append(None)
        except Exception as error:  # a peer that speaks Dask but is no scheduler fails anyhow
            outcome.append(error)

    thread = threading.Thread(target=start, name=f"connect {address}", daemon=True)
    thread.start()
    thread.join(timeout_s + CLIENT_GRACE_S)
    failure = list(outcome)  # before the close below makes a waiting handshake fail anyhow
    if failure == [None]:
        return client
    _close_quietly(client)
    thread.join(CLIENT_GRACE_S)
    if failure:
        raise SchedulerError(f"no Dask scheduler answers at {address} ({_first_line(failure[0])})")
    raise SchedulerError(
        f"no Dask scheduler answers at {address}: it accepts connections but gave no Dask "
        f"handshake within {stated_s:g} s (another service on that port?)"
    )


def _close_quietly(client) -> None:
    """Close a client now, whatever state its start left it in; its finaliser then does nothing."""
    try:
        client.close(timeout=CLIENT_GRACE_S)
    except Exception:  # noqa: BLE001 - a client that never started may fail to close in any way
        pass
    client.status = "closed"  # its __del__ would otherwise retry the close at exit


def check_workers(
    client, results_dir: Path | None = None, timeout_s: float = CONNECT_TIMEOUT_S
) -> list[str]:
    """Refuse workers that run another crane_lib (both versions named) or other floating-point
    kernels, or cannot see the results folder, and workers that do not answer within
    `timeout_s` (a hung worker)."""
    token = None
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        token = results_dir / f".sweep-visible-{uuid.uuid4().hex}"
        token.write_text("this folder is shared with the sweep's workers\n", encoding="utf-8")
    try:
        # distributed's sync layer takes callback_timeout (Client.run has no timeout of its own)
        # and cancels the broadcast: a worker whose event loop is stuck would otherwise stall the
        # check, and the pipeline with it, for ever
        identities = client.run(
            _identity, None if token is None else str(token), callback_timeout=timeout_s
        )
    except TimeoutError:
        raise SchedulerError(
            f"Dask scheduler {client.scheduler.address}: a worker did not answer "
            f"the check within {timeout_s:g} s (hung or overloaded)"
        ) from None
    finally:
        if token is not None:
            token.unlink(missing_ok=True)
    if not identities:
        raise SchedulerError(f"Dask scheduler {client.scheduler.address} has no workers")
    mine = _identity()
    for address, theirs in sorted(identities.items()):
        if (theirs["version"], theirs["source"]) != (mine["version"], mine["source"]):
            raise SchedulerError(
                f"Dask worker {address} runs crane_lib {theirs['version']} (source "
                f"{theirs['source'][:12]}), this client "
                f"crane_lib {mine['version']} (source {mine['source'][:12]}): start the workers "
                "from the same checkout"
            )
        if theirs.get("arithmetic") != mine["arithmetic"]:
            raise SchedulerError(
                f"Dask worker {address} runs the {theirs.get('arithmetic')} arithmetic, this "
                "client the "
                f"{mine['arithmetic']}: start the workers with the environment that "
                "`python crane_lib/arithmetic.py` prints (the Makefile exports it)"
            )
        if theirs["sees_results"] is False:
            raise SchedulerError(
                f"Dask worker {address} cannot see the results folder {results_dir}: "
                "mount it at the same path on every worker"
            )
    return sorted(identities)


class _LocalPool:
    name = "local"

    def __init__(self, workers: int):
        self.workers = workers
        self._pool = worker_pool(workers, start_method=None)

    def submit(self, *args):
        return self._pool.submit(*args)

    def as_completed(self, futures):
        return futures_as_completed(futures)

    def close(self):
        self._pool.shutdown()


class _DaskPool(_LocalPool):
    def __init__(self, client, retries: int = 2):
        self.name = f"dask {client.scheduler.address}"
        self.workers = max(len(client.scheduler_info().get("workers", {})), 1)
        # pure=False: every submission runs (the work writes files); retries cover a failed
        # attempt; the scheduler itself reschedules the task of a worker that died.
        # The client's executor hands out concurrent.futures futures, so waiting is the same as
        # locally.
        self._pool = client.get_executor(pure=False, retries=retries)

    def close(self):
        pass  # the client belongs to the caller (or to this process's connection cache)


_CLIENTS: dict = {}


def dask_client(scheduler, timeout_s: float = CONNECT_TIMEOUT_S):
    """One checked client per scheduler address for this process (connected and checked once)."""
    if not isinstance(scheduler, str):  # a Client made by the caller: checked on every sweep
        check_workers(scheduler, RESULTS_DIR, timeout_s)
        return scheduler
    if scheduler not in _CLIENTS:
        client = connect(scheduler, timeout_s)
        try:
            check_workers(client, RESULTS_DIR, timeout_s)
        except BaseException:
            _close_quietly(client)  # now, not at exit, where its close would stall
            raise
        _CLIENTS[scheduler] = client
    return _CLIENTS[scheduler]


def batches(
    pending: list, workers: int, batch_size: int | None = None, group_of=None
) -> list[list]:
    """The pending conditions in batches of at most `batch_size` (default: about four batches per
    worker, at most MAX_BATCH): enough batches that a worker given a slow one is not left behind
    (a kept kernel makes a small batch cheap), few where there are many conditions.
    Consecutive conditions with the same `group_of(condition)` (the same recording: the four
    intervals of one trajectory) are kept in one batch where they fit, so the kernel reads and
    prepares that recording once (crane_lib's caches live as long as the kernel)."""
    if not pending:
        return []
    size = batch_size or max(1, min(MAX_BATCH, math.ceil(len(pending) / (4 * max(workers, 1)))))
    groups: list[list] = []
    for item in pending:
        if (
            groups
            and group_of is not None
            and group_of(item) == group_of(groups[-1][-1])
            and len(groups[-1]) < size
        ):
            groups[-1].append(item)
        else:
            groups.append([item])
    out: list[list] = []
    for (
        group
    ) in groups:  # whole groups into batches while they fit; a group larger than a batch is split
        if out and len(out[-1]) + len(group) <= size and group_of is not None:
            out[-1].extend(group)
        elif group_of is None and out and len(out[-1]) < size:
            room = size - len(out[-1])
            out[-1].extend(group[:room])
            out.extend([group[room:]] if group[room:] else [])
        else:
            out.append(group)
    return out


def run_sweep(
    notebook_file,
    conditions: list[dict],
    sweep_name: str,
    inputs_of=lambda parameters: [],
    workers: int | None = None,
    show_progress: bool = True,
    scheduler=None,
    batch_size: int | None = None,
    keep_kernels: bool = True,
) -> SweepReport:
    """Run the notebook once per condition, skipping conditions whose key is unchanged.

    `inputs_of(parameters)` names the input files a condition reads (recordings, bundles), so
    that a changed input reruns it. Failures are reported per condition; the others go on.
    `scheduler`: a Dask scheduler address or Client (default: $CRANE_SCHEDULER if set, else a
    local pool of `workers` processes). `batch_size`: conditions per kernel (default: see
    `batches`). `keep_kernels`: a worker keeps its kernel from one batch to the next (with
    batch_size=1 and keep_kernels=False every condition gets a kernel of its own, the driver
    before batching). Returns the outcomes in condition order.
    """
    from tqdm.auto import tqdm

    started = time.perf_counter()
    notebook_file = Path(notebook_file)
    if not notebook_file.is_absolute():
        notebook_file = REPO_ROOT / notebook_file
    out_dir = RESULTS_DIR / "sweeps" / sweep_name
    code = code_parts(notebook_file)
    store = keys.KeyStore(sweep_name, folder=out_dir / "keys")
    log = keys.StepLog(sweep_name)
    outcomes: list[ConditionOutcome] = []
    pending = []
    for parameters in conditions:
        name = condition_name(parameters)
        key = condition_key(
            notebook_file, parameters, [Path(p) for p in inputs_of(parameters)], code
        )
        reasons = store.stale(name, key)
        log.note(reasons)
        if not reasons:
            outcomes.append(ConditionOutcome(name, parameters, "cached", 0.0))
        else:
            pending.append((parameters, key))
    scheduler = scheduler if scheduler is not None else (os.environ.get(SCHEDULER_ENV) or None)
    report = SweepReport()
    report.log = log
    if pending:
        if scheduler is not None:
            pool = _DaskPool(dask_client(scheduler))
            threads = 0  # the workers' own settings
        else:
            workers = workers or min(len(pending), os.cpu_count() or 1) or 1
            pool = _LocalPool(workers)
            threads = max(1, (os.cpu_count() or 1) // workers)
        report.executor, report.workers = pool.name, pool.workers
        groups = batches(
            pending,
            pool.workers,
            batch_size,
            group_of=lambda item: tuple(str(p) for p in inputs_of(item[0])),
        )
        report.batches = [len(g) for g in groups]
        with tqdm(
            total=len(conditions),
            initial=len(outcomes),
            desc=f"sweep {sweep_name}",
            unit="condition",
            disable=not show_progress,
        ) as bar:
            try:
                futures = [
                    pool.submit(
                        run_batch, str(notebook_file), group, str(out_dir), threads, keep_kernels
                    )
                    for group in groups
                ]
                for future in pool.as_completed(futures):
                    for outcome in future.result():
                        outcomes.append(outcome)
                        bar.set_postfix_str(f"{outcome.name}: {outcome.status}")
                        bar.update(1)
            finally:
                pool.close()
                # temporaries of attempts whose process died (the retry wrote its own)
                shutil.rmtree(out_dir / ".work", ignore_errors=True)
    order = {condition_name(p): i for i, p in enumerate(conditions)}
    outcomes.sort(key=lambda o: order[o.name])
    report.extend(outcomes)
    report.wall_s = time.perf_counter() - started
    return report
