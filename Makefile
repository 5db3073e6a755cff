# The two commands of a fresh clone (see README.md):
#   make book    build the book: creates .venv, runs every chapter, HTML in _build/html/index.html
#   make test    run the test suite (creates .venv too)
# PROFILE=quick builds the small CI profile; the default is the full profile.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROFILE ?= full
# --all: Sphinx rebuilds only pages whose source changed, but a chapter's numbers also depend on
# the data and results the pipeline just (re)built, so every page is executed on every build
JB_FLAGS := --config book/_config.yml --toc book/_toc.yml -W -n --keep-going --all

.PHONY: book test env model benchmarks clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[book,test]"
	touch $(STAMP)

env: $(STAMP)

# generate (or load from .cache/) the symbolic model's numeric kernels once, before parallel users
model: $(STAMP)
	$(PY) -m crane_lib.model.dynamics

test: model
	$(PY) -m pytest -n 2 -q

# the data steps (twin recordings, per-condition sweeps) are cached by content; then every chapter runs
book: model
	CRANE_PROFILE=$(PROFILE) $(PY) -m crane_lib.reporting.pipeline --profile $(PROFILE)
	CRANE_PROFILE=$(PROFILE) $(VENV)/bin/jupyter-book build . $(JB_FLAGS)
	@echo "book: $(CURDIR)/_build/html/index.html"

benchmarks: model
	$(PY) -m benchmarks

clean:
	rm -rf _build .cache results
