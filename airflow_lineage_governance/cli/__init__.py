"""The `lineage-governance` command line, one module per command group."""

from airflow_lineage_governance.cli.main import main, parser

__all__ = ["main", "parser"]
