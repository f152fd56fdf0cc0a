"""partition_by and write_mode are read when the DAG file is parsed: a bad one is one sentence naming it."""

from __future__ import annotations

import pytest

from airflow_lineage_governance.iceberg.partitions import PartitionSpecError
from airflow_lineage_governance.operators.iceberg_sql import IcebergSqlOperator


def test_partition_by_is_read_at_parse_time():
    task = IcebergSqlOperator(task_id="t", sql="create table a.b as select 1 as x", partition_by=["Day(x)", "y"])
    assert task.partition_by == ["day(x)", "y"] and task.write_mode == "append"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"partition_by": ["week(paid_at)"]}, "the partition_by entry 'week(paid_at)' is not a partition transform"),
        ({"write_mode": "upsert"}, "write_mode 'upsert' is not one of append, overwrite_partitions"),
    ],
)
def test_a_bad_option_fails_the_parse_with_one_sentence(options, message):
    with pytest.raises(PartitionSpecError) as raised:
        IcebergSqlOperator(task_id="revenue", sql="insert into a.b select 1", target="a.b", **options)
    assert str(raised.value).startswith("a.b: " + message)
