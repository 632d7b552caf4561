# Every target that runs code installs first, so `make test` or `make demo`
# works as the only command on a fresh machine. The editable install leaves our own
# modules as source: they are byte-compiled here, as pip does for site-packages, so a
# shell with PYTHONDONTWRITEBYTECODE set does not compile them again on every command.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test test-fast lint demo bench clean schemas fuzz docs transcripts identical

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	$(BIN)/python -m compileall -q placement cli >/dev/null
	touch $(STAMP)

# The browser tests of the HTML reports drive Debian's chromium. Installed here when it is
# missing and we are root; never fails the build: without it (not root, no package
# mirror) those tests skip and say why, and the next run tries again.
CHROMIUM       ?= /usr/bin/chromium
CHROMIUM_STAMP := $(VENV)/.chromium
$(CHROMIUM_STAMP): | $(STAMP)
	@if [ ! -x "$(CHROMIUM)" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for the browser tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq chromium >/dev/null; } \
			|| echo "warning: could not install chromium: the browser tests will skip"; \
	fi
	@if [ -x "$(CHROMIUM)" ]; then touch $@; \
	else echo "note: no $(CHROMIUM) (installing it takes root and the package mirror):" \
		"the browser tests will skip"; fi

# one worker per core, at most four: each Spark test worker runs a JVM of its own
test: $(STAMP) $(CHROMIUM_STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

# the fast tier, while you work: no Spark, no browser, nothing marked slow or broker.
# PYTHONDONTWRITEBYTECODE is cleared for it: pytest then keeps the test modules it
# rewrote for its asserts, instead of rewriting all of them in every worker on every run
test-fast: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n auto --maxprocesses 4 \
		-m "not spark and not slow and not broker" --ignore=tests/html/test_browser.py

lint: $(STAMP)
	$(BIN)/ruff check placement cli tests bench fuzz scripts
	$(BIN)/ruff format --check placement cli tests bench fuzz scripts
	$(BIN)/mypy

# >= 10,000 mutated inputs over every reader (a few minutes); reproducers of failures
# go to .fuzz-failures/. FUZZ_ARGS, e.g. --seed 7 or --only read_describe
fuzz: $(STAMP)
	$(BIN)/python -m fuzz --count 12000 $(FUZZ_ARGS)

demo: $(STAMP)
	@bash examples/demo.sh

# the rebalance and quality benchmarks' reference, Yelp kafka-utils, in a venv of its own (old pins)
KU_STAMP := .venv-kafka-utils/.installed
$(KU_STAMP):
	python3 -m venv .venv-kafka-utils
	.venv-kafka-utils/bin/pip install --quiet kafka-utils==4.1.0
	touch $@

# the quality benchmark's second reference, LinkedIn kafka-tools (built from the sdist; it
# imports six without declaring it)
KT_STAMP := .venv-kafka-tools/.installed
$(KT_STAMP):
	python3 -m venv .venv-kafka-tools
	.venv-kafka-tools/bin/pip install --quiet kafka-tools==0.1.9 six
	touch $@

# the engines benchmark's yardstick, DuckDB, in a venv of its own: not a dependency of mrc-plan
DUCKDB_STAMP := .venv-duckdb/.installed
$(DUCKDB_STAMP):
	python3 -m venv .venv-duckdb
	.venv-duckdb/bin/pip install --quiet duckdb==1.5.6 pyarrow
	touch $@

bench: $(STAMP) $(KU_STAMP) $(KT_STAMP) $(DUCKDB_STAMP)
	$(BIN)/python -m compileall -q placement cli >/dev/null  # the start-up figures time ours, not a compile
	$(BIN)/python bench/run.py

schemas: $(STAMP)
	$(BIN)/mrc-plan schema --write schemas

# docs/cli.md and docs/rules.md from the commands and the rule registry (a test fails on drift)
docs: $(STAMP)
	$(BIN)/python scripts/gendocs.py

# rewrite the `$ mrc-plan` blocks of README.md and docs/ from the commands in the script
transcripts: $(STAMP)
	$(BIN)/python scripts/transcripts.py

# a restructuring changes no output: every scenario of scripts/identical.py run with BASE's
# code and with the working tree's, compared byte for byte (BASE: a commit, default HEAD)
BASE ?= HEAD
identical: $(STAMP)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; mkdir "$$tmp/base"; \
	git archive $(BASE) | tar -x -C "$$tmp/base"; \
	PYTHONPATH="$$tmp/base" $(BIN)/python scripts/identical.py inputs "$$tmp/inputs"; \
	$(BIN)/python scripts/identical.py capture "$$tmp/base" "$$tmp/inputs" "$$tmp/before"; \
	$(BIN)/python scripts/identical.py capture . "$$tmp/inputs" "$$tmp/after"; \
	$(BIN)/python scripts/identical.py compare "$$tmp/before" "$$tmp/after"

clean:
	rm -rf $(VENV) .venv-kafka-utils .venv-kafka-tools .venv-duckdb build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
