"""The closed vocabularies that cross the layers.

Statement kinds, OpenLineage transformation types and subtypes, finding severities and kinds. String enums, so they
compare equal to the strings events carry and serialise as those strings.
"""

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
        """Return whether the statement changes the target's existing rows (MERGE, UPDATE, DELETE).

        Its result is computed from the target's current rows, so the target is an input (the version read) as well as
        the output (the version written).
        """
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
    DESIGNED_NOT_OBSERVED = "designed_not_observed"
    """An edge or table the SQL in the DAG files gives that no run reported: a branch not taken, a collection gap."""
    OBSERVED_NOT_DESIGNED = "observed_not_designed"
    """An edge or table a run reported that no designed SQL gives: drift, or a manual run."""
    SQL_HASH_MISMATCH = "sql_hash_mismatch"
    """A job's latest run ran other SQL than the DAG files deploy."""

    @property
    def severity(self) -> Severity:
        """Return the kind's severity.

        Missing metadata and the design differences are warnings, every other kind an error.
        """
        return Severity.WARNING if self in WARNINGS else Severity.ERROR


WARNINGS = frozenset(
    {
        FindingKind.MISSING_METADATA,
        FindingKind.DESIGNED_NOT_OBSERVED,
        FindingKind.OBSERVED_NOT_DESIGNED,
        FindingKind.SQL_HASH_MISMATCH,
    }
)
"""The finding kinds that are reported only; every other kind fails the governance run."""


class EdgeSource(StrEnum):
    """Where a lineage edge comes from.

    A received event (observed), a person's `[[declared]]` block in metadata.toml for an uninstrumented job (declared),
    or the SQL of the DAG files read without running (designed).
    """

    OBSERVED = "observed"
    DECLARED = "declared"
    DESIGNED = "designed"


class Confidence(StrEnum):
    """How sure an answer reached through a path is: `observed` only when every hop is, else its weakest hop's source.

    `uncertain` when a hop's evidence is unknown.
    """

    OBSERVED = "observed"
    DECLARED = "declared"
    DESIGNED = "designed"
    UNCERTAIN = "uncertain"


CONFIDENCE_RANK = {Confidence.OBSERVED: 0, Confidence.DECLARED: 1, Confidence.DESIGNED: 2, Confidence.UNCERTAIN: 3}
"""How weak a confidence is (higher is weaker): a path's confidence is its weakest hop's."""
