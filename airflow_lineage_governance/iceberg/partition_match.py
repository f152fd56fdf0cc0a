"""Which data files of its target a MERGE, UPDATE or DELETE can touch by their identity-partition values alone.

DuckDB evaluates the condition's conjuncts that read no other target column over one row of partition values per
data file, joined to the statement's sources (`docs/reads.md`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import duckdb
from pyiceberg.manifest import DataFile
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import NestedField
from sqlglot import exp

from airflow_lineage_governance.iceberg.bounds import ParsedDml, conjuncts, target_column
from airflow_lineage_governance.iceberg.direct_write import PARTITION_SOURCE_TYPES
from airflow_lineage_governance.iceberg.read import create_values_table
from airflow_lineage_governance.iceberg.sql_text import duckdb_text
from airflow_lineage_governance.iceberg.touched import other_sources, with_prefix
from airflow_lineage_governance.iceberg.types import quoted

VALUES_TABLE = "__iceberg_file_partition_values"

# The nodes a usable conjunct is made of: none calls a function, so a conjunct's value is the same on every row
# holding the same partition values.
_PLAIN_NODES = (
    exp.Column,
    exp.Identifier,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Cast,
    exp.TryCast,
    exp.DataType,
    exp.DataTypeParam,
    exp.Var,
    exp.Paren,
    exp.Tuple,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
    exp.Is,
    exp.In,
    exp.Between,
    exp.And,
    exp.Or,
    exp.Not,
    exp.Collate,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.IntDiv,
    exp.Mod,
)


def identity_partition_columns(table: Table) -> dict[str, NestedField]:
    """Return the columns the table's current spec partitions by identity, by lower-case name.

    Only columns of a type in PARTITION_SOURCE_TYPES, whose partition value is every row's value exactly (not a float:
    -0.0 and 0.0 share a partition).
    """
    schema = table.schema()
    found = {}
    for partition_field in table.spec().fields:
        if not isinstance(partition_field.transform, IdentityTransform):
            continue
        column = schema.find_field(partition_field.source_id)
        if isinstance(column.field_type, PARTITION_SOURCE_TYPES):
            found[column.name.lower()] = column
    return found


def usable_conjuncts(parsed: ParsedDml, columns: Collection[str]) -> list[exp.Expr]:
    """Return the conjuncts of the statement's condition that read no target column but `columns`.

    Args:
        parsed: the statement.
        columns: the target's identity-partition columns, lower case.

    Returns:
        The conjuncts made only of plain nodes, whose target columns are all in `columns`, and that read at least
        one of them; each column either plainly the target's or qualified by another relation's name.
    """
    if parsed.condition is None:
        return []
    found = []
    for conjunct in conjuncts(parsed.condition):
        if not all(isinstance(node, _PLAIN_NODES) for node in conjunct.walk()):
            continue  # a function, a subquery, a star
        targets = []
        for column in conjunct.find_all(exp.Column):
            name = target_column(column, parsed)
            if name is not None:
                targets.append(name)
            elif not column.table or column.args.get("db") is not None or column.table.lower() in parsed.target_names:
                break  # neither plainly the target's nor plainly another relation's
        else:
            if targets and all(name in columns for name in targets):
                found.append(conjunct)
    return found


def partition_match_query(parsed: ParsedDml, columns: Collection[str], file_column: str) -> str | None:
    """Return the query naming each file of the values table whose partition values can meet the statement.

    Args:
        parsed: the statement, as `bounds.parse_dml` read it.
        columns: the target's identity-partition columns, lower case.
        file_column: the values table's column naming each file (`create_partition_values`).

    Returns:
        The query (DuckDB dialect), or None when no conjunct reads the partition columns alone.
    """
    tree = parsed.tree
    if tree is None or parsed.unbounded or not isinstance(tree.this, exp.Table):
        return None
    target = tree.this
    alias = quoted(target.alias or target.name)
    values = f"main.{quoted(VALUES_TABLE)} AS {alias}"
    select = f"{with_prefix(tree)}SELECT DISTINCT {alias}.{quoted(file_column)} FROM {values}"
    if isinstance(tree, exp.Merge):
        using, keys = tree.args.get("using"), tree.args.get("using_cond")
        if using is None:
            return None
        if keys:
            kept = [duckdb_text(key) for key in keys if key.name.lower() in columns]
            return f"{select} JOIN {duckdb_text(using)} USING ({', '.join(kept)})" if kept else None
    found = usable_conjuncts(parsed, columns)
    if not found:
        return None
    if isinstance(tree, exp.Merge):
        return f"{select} JOIN {duckdb_text(tree.args['using'])} ON {_all_of(found)}"
    return f"{select}{other_sources(tree)} WHERE {_all_of(found)}"


def _all_of(found: Sequence[exp.Expr]) -> str:
    return " AND ".join(f"({duckdb_text(conjunct)})" for conjunct in found)


def create_partition_values(
    connection: duckdb.DuckDBPyConnection,
    table: Table,
    data_files: Mapping[str, DataFile],
    columns: Mapping[str, NestedField],
    file_column: str,
) -> list[str]:
    """Create the values table: one row per data file, its values of `columns` and its file column's value.

    Args:
        connection: the statement's connection, not yet locked down.
        table: the target.
        data_files: each data file of the target's read, by its file column's value.
        columns: the partition columns (from `identity_partition_columns`).
        file_column: the name of the values table's column naming the file.

    Returns:
        The files left out of it (written under a spec that does not partition by every one of `columns`): those
        are always read.
    """
    wanted = [column.field_id for column in columns.values()]
    specs = table.specs()
    rows: list[list[Any]] = []
    left_out = []
    for path, data_file in data_files.items():
        values = _identity_values(specs[data_file.spec_id], data_file)
        if all(field_id in values for field_id in wanted):
            rows.append([*(values[field_id] for field_id in wanted), path])
        else:
            left_out.append(path)
    create_values_table(connection, VALUES_TABLE, list(columns.values()), rows, text_column=file_column)
    return left_out


def _identity_values(spec: PartitionSpec, data_file: DataFile) -> dict[int, Any]:
    return {
        partition_field.source_id: data_file.partition[position]
        for position, partition_field in enumerate(spec.fields)
        if isinstance(partition_field.transform, IdentityTransform)
    }
