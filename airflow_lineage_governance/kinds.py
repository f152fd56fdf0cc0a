"""The closed vocabularies that cross the layers: statement kinds, OpenLineage transformation types and
subtypes, finding severities and kinds. String enums, so they compare equal to the strings events carry and
serialise as those strings."""

from __future__ import annotations

from enum import StrEnum


class StatementKind(StrEnum):
    """What a statement does to its target."""

    CREATE_TABLE_AS = "CREATE TABLE AS"
    INSERT = "INSERT"
    MERGE = "MERGE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"

    @property
    def reads_target(self) -> bool:
        """Returns whether the statement changes the target's existing rows (MERGE, UPDATE, DELETE): its result is
        computed from the target's current rows, so the target is an input (the version read) as well as the
        output (the version written)."""
        return self in DML_KINDS


DML_KINDS = frozenset({StatementKind.MERGE, StatementKind.UPDATE, StatementKind.DELETE})
"""The statement kinds that rewrite the target's rows in place rather than create or append to it."""


class EdgeType(StrEnum):
    """OpenLineage transformation type: a value copied or computed (DIRECT), or one that shapes rows (INDIRECT)."""

    DIRECT = "DIRECT"
    INDIRECT = "INDIRECT"


class Subtype(StrEnum):
    """OpenLineage transformation subtype."""

    IDENTITY = "IDENTITY"
    TRANSFORMATION = "TRANSFORMATION"
    AGGREGATION = "AGGREGATION"
    JOIN = "JOIN"
    FILTER = "FILTER"
    GROUP_BY = "GROUP_BY"
    SORT = "SORT"
    WINDOW = "WINDOW"
    CONDITIONAL = "CONDITIONAL"


DIRECT_RANK = {Subtype.IDENTITY: 0, Subtype.TRANSFORMATION: 1, Subtype.AGGREGATION: 2}
"""How strongly a DIRECT subtype changes the value: the strongest wins when one source reaches a column twice."""


class Severity(StrEnum):
    """How a finding counts: an error fails the governance run, a warning is reported only."""

    ERROR = "error"
    WARNING = "warning"


class FindingKind(StrEnum):
    """What a governance finding is about; each kind has one severity."""

    TARGET_RUN_UNFINISHED = "target_run_unfinished"
    MISSING_COMPLETE = "missing_complete"
    UNACCOUNTED_TABLE = "unaccounted_table"
    UNDERSTATED_CLASSIFICATION = "understated_classification"
    MISSING_METADATA = "missing_metadata"
    LINEAGE_UNAVAILABLE = "lineage_unavailable"
    """The event source could not be read (or only in part): the checks that need the lineage were skipped."""

    @property
    def severity(self) -> Severity:
        """Returns the kind's severity: missing metadata is a warning, every other kind an error."""
        return Severity.WARNING if self is FindingKind.MISSING_METADATA else Severity.ERROR
