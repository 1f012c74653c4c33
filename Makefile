# The two commands of the README: `make run` and `make test`. Both set up .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE ?= resources/examples/refund_workflow.json

.PHONY: run test hooks lint linked typecheck contracts test-engine-headless test-suite bench bench-million clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)
	@$(MAKE) --no-print-directory hooks

# The repository's own git hooks (.githooks/commit-msg: subjects of at most 72 characters), installed with
# the set-up above. Outside a git checkout (a source archive) there is nothing to install.
hooks:
	@if git rev-parse --git-dir >/dev/null 2>&1; then git config core.hooksPath .githooks; fi

run: $(STAMP)
	$(BIN)/contextdeck gui $(EXAMPLE)

# The checks run beside the engine's tests, two jobs at a time: mypy needs one core, and those tests leave a core
# idle often (waiting out timeouts, signals and processes they started), so the checks cost their part little. The
# window's tests, which keep every core busy, run after both. Lines of the two jobs are interleaved whole.
test: $(STAMP)
	@$(MAKE) --no-print-directory -j2 --output-sync=line lint typecheck contracts test-engine-headless
	@$(MAKE) --no-print-directory test-suite

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy and import-linter read the package under its installed names (contextdeck.engine, contextdeck.gui,
# contextdeck._cli): the folders are mapped onto it by links, since the editable install's hook is hidden.
LINKED := build/typecheck/contextdeck

linked: $(STAMP)
	mkdir -p $(LINKED)
	ln -sfn $(CURDIR)/engine $(LINKED)/engine
	ln -sfn $(CURDIR)/gui $(LINKED)/gui
	mkdir -p $(LINKED)/resources
	ln -sfn $(CURDIR)/resources/__init__.py $(LINKED)/resources/  # the module; the examples are users' code
	for file in $(CURDIR)/packaging/contextdeck/*.py; do ln -sfn $$file $(LINKED)/; done

typecheck: linked
	$(BIN)/mypy

contracts: linked
	PYTHONPATH=build/typecheck $(BIN)/lint-imports

# Both parts run on every core (pytest-xdist): a test file that must keep one worker for itself says so with an
# `xdist_group` mark, which `--dist loadgroup` honours. `make test WORKERS=0` runs in this process alone.
WORKERS ?= auto
PARALLEL := -n $(WORKERS) --dist loadgroup

# The tests start many Python processes of the project's own code (command lines, worker processes, pytest again).
# Where the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE), each compiled the project from source
# again: the tests keep one cache of it under build/ instead, never beside the sources or a user's files. The
# benchmarks' Python uses it too: an installed application runs compiled bytecode, so a module's first use in a
# timed action must not be its compilation. Offscreen for those that open a window.
BYTECODE := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache
BENCH_PYTHON := $(BYTECODE) QT_QPA_PLATFORM=offscreen $(BIN)/python

# The engine's tests again, in an interpreter where importing Qt fails: the boundary is a checked fact.
test-engine-headless: $(STAMP)
	$(BYTECODE) CONTEXTDECK_BLOCK_QT=1 $(BIN)/python -m pytest -q $(PARALLEL) -p no:pytest-qt -W ignore::pytest.PytestConfigWarning \
		tests/engine tests/cli

# The rest of the suite, offscreen. The engine's and CLI's tests ran once already, in the stricter
# interpreter above (Qt unimportable); running them again with Qt loaded checks nothing more.
test-suite: $(STAMP)
	$(BYTECODE) QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PARALLEL) tests --ignore=tests/engine --ignore=tests/cli

# The engine (writes benchmarks/latest.json and the table in docs/performance.md), then the window and the
# document session on 100,000 messages, offscreen (its freeze run holds the 500-call Continue against the command
# line: benchmarks/continue_bench.py runs that part alone), then 10,000 trivial activity calls isolated and in-process,
# then validate and render of 100,000 messages against the Context build, `eval` over 200 inputs and a large schema
# checked against its metaschema. Several minutes; never part of `make test`.
bench: $(STAMP)
	$(BENCH_PYTHON) benchmarks/run.py
	$(BENCH_PYTHON) benchmarks/gui_bench.py
	$(BENCH_PYTHON) benchmarks/session_files.py
	$(BENCH_PYTHON) benchmarks/activities_bench.py
	$(BENCH_PYTHON) benchmarks/checks_bench.py
	$(BENCH_PYTHON) benchmarks/eval_bench.py
	$(BENCH_PYTHON) benchmarks/metaschema_bench.py
	$(MAKE) bench-million

# Issue 30 at a million messages: the engine (build, memory with 1,000 watches, edits; a process per workload)
# and every window action's GUI-thread CPU on both workloads. Tens of minutes and about 5 GB of memory at a time.
bench-million: $(STAMP)
	$(BENCH_PYTHON) benchmarks/million.py
	$(BENCH_PYTHON) benchmarks/gui_bench.py --million

# The one-folder desktop bundle in dist/contextdeck (PyInstaller, packaging/contextdeck.spec), then its smoke
# test, which fails the target when it fails. Minutes; never part of `make test`. docs/install.md has the figures.
bundle:
	$(PYTHON) packaging/bundle.py

# The PNG icons (16-512 px) from resources/icons/app.svg, the window's icon. They are committed: run this
# after editing the SVG.
icons: $(STAMP)
	$(BIN)/python packaging/make_icons.py

# Everything the targets above make: the venv, builds and bundles, every tool's cache.
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
