"""DuckDB binds each statement over empty tables of the catalog's schemas: the column types it is given (Iceberg,
Arrow or DuckDB spellings), one connection per schema set, the query found in the statement's text, and a
process forked after binding binding again, and the text checked to be one statement."""

from __future__ import annotations

import multiprocessing

import duckdb
import pytest

from airflow_lineage_governance.lineage import BindError, UnknownColumnError, column_lineage
from airflow_lineage_governance.lineage.binding import (
    DESCRIBED_BYTES,
    DESCRIBED_JOINS,
    binder,
    checked_bind_call,
    duckdb_type,
    query_text,
)
from airflow_lineage_governance.lineage.schema import normalized
from airflow_lineage_governance.refs import TableRef

TYPES = [
    ("string", "VARCHAR"),
    ("long", "BIGINT"),
    ("int", "INTEGER"),
    ("boolean", "BOOLEAN"),
    ("double", "DOUBLE"),
    ("float", "FLOAT"),
    ("date", "DATE"),
    ("timestamp", "TIMESTAMP"),
    ("timestamptz", "TIMESTAMPTZ"),
    ("time", "TIME"),
    ("uuid", "UUID"),
    ("binary", "BLOB"),
    ("fixed[16]", "BLOB"),
    ("decimal(10, 2)", "DECIMAL(10,2)"),
    ("list<string>", "VARCHAR[]"),
    ("map<string, long>", "MAP(VARCHAR, BIGINT)"),
    ("struct<1: channel: optional string, 2: priority: required int>", "STRUCT(channel VARCHAR, priority INTEGER)"),
    ("int64", "BIGINT"),
    ("int32", "INTEGER"),
    ("bool", "BOOLEAN"),
    ("date32[day]", "DATE"),
    ("timestamp[us]", "TIMESTAMP"),
    ("timestamp[us, tz=UTC]", "TIMESTAMP WITH TIME ZONE"),
    ("list<item: string>", "VARCHAR[]"),
    ("struct<a: int64, b: list<item: string>>", "STRUCT(a BIGINT, b VARCHAR[])"),
    ("decimal128(38, 9)", "DECIMAL(38,9)"),
    ("VARCHAR", "VARCHAR"),
    ("INTEGER", "INTEGER"),
    ("STRUCT(a INTEGER)", "STRUCT(a INTEGER)"),
]


@pytest.mark.parametrize(("kind", "expected"), TYPES)
def test_each_catalog_type_has_its_duckdb_type(kind, expected):
    spelt = duckdb_type(kind)
    assert spelt is not None
    assert str(duckdb.sqltype(spelt)) == str(duckdb.sqltype(expected))


def test_a_type_duckdb_does_not_know_is_refused_naming_the_column():
    with pytest.raises(
        UnknownColumnError,
        match=r"^out\.t: the column a of s\.t has the type geometry-ish, which "
        r"DuckDB does not know; give the column an Iceberg type\.$",
    ):
        column_lineage("create table out.t as select a from s.t", {"s": {"t": {"a": "geometry-ish"}}})


def test_one_connection_serves_every_statement_over_a_schema_set():
    schema = normalized({"s": {"t": {"a": "long", "b": "string"}}})
    target = TableRef(("out",), "t")
    assert binder(schema, target) is binder(dict(schema), target)
    assert binder(schema, target) is not binder(normalized({"s": {"t": {"a": "long"}}}), target)


@pytest.mark.parametrize(
    ("text", "end", "kind", "columns", "query"),
    [
        ("create table out.t as select 1", 17, "CREATE", False, "select 1"),
        ("CREATE OR REPLACE TABLE out.t AS -- note\n(SELECT 1);", 28, "CREATE", False, "(SELECT 1)"),
        ("insert into out.t by name select 1 as a", 16, "INSERT", False, "select 1 as a"),
        ('insert into out.t ("a)", b) /* c */ select 1, 2', 16, "INSERT", True, "select 1, 2"),
        ("create table out.t select 1", 17, "CREATE", False, None),
    ],
)
def test_the_query_is_found_in_the_text_as_written(text, end, kind, columns, query):
    assert query_text(text, end, kind, columns) == query


def _lineage_names(queue: multiprocessing.Queue) -> None:
    lineage = column_lineage("create table out.t as select trim(b) from s.t", {"s": {"t": {"b": "string"}}})
    queue.put([column.name for column in lineage.columns])


def test_a_forked_process_binds_with_a_connection_of_its_own():
    _lineage_names(multiprocessing.Queue())  # the parent binds first: its connection exists
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_lineage_names, args=(queue,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == ['"trim"(b)']


@pytest.mark.parametrize(
    ("select", "condition"),
    [("e.id, ? as flag", "e.email like ?"), ("e.id", "e.email = $1 and e.id > $2"), ("e.id", "e.email = $mail")],
)
def test_a_parameter_marker_binds_as_null(select, condition):
    """An event's SQL facet leaves literals out as `?`: the statement is still bound and traced."""
    schema = {"crm": {"people": {"id": "long", "email": "string"}}}
    lineage = column_lineage(f"create table out.t as select {select} from crm.people e where {condition}", schema)
    assert [column.name for column in lineage.columns] == ["id", "flag"][: len(select.split(","))]
    assert "crm.people.email" in {str(dep.source) for dep in lineage.rows}


@pytest.mark.parametrize("query", ["select a from s.t; drop table s.t", "select 'é' as e; select a from s.t", "s.t"])
def test_a_text_that_is_not_one_select_is_refused_and_runs_nothing(query):
    schema = normalized({"s": {"t": {"a": "long"}}})
    target = TableRef(("out",), "t")
    with pytest.raises(
        BindError,
        match=r"^out\.t: DuckDB does not read the statement's query as one SELECT; "
        r"write one CREATE TABLE \.\.\. AS SELECT or INSERT INTO \.\.\. SELECT\.$",
    ):
        binder(schema, target).bind(query, target)
    assert binder(schema, target).bind("select a from s.t", target).names == ("a",)  # the table is still there


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("SeLeCt a FROM s.t", ("a",)),
        ("\n\t select a as b from s.t", ("b",)),
        ("-- a note\nselect a from s.t", ("a",)),
        ("/* a note */ select a as c from s.t", ("c",)),
        ("(select a from s.t)", ("a",)),
        ("from s.t select a as d", ("d",)),
        ("with c as (select a from s.t) select a as e from c", ("e",)),
        ("select a as f from s.t" + " " * DESCRIBED_BYTES, ("f",)),
        ("selectx from s.t", None),
        ("select_a from s.t", None),
        ("sel\u00e9ct a from s.t", None),
        ("\u017felect a from s.t", None),
    ],
)
def test_a_text_is_read_as_a_select_only_where_duckdb_reads_it_so(query, names):
    """However the text opens (a keyword in any case, space, a comment, a parenthesis, a word that only looks like
    SELECT), DuckDB's names, or the one sentence for a text that is not one SELECT."""
    schema = normalized({"s": {"t": {"a": "long"}}})
    target = TableRef(("out",), "t")
    if names is not None:
        bound = binder(schema, target).bind(query, target)
        assert (bound.names, bound.types) == (names, ("BIGINT",))
        return
    with pytest.raises(BindError, match=r"^out\.t: DuckDB does not read the statement's query as one SELECT; "):
        binder(schema, target).bind(query, target)


def test_the_binding_gives_duckdbs_names_and_types_past_text_in_other_scripts():
    schema = normalized({"s": {"t": {"a": "long", "s": "struct<x: int, y: list<string>>"}}})
    target = TableRef(("out",), "t")
    bound = binder(schema, target).bind("select 'ünï' || 'çødé' as word, a / 2, s, s.y from s.t", target)
    assert bound.names == ("word", "(a / 2)", "s", "y")
    assert bound.types == ("VARCHAR", "DOUBLE", "STRUCT(x INTEGER, y VARCHAR[])", "VARCHAR[]")


def test_a_query_of_many_joins_is_bound_with_duckdbs_names_and_types():
    """Past DESCRIBED_JOINS joins DuckDB describes the query instead of binding it as a relation: same answer."""
    tables = DESCRIBED_JOINS + 1
    schema = normalized(
        {"s": {f"t{i}": {"id": "long", "v": "decimal(10, 2)", "s": "struct<x: int>"} for i in range(tables)}}
    )
    joins = " ".join(f"join s.t{i} t{i} on t{i}.id = t{i - 1}.id" for i in range(1, tables))
    query = f"select t0.id, t1.v * 2, t2.s, t3.s.x as x, t0.id from s.t0 t0 {joins}"
    target = TableRef(("out",), "t")
    bound = binder(schema, target).bind(query, target)
    assert bound.names == ("id", "(t1.v * 2)", "s", "x", "id")
    assert bound.types == ("BIGINT", "DECIMAL(18,2)", "STRUCT(x INTEGER)", "INTEGER", "BIGINT")
    with pytest.raises(BindError, match=r"^out\.t: DuckDB cannot bind the query \(Binder Error: .*; fix the "):
        binder(schema, target).bind(query.replace("t3.s.x", "t3.s.missing"), target)


def test_a_long_query_is_bound_with_duckdbs_names_and_types():
    """Past DESCRIBED_BYTES of text DuckDB describes a SELECT instead of binding it as a relation: same answer."""
    schema = normalized({"s": {"t": {"id": "long", "v": "decimal(10, 2)", "s": "struct<x: int>"}}})
    target = TableRef(("out",), "t")
    padding = ", 0" * (DESCRIBED_BYTES // 3)
    query = (
        f"with c as (select coalesce(t.id{padding}) as id, t.v, t.s from s.t t) select c.id, c.v * 2, c.s.x as x, c.id "
        "from c"
    )
    assert len(query.encode()) >= DESCRIBED_BYTES
    bound = binder(schema, target).bind(query, target)
    assert bound.names == ("id", "(c.v * 2)", "x", "id")
    assert bound.types == ("BIGINT", "DECIMAL(18,2)", "INTEGER", "BIGINT")
    marked = binder(schema, target).bind(query.replace("c.v * 2", "c.v * ?"), target)
    assert marked.names[1] == "(c.v * $1)"
    with pytest.raises(BindError, match=r"^out\.t: DuckDB cannot bind the query \(Binder Error: .*; fix the "):
        binder(schema, target).bind(query.replace("c.s.x", "c.s.missing"), target)
    with pytest.raises(BindError, match="does not read the statement's query as one SELECT"):
        binder(schema, target).bind(query + "; select 1", target)
    writes = query.replace(" select c.id,", " insert into s.t select c.id,", 1)
    with pytest.raises(BindError, match=r"^out\.t: DuckDB cannot bind the query \(Parser Error: "):
        binder(schema, target).bind(writes, target)


@pytest.mark.parametrize(
    "statement",
    ["update s.t set a = 1; drop table s.t", "select a from s.t", "drop table s.t", "delete from s.t; delete from s.t"],
)
def test_a_text_that_is_not_one_merge_update_or_delete_is_refused_and_runs_nothing(statement):
    schema = normalized({"s": {"t": {"a": "long"}}})
    target = TableRef(("s",), "t")
    with pytest.raises(BindError) as raised:
        binder(schema, target).bind_statement(statement, target)
    assert str(raised.value) == (
        "s.t: DuckDB does not read the statement as one MERGE, UPDATE or DELETE; write one MERGE INTO, UPDATE or "
        "DELETE FROM statement."
    )
    assert binder(schema, target).bind("select a from s.t", target).names == ("a",)  # the table is still there


def test_a_parameter_marker_of_a_dml_statement_binds_as_null():
    schema = {"crm": {"people": {"id": "long", "email": "string"}}}
    for sql in ("update crm.people set email = ? where id = ?", "delete from crm.people where email = $mail"):
        lineage = column_lineage(sql, schema)
        assert [column.name for column in lineage.columns] == ["id", "email"]


@pytest.mark.parametrize(
    "query",
    [
        "with c as (select 1 as a) insert into s.t select a from c",
        "with c as (select 1 as a) update s.t set a = 2",
        "with c as (select 1 as a) delete from s.t",
        "with c as (select 1 as a) merge into s.t using c on true when matched then delete",
    ],
)
def test_a_short_text_that_opens_with_with_and_writes_is_refused_and_runs_nothing(query):
    """A short query opening with WITH is bound from its text; a statement of DuckDB's that writes is still refused."""
    schema = normalized({"s": {"t": {"a": "long"}}})
    target = TableRef(("out",), "t")
    assert len(query.encode()) < DESCRIBED_BYTES
    with pytest.raises(BindError, match=r"^out\.t: DuckDB does not read the statement's query as one SELECT; "):
        binder(schema, target).bind(query, target)
    assert binder(schema, target).bind("select count(*) as n from s.t", target).names == ("n",)


def test_a_schema_changed_between_two_statements_is_read_anew():
    """The engine keeps what it made of the last schema only while the next statement gives an equal one."""
    schema = {"crm": {"people": {"id": "long", "email": "string"}}}
    sql = "create table out.t as select p.id, p.email from crm.people p"
    assert column_lineage(sql, schema).types == ("BIGINT", "VARCHAR")
    schema["crm"]["people"]["id"] = "int"
    assert column_lineage(sql, schema).types == ("INTEGER", "VARCHAR")
    del schema["crm"]["people"]["email"]
    with pytest.raises(UnknownColumnError, match=r"^out\.t: crm\.people has no column email; "):
        column_lineage(sql, schema)
    schema["crm"]["people"]["email"] = "string"
    assert [str(dep.source) for column in column_lineage(sql, schema).columns for dep in column.inputs] == [
        "crm.people.id",
        "crm.people.email",
    ]


def test_a_schema_with_its_columns_reordered_between_two_statements_is_read_in_the_new_order():
    sql = "create table out.t as select * from crm.people"
    first = column_lineage(sql, {"crm": {"people": {"id": "long", "email": "string"}}})
    assert [column.name for column in first.columns] == ["id", "email"]
    again = column_lineage(sql, {"crm": {"people": {"email": "string", "id": "long"}}})
    assert [column.name for column in again.columns] == ["email", "id"]
    assert again.types == ("VARCHAR", "BIGINT")


class _OtherClient:
    """A DuckDB connection whose `_bind` answers as some other client's might."""

    def __init__(self, answer: object) -> None:
        self.connection = duckdb.connect()
        self.answer = answer

    def _bind(self, *args: object, **kwargs: object) -> object:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def extract_statements(self, text: str) -> list:
        return self.connection.extract_statements(text)


def test_the_clients_text_binder_is_used_only_when_it_answers_as_duckdb_2s_does():
    assert checked_bind_call(duckdb.connect()) is not None
    for answer in (
        (["probe"], ["INTEGER"]),
        (["other"], ["INTEGER"], [], "query_result", False, False),
        TypeError("unexpected keyword argument 'with_writes'"),
    ):
        assert checked_bind_call(_OtherClient(answer)) is None
