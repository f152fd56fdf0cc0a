# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo's Iceberg catalog: sql (a local SQLite catalog) or rest (a real Iceberg REST catalog server on 127.0.0.1).
CATALOG ?= sql

.PHONY: setup demo test test-fast test-equivalence test-dml-equivalence lint clean

setup: $(STAMP)

# Reinstall only when the package's declared dependencies change. The installed packages are compiled to bytecode once
# here: with PYTHONDONTWRITEBYTECODE set (as on this machine) every Airflow process would compile its sources again.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[test]'
	touch $(STAMP)

# The demo platform lives beside the DAGs (dags/learning_platform), not in the installed package.
# `make demo CATALOG=rest` runs it on the REST catalog (scripts/iceberg-rest; needs Java 17 and Maven).
demo: setup
	LINEAGE_GOVERNANCE_DEMO_CATALOG=$(CATALOG) PYTHONPATH=dags $(BIN)/python -m learning_platform.demo

# The catalog tests run on both the SQL and the REST catalog: the REST server's jars are resolved first.
test: setup iceberg-rest tpc-corpus
	$(BIN)/python -m pytest -q

# The inner loop: no real Airflow process, no Marquez, the SQL catalog only, no long equivalence or TPC suite, and
# no test marked `slow` (property and scale tests, which `make test` runs); one pytest-xdist worker per core.
FAST_IGNORE := tests/distributed tests/iceberg/equivalence tests/iceberg/dml_equivalence tests/soundness/test_tpc.py tests/marquez \
	tests/ui tests/test_cli.py tests/test_provider.py tests/test_settings.py tests/test_wheel.py \
	tests/test_dag_parse_cost.py tests/operators/test_imports.py
test-fast: setup
	$(BIN)/python -m pytest -q -x -n auto -m "not integration and not marquez and not scheduler and not reliability and not slow" \
		-k "not rest and not airflow_connection" $(addprefix --ignore=,$(FAST_IGNORE))

# The read path against native DuckDB tables on every layout, EQUIVALENCE_QUERIES seeded queries each (the normal
# run takes 8); the last line sums it up: EQUIVALENCE queries=N equal=E unequal_rows=U type_differences=T.
EQUIVALENCE_QUERIES ?= 60
test-equivalence: setup
	EQUIVALENCE_QUERIES=$(EQUIVALENCE_QUERIES) $(BIN)/python -m pytest -q tests/iceberg/equivalence

# MERGE, UPDATE and DELETE (rewrite_statement) against DuckDB on native tables, on six layouts of shop.orders,
# DML_EQUIVALENCE_STATEMENTS seeded statements each (the normal run takes 30) drawn with DML_EQUIVALENCE_SEED (0 unless
# set: another seed draws other statements); the last line sums it up:
# DML_EQUIVALENCE statements=N equal=E unequal=U count_differences=C errors=X lineage_refused=L lineage_violations=V
# files_rewritten=R files_in_table=T pruning_rate=P.
DML_EQUIVALENCE_STATEMENTS ?= 170
DML_EQUIVALENCE_SEED ?= 0
test-dml-equivalence: setup
	DML_EQUIVALENCE_STATEMENTS=$(DML_EQUIVALENCE_STATEMENTS) DML_EQUIVALENCE_SEED=$(DML_EQUIVALENCE_SEED) $(BIN)/python -m pytest -q tests/iceberg/dml_equivalence

# The checks of .pre-commit-config.yaml, on every file: the format, ruff's rules (with the docstrings' and the
# complexity limit), mypy --strict on the package, codespell; all configured in pyproject.toml.
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/codespell

clean:
	rm -rf .demo .pytest_cache .mypy_cache build dist

# Resolves the Iceberg REST catalog's jars (Maven Central) and compiles its launcher (a no-op when up to date); a
# missing Java or Maven is one sentence saying what to install.
.PHONY: iceberg-rest
iceberg-rest:
	bash scripts/iceberg-rest/build.sh

# Dumps the TPC-H and TPC-DS queries and schemas from DuckDB's tpch/tpcds extensions into build/tpc (once; a venv
# of its own under build/tpc-venv holds duckdb 1.5.5 and the extensions' wheels from PyPI).
.PHONY: tpc-corpus
tpc-corpus: setup
	UV=$(BIN)/uv bash scripts/tpc/build.sh
