"""Writes that cannot destroy by accident: a plain CTAS over a table this task instance did not write fails, OR
REPLACE replaces, a retried try replaces its own write, a retried 0-row INSERT is a no-op, and names or types
the catalog cannot hold fail with a sentence before anything is written."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_lineage_governance.iceberg.catalog import open_local_catalog
from airflow_lineage_governance.iceberg.errors import IcebergWriteError
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.write import WRITE_KEY, create_or_replace
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.refs import TableRef

pytestmark = pytest.mark.reliability

CTAS = StatementKind.CREATE_TABLE_AS


@pytest.fixture
def catalog(tmp_path):
    catalog = open_local_catalog(tmp_path / "catalog")
    create_or_replace(catalog, "crm.people", pa.table({"id": [1, 2], "email": ["ada@example.com", "b@x.org"]}), {})
    return catalog


def _ids(catalog, name: str) -> list[int]:
    return sorted(catalog.load_table(name).scan().to_arrow().column("id").to_pylist())


def _ctas(catalog, query: str, key: str, replace: bool, target="out.t"):
    return run_statement(
        catalog,
        kind=CTAS,
        target=target,
        query=query,
        sources=["crm.people"],
        snapshot_properties={WRITE_KEY: key},
        replace=replace,
    )


def test_plain_ctas_over_a_table_another_task_wrote_fails(catalog):
    _ctas(catalog, "select p.id from crm.people p", "dag/a/-1/day", replace=True)
    with pytest.raises(
        IcebergWriteError,
        match=r"^out\.t: the table already exists, and a plain CREATE TABLE \.\.\. "
        r"AS does not replace a table this task did not write; write CREATE OR REPLACE",
    ):
        _ctas(catalog, "select p.id + 10 as id from crm.people p", "dag/b/-1/day", replace=False)
    assert _ids(catalog, "out.t") == [1, 2]


def test_plain_ctas_retried_by_the_same_task_replaces_its_own_write(catalog):
    _ctas(catalog, "select p.id from crm.people p", "dag/a/-1/day", replace=False)
    run = _ctas(catalog, "select p.id + 10 as id from crm.people p", "dag/a/-1/day", replace=False)
    assert run.write.replaced
    assert _ids(catalog, "out.t") == [11, 12]


def test_create_or_replace_replaces_any_table(catalog):
    _ctas(catalog, "select p.id from crm.people p", "dag/a/-1/day", replace=False)
    _ctas(catalog, "select p.id + 10 as id from crm.people p", "dag/b/-1/day", replace=True)
    assert _ids(catalog, "out.t") == [11, 12]


def test_an_insert_retried_after_a_zero_row_append_is_a_no_op(catalog):
    _ctas(catalog, "select p.id from crm.people p where p.id < 0", "dag/a/-1/day", replace=True)
    for attempt in range(2):
        run = run_statement(
            catalog,
            kind=StatementKind.INSERT,
            target="out.t",
            insert_columns=["id"],
            query="select p.id from crm.people p where p.id < 0",
            sources=["crm.people"],
            snapshot_properties={WRITE_KEY: "dag/ins/-1/day"},
        )
        assert run.write.rows == 0
        assert run.write.already_written == (attempt == 1)


@pytest.mark.parametrize(
    ("target", "sentence"),
    [
        (TableRef(("a.b",), "t"), "holds a dot or a slash"),
        (TableRef(("crm",), "x/y"), "holds a dot or a slash"),
        (TableRef(("crm",), " "), "empty, blank"),
        (TableRef(("main",), "t"), "main is a schema of DuckDB itself"),
        (TableRef(("information_schema",), "t"), "information_schema is a schema of DuckDB itself"),
        (TableRef(("temp",), "t"), "temp is a schema of DuckDB itself"),
    ],
)
def test_a_name_the_catalog_cannot_store_fails_before_anything_is_written(catalog, target, sentence):
    before = {tuple(ns) for ns in catalog.list_namespaces()}
    with pytest.raises(IcebergWriteError, match="nothing was written") as raised:
        _ctas(catalog, "select p.id from crm.people p", "k", replace=True, target=target)
    assert sentence in str(raised.value)
    assert {tuple(ns) for ns in catalog.list_namespaces()} == before


@pytest.mark.parametrize(
    ("expression", "kind"),
    [
        ("interval 1 day", "INTERVAL"),
        ("union_value(k := 1)", "UNION"),
        ("170141183460469231731687303715884105727::hugeint", "HUGEINT"),
        ("'2024-01-01 10:00:00'::timestamp_ns", "TIMESTAMP_NS"),
        ("null", "NULL"),
        ("[interval 1 day]", "INTERVAL[]"),
    ],
)
def test_a_type_iceberg_cannot_hold_names_the_column_and_a_cast(catalog, expression, kind):
    with pytest.raises(IcebergWriteError) as raised:
        _ctas(catalog, f"select p.id, {expression} as odd from crm.people p", "k", replace=True)
    message = str(raised.value)
    assert message.startswith("out.t: column odd has the type ")
    assert kind in message and "CAST(" in message and "nothing was written" in message
    assert not catalog.table_exists("out.t")
