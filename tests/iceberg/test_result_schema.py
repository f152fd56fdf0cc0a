"""The schema a CREATE TABLE ... AS gives its table is known before it runs: DuckDB binds the SELECT over empty
tables of the catalog's schemas, and the facet's types of that schema are those of the table the statement
creates (the oracle: run_statement's own CTAS over the same tables with rows in them)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    UUIDType,
)

from airflow_lineage_governance.iceberg.catalog import open_local_catalog, table_columns
from airflow_lineage_governance.iceberg.errors import LineageGovernanceError, ResultSchemaError
from airflow_lineage_governance.iceberg.result_schema import bound_result_schema, result_schema
from airflow_lineage_governance.iceberg.run import run_statement
from airflow_lineage_governance.iceberg.types import facet_fields, facet_type
from airflow_lineage_governance.kinds import StatementKind
from airflow_lineage_governance.lineage import column_lineage
from airflow_lineage_governance.refs import TableRef

ORDERS = TableRef.parse("shop.orders")
SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "qty", IntegerType()),
    NestedField(3, "amount", DecimalType(10, 2)),
    NestedField(4, "paid_at", TimestamptzType()),
    NestedField(5, "note", StringType()),
    NestedField(6, "id", UUIDType()),
    NestedField(
        7,
        "address",
        StructType(NestedField(8, "city", StringType()), NestedField(9, "tags", ListType(10, StringType()))),
    ),
    NestedField(11, "scores", MapType(12, StringType(), 13, DoubleType())),
)
QUERIES = {
    "columns": "SELECT * FROM shop.orders",
    "arithmetic": "SELECT order_id * 2 AS doubled, qty + 1 AS q, amount * qty AS total, amount / 3 AS third "
    "FROM shop.orders",
    "aggregates": "SELECT note, count(*) AS n, sum(amount) AS amount, avg(qty) AS mean, max(paid_at) AS last "
    "FROM shop.orders GROUP BY note",
    "casts": "SELECT CAST(paid_at AS DATE) AS day, trim(note), order_id::VARCHAR AS text FROM shop.orders",
    "nested": "SELECT address.city AS city, address, scores, [qty, qty] AS pair, {'k': note} AS s FROM shop.orders",
    "literals": "SELECT 1 AS one, 1.5 AS half, 'x' AS x, DATE '2026-01-01' AS d FROM shop.orders",
}


@pytest.fixture
def orders(tmp_path):
    catalog = open_local_catalog(tmp_path / "catalog")
    catalog.create_namespace("shop")
    table = catalog.create_table(ORDERS.identifier, schema=SCHEMA)
    rows = [
        {
            "order_id": 1,
            "qty": 2,
            "amount": None,
            "paid_at": None,
            "note": "a",
            "id": None,
            "address": {"city": "Lyon", "tags": ["x"]},
            "scores": {"m": 1.0},
        }
    ]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return catalog, catalog.load_table(ORDERS.identifier)


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_the_bound_schema_is_the_schema_the_ctas_creates(orders, query):
    catalog, table = orders
    target = TableRef.parse("shop.result")
    bound = result_schema(query, {ORDERS: table}, target)
    run = run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target=target,
        query=query,
        sources=[ORDERS],
        snapshot_properties={},
    )
    assert run.write.rows == 1
    assert facet_fields(bound) == run.write.columns == facet_fields(catalog.load_table(target.identifier).schema())


def test_facet_types_name_no_field_ids():
    assert facet_fields(SCHEMA) == (
        ("order_id", "long"),
        ("qty", "int"),
        ("amount", "decimal(10, 2)"),
        ("paid_at", "timestamptz"),
        ("note", "string"),
        ("id", "uuid"),
        ("address", "struct<city: string, tags: list<string>>"),
        ("scores", "map<string, double>"),
    )
    renumbered = StructType(NestedField(40, "city", StringType()), NestedField(41, "tags", ListType(42, StringType())))
    assert facet_type(renumbered) == facet_type(SCHEMA.find_field("address").field_type)


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        (
            "SELECT missing FROM shop.orders",
            "shop.result: DuckDB could not bind the statement's SELECT; fix the statement.",
        ),
        (
            "SELECT INTERVAL 1 DAY AS span FROM shop.orders",
            "shop.result: no Iceberg type holds the type INTERVAL of column span; write it as CAST(... AS VARCHAR).",
        ),
    ],
)
def test_what_cannot_be_bound_is_one_sentence(orders, query, sentence):
    _, table = orders
    with pytest.raises(ResultSchemaError) as raised:
        result_schema(query, {ORDERS: table}, TableRef.parse("shop.result"))
    assert isinstance(raised.value, LineageGovernanceError)
    assert str(raised.value) == sentence


def test_nothing_is_read(orders):
    _, table = orders
    refused = "SELECT * FROM read_parquet('/etc/hostname')"
    with pytest.raises(ResultSchemaError):
        result_schema(refused, {ORDERS: table}, TableRef.parse("shop.result"))


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_the_lineages_binding_gives_the_schema_the_ctas_creates(orders, query):
    """The binding the lineage read made names the new table as DuckDB's own CTAS does, with no connection of
    its own."""
    catalog, table = orders
    target = TableRef.parse("shop.result")
    schema = {ORDERS: table_columns(table)}
    lineage = column_lineage(f"create table shop.result as {query}", schema)
    bound = bound_result_schema(lineage, schema)
    assert facet_fields(bound) == facet_fields(result_schema(query, {ORDERS: table}, target))
    run = run_statement(
        catalog,
        kind=StatementKind.CREATE_TABLE_AS,
        target=target,
        query=query,
        sources=[ORDERS],
        snapshot_properties={},
    )
    assert facet_fields(bound) == run.write.columns == facet_fields(catalog.load_table(target.identifier).schema())


def test_a_type_no_iceberg_type_holds_is_one_sentence_from_the_lineages_binding(orders):
    _, table = orders
    schema = {ORDERS: table_columns(table)}
    lineage = column_lineage("create table shop.result as SELECT INTERVAL 1 DAY AS span FROM shop.orders", schema)
    with pytest.raises(ResultSchemaError) as raised:
        bound_result_schema(lineage, schema)
    assert str(raised.value) == (
        "shop.result: no Iceberg type holds the type INTERVAL of column span; write it as CAST(... AS VARCHAR)."
    )
