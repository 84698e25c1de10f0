# textrobust: the two commands of the README.
#   make demo   installs everything (venv, Debian WordNet, asset caches) and runs the audit
#   make test   installs everything and runs the tests
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: install demo test test-fast typecheck clean-venv

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/install-system.sh scripts/link-system-packages.sh
	bash scripts/install-system.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	bash scripts/link-system-packages.sh $(BIN)/python
	$(BIN)/textrobust assets prepare
	$(BIN)/python -m textrobust.zoo default --threads 1
	touch $@

demo: install
	$(BIN)/textrobust audit

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Unit tests only (no real models or asset files).
test-fast: install
	$(BIN)/python -m pytest -m "not heavy" $(PYTEST_ARGS)

# mypy over src/textrobust with the [tool.mypy] settings of pyproject.toml: any error fails.
typecheck: install
	$(BIN)/mypy

clean-venv:
	rm -rf $(VENV)
