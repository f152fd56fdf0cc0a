"""Event sources and the column graph rebuilt from received OpenLineage events: impact and provenance."""
