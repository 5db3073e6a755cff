# The two commands of a fresh clone (see README.md):
#   make book    build the book: creates .venv, runs every chapter, HTML in _build/html/index.html
#   make test    run the test suite (creates .venv too)
#   make numbers after `make book`: its printed numbers against book/numbers_$(PROFILE).csv
# PROFILE=quick builds the small CI profile; the default is the full profile.
# SCHEDULER=tcp://host:8786 runs the per-condition sweeps on that Dask scheduler's workers (same checkout,
# results folder shared at the same path); without it they run on a local pool of JOBS processes.
#   make clie-faithful [PROFILE=...] [SCHEDULER=...]   the faithful CLIE study (all 160 conditions in the full profile)
#   make benchmarks [SMOKE=1]                            every benchmark (SMOKE=1: smallest sizes, seconds each)
#   make benchmarks TARGETS=1   the decided targets measured in one run (~60 min), their table
# TWIN=field records the data set on the field twin (book/register_nonideality.md); its results go to results/twin-field/.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the reference floating-point kernels (crane_lib/arithmetic.py), exported to every command so
# that they are set before numpy loads: the same numbers on every x86-64 machine
$(foreach setting,$(shell $(PYTHON) crane_lib/arithmetic.py),$(eval export $(setting)))
# numba formats a message, through colorama, for each overload it rejects while typing a kernel
# (some 50,000 for one parameter set's); plain messages compile the four sets' kernels about a
# twentieth faster (35.1 and 36.8 CPU-s against 37.9, one process). Error text only: the compiled
# code is the same
NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING ?= 1
export NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING
PROFILE ?= full
JOBS ?= 2
SCHEDULER ?=
TWIN ?= default
# PROFILE, TWIN, JOBS and SCHEDULER reach the commands through the environment, quoted there, so
# a value is one argument however odd (spaces, quotes, `;`) and the commands check it before any
# work (the pipeline and the pages refuse a PROFILE or TWIN they do not know, in one line)
export PROFILE TWIN JOBS SCHEDULER
PIPELINE_FLAGS := --profile "$$PROFILE" --jobs "$$JOBS" $${SCHEDULER:+--scheduler "$$SCHEDULER"}
# a twin other than the default writes its results beside the default's, in results/twin-TWIN/
# (the default's folder stays unset: the pages' keys read it)
BOOK_ENV := twin_results=$$([ "$$TWIN" = default ] || printf %s "$(CURDIR)/results/twin-$$TWIN"); \
	env CRANE_TWIN="$$TWIN" CRANE_PROFILE="$$PROFILE" \
	$${twin_results:+"CRANE_RESULTS_DIR=$$twin_results"}
# --all: Sphinx re-reads every page (from the executed-page cache), since a chapter's numbers also
# depend on the records the pipeline just (re)built, not only on its own source
JB_FLAGS := --config book/_config.yml --toc book/_toc.yml -W -n --keep-going --all

.PHONY: book test numbers env model benchmarks clie-faithful clean

# uv installs the same requirements as pip, downloading and installing in parallel (about 35 s
# against 2 minutes on a 2-core machine); where uv cannot be had, pip does it. Both compile the
# bytecode at install time: under PYTHONDONTWRITEBYTECODE every process would otherwise compile
# every module it imports (the test suite ran 100 s longer so)
# constraints.txt: the exact versions, so that every machine computes with the same libraries
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv && $(VENV)/bin/uv pip install --python $(PY) --quiet --compile-bytecode -c constraints.txt -e ".[book,test]" \
	  || { $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -c constraints.txt -e ".[book,test]"; }
	touch $(STAMP)

env: $(STAMP)

# generate (or load from .cache/) the symbolic model's numeric kernels once, before parallel users
# (the CRANE-X7's four parameter sets, the other shipped arms' reduced and full sets);
# and the project's own bytecode, as the install compiles the libraries': under
# PYTHONDONTWRITEBYTECODE each of the build's and the suite's few hundred processes would
# otherwise compile the crane_lib modules it imports again (about 0.2 s each)
model: $(STAMP)
	$(PY) -m compileall -q -j 0 crane_lib crane_book benchmarks
	$(PY) -m crane_lib.model.dynamics

# three pytest workers on the 2 timed cores: the third fills the time a worker waits on a
# real-time emulator, a timeout or a subprocess. From a fresh clone 387 s against 411 s on 2
# workers (two runs, 411 s each), warm 291 s against 306 s. (Before the twin's loop compiled in
# half the time, a third gained nothing fresh: its workers compiled the same loops at once.)
test: model
	$(PY) -m pytest -n 3 --dist worksteal -q --durations=25

# the data steps (twin recordings, per-condition sweeps, every record) are cached by what decides
# them; then the pages whose text, code or records changed run (JOBS at once, into
# _build/.jupyter_cache; they only read records) and Sphinx renders them
book: model
	$(BOOK_ENV) $(PY) -m crane_book.pipeline $(PIPELINE_FLAGS)
	$(BOOK_ENV) $(PY) -m crane_book.pages --jobs "$$JOBS"
	$(BOOK_ENV) $(VENV)/bin/jupyter-book build . $(JB_FLAGS)
	@echo "book: $(CURDIR)/_build/html/index.html"

# the book's printed numbers against the committed manifest of its profile
# (book/numbers_quick.csv after `make book PROFILE=quick`, book/numbers_full.csv after the full
# `make book`): fails with the list of numbers that moved
numbers: $(STAMP)
	$(PY) -m crane_book.numbers check --manifest "book/numbers_$$PROFILE.csv"

# the faithful route of Appendix D-F over every condition (hours on two cores: give it a SCHEDULER)
clie-faithful: model
	$(BOOK_ENV) $(PY) -m crane_book.pipeline $(PIPELINE_FLAGS) --study clie_faithful

# SMOKE=1: every benchmark at its smallest size through the test that checks each (deselected
# from `make test`: the smoke runs are benchmarks, about 150 s of work)
benchmarks: model
	$(if $(SMOKE),$(PY) -m pytest -n 2 -q -m benchmark_smoke tests/test_benchmarks.py,\
	$(PY) -m benchmarks $(if $(TARGETS),--targets))

clean:
	rm -rf _build .cache results
