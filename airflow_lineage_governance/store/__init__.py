"""The lineage store.

The lineage history in a database (an embedded DuckDB file or PostgreSQL), its versioned schema, idempotent ingest of
OpenLineage events and the questions asked of it as queries.
"""
