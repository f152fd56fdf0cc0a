"""pyiceberg catalog and DuckDB: the catalog's schema for the parser, pinned reads, atomic writes. No Airflow."""
