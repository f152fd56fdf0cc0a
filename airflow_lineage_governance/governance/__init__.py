"""Metadata and rules from TOML, the class lattice, and the governance checks over the lineage graph."""
