"""`Impact.to_json()`: the one JSON text of an impact, which the CLI prints and the UI serves, is exactly
`json.dumps(to_dict(), indent=2)` and a newline, whatever the names hold."""

from __future__ import annotations

import json

import pytest

from airflow_lineage_governance.graph.impact import downstream
from airflow_lineage_governance.refs import ColumnRef
from tests.support.events import complete, graph_of, output


@pytest.mark.parametrize(
    "name",
    ["plain", "é_accent", "tab\\there", "del\x7fchar", "nul\x00", 'quote"back\\slash', "line\u2028sep", "<script>"],
)
def test_to_json_is_the_indented_json_of_to_dict(name):
    graph = graph_of(
        complete("dag.a", output(f"db.{name}", {"x": ["src.t.c"]}, rows=["src.t.c"])),
        complete("dag.b", output("db.z", {f"c{name}": [f"db.{name}.x"]})),
    )
    impact = downstream(graph, ColumnRef.parse("src.t.c"), weight=lambda table: 0.1 / 3)
    assert len(impact.columns_reached) == 2
    assert impact.to_json() == json.dumps(impact.to_dict(), indent=2) + "\n"
