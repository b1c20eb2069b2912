# Everyday commands. `make test` and `make run` set everything up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-matrix test-rounds test-all run demo lint bench install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# editable_mode=compat: the checkout on sys.path through a plain .pth line instead of
	# setuptools' import hook, which cost every python start in the venv about 10 ms
	# (bench/bench_startup.py; docs/performance.md). Plain -e if a setuptools drops compat.
	$(BIN)/python -m pip install -q -e '.[test]' --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install -q -e '.[test]'
	# bytecode now, as a non-editable install does: with PYTHONDONTWRITEBYTECODE set, every
	# start would otherwise compile the package again (about 30 ms of a plangate validate)
	$(BIN)/python -m compileall -q controller >/dev/null
	touch $(STAMP)

install: $(STAMP)

# The default suite: everything but the archive of the attack rounds (tests/adversarial/
# test_round*.py, each round's labs kept as regression tests). The adversarial suite by
# property (the other modules of tests/adversarial/) is part of it.
PYTEST := $(BIN)/python -m pytest -n 6 --dist loadscope --durations=30
ROUNDS := tests/adversarial/test_round*.py

test: $(STAMP)
	$(PYTEST) -m 'not matrix' --ignore-glob='$(ROUNDS)' tests

# The further cases of the long matrices (tests/matrix_tails.txt: each one's first case is in
# the default suite); CI runs it after the default suite.
test-matrix: $(STAMP)
	$(PYTEST) -m matrix --ignore-glob='$(ROUNDS)' tests

# The archive of the attack rounds alone; CI runs it last.
test-rounds: $(STAMP)
	$(PYTEST) $(wildcard $(ROUNDS))

test-all: test test-matrix test-rounds

run: $(STAMP)
	$(BIN)/python examples/demo.py run

demo: $(STAMP)
	$(BIN)/python examples/demo.py demo

lint: $(STAMP)
	$(BIN)/ruff check controller tests bench examples
	$(BIN)/ruff format --check controller tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports --config pyproject.toml

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
