# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint clean

setup: $(STAMP)

# Reinstall only when the package's declared dependencies change.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[test]'
	touch $(STAMP)

# The demo platform lives beside the DAGs (dags/learning_platform), not in the installed package.
demo: setup
	PYTHONPATH=dags $(BIN)/python -m learning_platform.demo

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf .demo .pytest_cache .mypy_cache build dist

# Resolves the Iceberg REST catalog's jars (Maven Central) and compiles its launcher; start.sh does it when needed.
.PHONY: iceberg-rest
iceberg-rest:
	bash scripts/iceberg-rest/build.sh
