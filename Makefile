# Multiview Lab — `make run` and `make test` are the two quick-start commands.
# Both create .venv if missing and install the project with its pinned dependencies.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
VIZ_PORT    ?= 4141
MLFLOW_PORT ?= 5000
PIPELINE    ?= pbmvboost
ENV         ?= base

export KEDRO_DISABLE_TELEMETRY := 1

.PHONY: install run test lint viz viz-build mlflow-ui benchmarks clean-data paper paper-report archive

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

## Run the main job: PB-MVBoost on MNIST1/MNIST2 (Table 1 and Figure 4), tracked in MLflow.
run: $(STAMP)
	$(BIN)/kedro run --pipelines=$(PIPELINE) --env=$(ENV)

## Run the test suite on TEST_WORKERS processes (pytest-xdist; each test file stays on one
## worker, so a module's end-to-end run is set up once). TEST_WORKERS=0: in this process.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks
	$(BIN)/ruff format --check src tests benchmarks

## Browse the pipelines' DAG in kedro-viz on http://$(HOST):$(VIZ_PORT)
viz: $(STAMP)
	$(BIN)/kedro viz run --host $(HOST) --port $(VIZ_PORT) --no-browser

## Static kedro-viz export in build/ (offline, no server)
viz-build: $(STAMP)
	$(BIN)/kedro viz build

## Browse runs in the MLflow UI on http://$(HOST):$(MLFLOW_PORT) (the project's SQLite store; one worker: 2 cores)
mlflow-ui: $(STAMP)
	$(BIN)/mlflow ui --backend-store-uri sqlite:///mlflow.db --host $(HOST) --port $(MLFLOW_PORT) --workers 1

## The papers' protocols (hours to tens of CPU-hours on 2 cores): each pipeline of
## PAPER_PIPELINES with --env=paper at low priority, one after another, each resuming from the
## unit cache and the repository's unit archive; after each (finished or not) its finished units
## are added to the archive (make archive), for git. Redirected to a file (a background run),
## the console's lines are 200 columns wide instead of 80, so most log records fit on one line.
PAPER_PIPELINES ?= mvfs miml memd pbmvboost gbc
NICE ?= 15
paper: $(STAMP)
	@test -t 1 || export COLUMNS=$${COLUMNS:-200}; \
	for p in $(PAPER_PIPELINES); do \
		echo "== kedro run --pipelines=$$p --env=paper (nice $(NICE))"; \
		nice -n $(NICE) $(BIN)/kedro run --pipelines=$$p --env=paper; rc=$$?; \
		test ! -d data/02_intermediate/unit_cache || $(MAKE) --no-print-directory archive || exit 1; \
		test $$rc -eq 0 || exit $$rc; done

## The reproduction report from the repository's unit archive, e.g. on a fresh clone: each
## pipeline of PAPER_PIPELINES with --env=paper computing no unit (execution.cache_only; a unit
## missing from the archive is an error naming it) and refitting no kept model (the archive
## keeps none, so none is logged), then the reproduction pipeline. MIML's Table 4 timing study
## still runs: it measures times, which no archive holds.
paper-report: $(STAMP)
	@test -t 1 || export COLUMNS=$${COLUMNS:-200}; \
	for p in $(PAPER_PIPELINES); do \
		echo "== kedro run --pipelines=$$p --env=paper, from the unit archive"; \
		$(BIN)/kedro run --pipelines=$$p --env=paper \
			--params="execution.cache_only=true,execution.refit_kept_models=false" || exit 1; done; \
	$(BIN)/kedro run --pipelines=reproduction

## Add the unit cache's finished units to results/units/paper-<commit>.jsonl.gz (only new keys;
## refused while src/ has uncommitted changes: the file's header names the code's commit).
archive: $(STAMP)
	$(BIN)/python -m multiview_lab.protocol.archive data/02_intermediate/unit_cache \
		results/units/paper-$$(git rev-parse --short=7 HEAD).jsonl.gz --note "paper envs (make paper)"

## On-demand speed/memory checks (not tests): prints ratios against same-run baselines.
benchmarks: $(STAMP)
	@for b in benchmarks/bench_*.py; do \
		case $$b in *bench_paper_cost.py) echo "== $$b: skipped (hours at the paper settings; run it by hand)"; continue;; esac; \
		echo "== $$b"; $(BIN)/python $$b || exit 1; done

## Open the notebooks (one per pipeline, reading its last run) in JupyterLab on
## http://$(HOST):$(NOTEBOOK_PORT) (no browser: open the printed URL, token included).
NOTEBOOK_PORT ?= 8888
.PHONY: notebook
notebook: $(STAMP)
	@test -x $(BIN)/jupyter-lab || $(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev,notebook]"
	$(BIN)/jupyter lab --ServerApp.ip=$(HOST) --ServerApp.port=$(NOTEBOOK_PORT) --no-browser \
		--ServerApp.root_dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root)
