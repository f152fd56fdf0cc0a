"""The marketing team's weekly export: copies marketing.audience into marketing.campaign_list straight through
pyiceberg, telling OpenLineage nothing (the platform's one job that sends no lineage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the DAG file imports this module at parse time: no pyiceberg import then
    from pyiceberg.catalog import Catalog

EXPORT_COLUMNS = ("learner_id", "full_name", "email")


def export_campaign_list(catalog: Catalog) -> int:
    """Replaces marketing.campaign_list with the audience's ids, names and emails; returns the rows copied."""
    rows = catalog.load_table("marketing.audience").scan(selected_fields=EXPORT_COLUMNS).to_arrow()
    rows = rows.select(list(EXPORT_COLUMNS))
    if catalog.table_exists("marketing.campaign_list"):
        catalog.load_table("marketing.campaign_list").overwrite(rows)
    else:
        catalog.create_table("marketing.campaign_list", schema=rows.schema).append(rows)
    return rows.num_rows
