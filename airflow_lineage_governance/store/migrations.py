"""The store's schema version: read it, upgrade an older store in place, refuse a newer one.

Rule: a provider upgrades a store of an older schema version (every migration after the store's, in order, in one
transaction) and refuses, with one sentence, a store of a newer version than it knows; it never downgrades.
"""

from __future__ import annotations

import time

from airflow_lineage_governance import __version__
from airflow_lineage_governance.store.engine import Engine
from airflow_lineage_governance.store.errors import StoreError, StoreVersionError
from airflow_lineage_governance.store.ids import RUN_KEY, SNAPSHOT_KEY
from airflow_lineage_governance.store.schema import MIGRATIONS, SCHEMA_VERSION, OnlyOn

BLOB = {"duckdb": "BLOB", "postgres": "BYTEA"}
MIGRATION_LOCK = 0x4C494E454147  # the advisory lock writers of the schema take turns on
"""The advisory lock key every process migrating a PostgreSQL store takes, so two never migrate at once."""


def store_version(engine: Engine) -> tuple[int, str] | None:
    """Return the store's schema version and the provider version that applied it.

    None for a database that holds no store yet.

    Raises:
        StoreVersionError: The version table is there but cannot be read.
    """
    if "store_versions" not in engine.tables():
        return None
    found = engine.query("SELECT version, provider_version FROM store_versions ORDER BY version DESC LIMIT 1")
    if not found or not isinstance(found[0][0], int):
        raise StoreVersionError(
            f"{engine.description}: the lineage store records no schema version; it was not "
            "made by `lineage-governance store init`, so give another database or file"
        )
    return int(found[0][0]), str(found[0][1])


def refuse_newer(engine: Engine, version: int, provider: str) -> None:
    """Raise StoreVersionError when the store's schema is newer than this provider's.

    Args:
        engine: The store's engine (for its description).
        version: The store's schema version.
        provider: The provider version that applied it.

    Raises:
        StoreVersionError: The store's schema version is above `SCHEMA_VERSION`.
    """
    if version > SCHEMA_VERSION:
        raise StoreVersionError(
            f"{engine.description}: the lineage store has schema version {version} (written by "
            f"airflow-lineage-governance {provider}), newer than version {SCHEMA_VERSION} this "
            f"provider ({__version__}) knows; upgrade airflow-lineage-governance to read it"
        )


def migrate(engine: Engine, target: int = SCHEMA_VERSION) -> int:
    """Creates the store, or upgrades it in place to schema version `target`, in one transaction.

    Args:
        engine: The store's engine.
        target: The schema version to reach (tests make older stores with a lower one).

    Returns:
        The store's schema version afterwards.

    Raises:
        StoreVersionError: The store is newer than this provider knows, or newer than `target`.
    """
    if target not in MIGRATIONS:
        raise StoreError(f"schema version {target} is not one this provider knows (1 to {SCHEMA_VERSION})")
    with engine.transaction():
        engine.lock([MIGRATION_LOCK])
        found = store_version(engine)
        version = 0 if found is None else found[0]
        if found is not None:
            refuse_newer(engine, *found)
        if version > target:
            raise StoreVersionError(
                f"{engine.description}: the lineage store has schema version {version}, newer "
                f"than the version {target} asked for; a store is never downgraded"
            )
        for step in range(version + 1, target + 1):
            for entry in MIGRATIONS[step]:
                if isinstance(entry, OnlyOn) and entry.dialect != engine.dialect:
                    continue
                statement = entry.statement if isinstance(entry, OnlyOn) else entry
                engine.execute(
                    statement.format(
                        blob=BLOB[engine.dialect],
                        text=engine.text_order,
                        snapshot_key=SNAPSHOT_KEY[engine.dialect].format(alias=""),
                        run_key=RUN_KEY[engine.dialect].format(alias=""),
                    )
                )
            engine.execute(
                "INSERT INTO store_versions (version, applied_at_us, provider_version) VALUES (?, ?, ?)",
                [step, time.time_ns() // 1000, __version__],
            )
    return target
