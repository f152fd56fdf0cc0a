"""The governance files, read into typed, validated data.

governance/metadata.toml (owners, classes, tiers) and governance/lineage.toml (namespace, class order, propagation,
blast-radius weights).
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_lineage_governance.errors import InvalidNameError
from airflow_lineage_governance.governance.errors import GovernanceConfigError
from airflow_lineage_governance.kinds import EdgeType
from airflow_lineage_governance.refs import ColumnRef, TableRef

DEFAULT_CLASSES = ("public", "internal", "personal", "sensitive")
EDGE_TYPES = tuple(EdgeType)


@dataclass(frozen=True)
class TableMetadata:
    """What metadata.toml declares for one table."""

    name: TableRef
    owner: str | None
    source: bool
    tier: int | None
    columns: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DeclaredLineage:
    """A `[[declared]]` block of metadata.toml.

    The lineage of a job that sends no events, as a person states it, with its owner and the reason. `columns` maps an
    output column to the input columns it is made from; with no columns, every input shapes every output
    (dataset-level).
    """

    job: str
    owner: str
    reason: str
    inputs: tuple[TableRef, ...]
    outputs: tuple[TableRef, ...]
    columns: dict[ColumnRef, tuple[ColumnRef, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Metadata:
    """Every table metadata.toml declares, by its ref, and the declared lineage of uninstrumented jobs."""

    tables: dict[TableRef, TableMetadata]
    declarations: tuple[DeclaredLineage, ...] = ()

    def declared(self) -> dict[ColumnRef, str]:
        """Return every declared column class as `{column: class}`."""
        return {t.name.column(c): cls for t in self.tables.values() for c, cls in t.columns.items()}

    def owners(self) -> dict[TableRef, str | None]:
        """Return every declared table's owner."""
        return {name: table.owner for name, table in self.tables.items()}

    def owner(self, table: TableRef) -> str | None:
        """Return the table's owner, or None when it has no metadata or no owner."""
        known = self.tables.get(table)
        return known.owner if known else None


@dataclass(frozen=True)
class Rules:
    """What lineage.toml sets. `namespace` has no default: lineage.toml must name it."""

    namespace: str = ""
    classes: tuple[str, ...] = DEFAULT_CLASSES
    propagate_through: tuple[EdgeType, ...] = EDGE_TYPES
    tier_weights: dict[int, float] = field(default_factory=lambda: {1: 10.0, 2: 3.0, 3: 1.0})
    owner_weights: dict[str, float] = field(default_factory=dict)
    default_weight: float = 1.0
    gate_threshold: float = 25.0

    def rank(self, cls: str) -> int:
        """Return the class's place on the line (0 is least protected); raise KeyError for an unknown class."""
        return self.classes.index(cls)


def governance_folder() -> Path:
    """Return the folder of metadata.toml and lineage.toml when no path is given.

    The environment form of the `[lineage_governance] governance_dir` setting
    ($AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR), else $LINEAGE_GOVERNANCE_DIR, else ./governance of the working
    directory. (The Airflow shell and the CLI read the setting from airflow.cfg too and pass the paths; this layer reads
    no Airflow configuration.)
    """
    for variable in ("AIRFLOW__LINEAGE_GOVERNANCE__GOVERNANCE_DIR", "LINEAGE_GOVERNANCE_DIR"):
        configured = os.environ.get(variable)
        if configured:
            return Path(configured)
    return Path.cwd() / "governance"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise GovernanceConfigError(path, None, "the file does not exist") from None
    except tomllib.TOMLDecodeError as error:
        raise GovernanceConfigError(path, None, f"it is not valid TOML ({error})") from None


def _expect(value: Any, kind: type | tuple[type, ...], path: Path, key: str, wanted: str) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise GovernanceConfigError(path, key, f"must be {wanted}, not {value!r}")
    return value


def _weight(value: Any, path: Path, key: str) -> float:
    """Return the number as a weight; raise GovernanceConfigError unless it is finite and not negative."""
    number = float(_expect(value, (int, float), path, key, "a number"))
    if not math.isfinite(number) or number < 0:
        raise GovernanceConfigError(path, key, f"must be a finite number, 0 or more, not {value!r}")
    return number


def _namespace(data: dict[str, Any], path: Path) -> str:
    """Return the OpenLineage namespace of the catalog's tables that lineage.toml names.

    Raises GovernanceConfigError when it names none.
    """
    if "namespace" not in data:
        raise GovernanceConfigError(
            path,
            "namespace",
            "is not set; give the OpenLineage namespace of the catalog's tables, the `lineage_namespace` of the "
            'iceberg_catalog connection (e.g. namespace = "iceberg://<catalog_name>")',
        )
    namespace = _expect(data["namespace"], str, path, "namespace", "a string")
    if not namespace:
        raise GovernanceConfigError(path, "namespace", "must not be empty")
    return str(namespace)


def load_rules(path: str | Path | None = None) -> Rules:
    """Return the rules of lineage.toml (default: governance_folder()/lineage.toml).

    Raises GovernanceConfigError naming the file and key for a malformed file, a missing namespace, a wrong type or an
    unknown name.
    """
    path = Path(path) if path else governance_folder() / "lineage.toml"
    data = _read_toml(path)
    classes = tuple(_expect(data.get("classes", list(DEFAULT_CLASSES)), list, path, "classes", "a list of names"))
    if not classes or not all(isinstance(c, str) and c for c in classes) or len(set(classes)) != len(classes):
        raise GovernanceConfigError(path, "classes", "must list distinct class names, least protected first")
    through = tuple(
        _expect(
            data.get("propagate_through", list(EDGE_TYPES)), list, path, "propagate_through", "a list of edge types"
        )
    )
    for edge_type in through:
        if edge_type not in EDGE_TYPES:
            raise GovernanceConfigError(
                path, "propagate_through", f"{edge_type!r} is not an edge type (use DIRECT and/or INDIRECT)"
            )
    through = tuple(EdgeType(t) for t in through)
    blast = _expect(data.get("blast_radius", {}), dict, path, "blast_radius", "a table")
    weights_raw = _expect(
        blast.get("tier_weights", {"1": 10.0, "2": 3.0, "3": 1.0}),
        dict,
        path,
        "blast_radius.tier_weights",
        "a table of tier = weight",
    )
    weights = {}
    for tier, weight in weights_raw.items():
        if not str(tier).isdigit():
            raise GovernanceConfigError(path, f"blast_radius.tier_weights.{tier}", "a tier must be a whole number")
        weights[int(tier)] = _weight(weight, path, f"blast_radius.tier_weights.{tier}")
    owners_raw = _expect(
        blast.get("owner_weights", {}), dict, path, "blast_radius.owner_weights", "a table of owner = weight"
    )
    owner_weights = {
        str(owner): _weight(weight, path, f"blast_radius.owner_weights.{owner}") for owner, weight in owners_raw.items()
    }
    return Rules(
        owner_weights=owner_weights,
        namespace=_namespace(data, path),
        classes=classes,
        propagate_through=through,
        tier_weights=weights,
        default_weight=_weight(blast.get("default_weight", 1.0), path, "blast_radius.default_weight"),
        gate_threshold=_weight(blast.get("gate_threshold", 25.0), path, "blast_radius.gate_threshold"),
    )


def load_metadata(path: str | Path | None = None, rules: Rules | None = None) -> Metadata:
    """Return the tables of metadata.toml, every class checked against the rules' classes.

    The default file is governance_folder()/metadata.toml. Raises GovernanceConfigError naming the file and key.
    """
    path = Path(path) if path else governance_folder() / "metadata.toml"
    rules = rules or Rules()
    data = _read_toml(path)
    tables_raw = _expect(data.get("tables", {}), dict, path, "tables", "a table of tables")
    tables: dict[TableRef, TableMetadata] = {}
    for name, entry in tables_raw.items():
        key = f'tables."{name}"'
        try:
            table = TableRef.parse(name)
        except InvalidNameError:
            raise GovernanceConfigError(path, key, "a table must be named namespace.table") from None
        _expect(entry, dict, path, key, "a table")
        columns = _expect(entry.get("columns", {}), dict, path, f"{key}.columns", "a table of column = class")
        for column, cls in columns.items():
            if cls not in rules.classes:
                raise GovernanceConfigError(
                    path, f"{key}.columns.{column}", f"{cls!r} is not a class (use one of {', '.join(rules.classes)})"
                )
        owner = entry.get("owner")
        tier = entry.get("tier")
        tables[table] = TableMetadata(
            name=table,
            owner=_expect(owner, str, path, f"{key}.owner", "a string") if owner is not None else None,
            source=_expect(entry.get("source", False), bool, path, f"{key}.source", "true or false"),
            tier=_expect(tier, int, path, f"{key}.tier", "a whole number") if tier is not None else None,
            columns=dict(columns),
        )
    blocks = _expect(data.get("declared", []), list, path, "declared", "an array of [[declared]] blocks")
    return Metadata(tables, tuple(_declared(block, path, f"declared[{n}]") for n, block in enumerate(blocks)))


def _refs(value: Any, path: Path, key: str, parse: Any, wanted: str) -> tuple[Any, ...]:
    items = _expect(value, list, path, key, f"a list of {wanted} names")
    try:
        return tuple(parse(_expect(item, str, path, key, f"a list of {wanted} names")) for item in items)
    except InvalidNameError:
        raise GovernanceConfigError(
            path, key, f"every {wanted} must be named namespace.table" + (".column" if wanted == "column" else "")
        ) from None


def _declared(block: Any, path: Path, key: str) -> DeclaredLineage:
    """Return one `[[declared]]` block; raise GovernanceConfigError naming the key at fault."""
    _expect(block, dict, path, key, "a table")
    texts = {}
    for name in ("job", "owner", "reason"):
        value = block.get(name)
        if not isinstance(value, str) or not value.strip():
            raise GovernanceConfigError(
                path,
                f"{key}.{name}",
                "must be given as a non-empty string (declared lineage names its job, who vouches for it, and why)",
            )
        texts[name] = value
    inputs = _refs(block.get("inputs", []), path, f"{key}.inputs", TableRef.parse, "table")
    outputs = _refs(block.get("outputs", []), path, f"{key}.outputs", TableRef.parse, "table")
    if not inputs or not outputs:
        raise GovernanceConfigError(path, key, "must list the job's inputs and outputs (tables)")
    columns: dict[ColumnRef, tuple[ColumnRef, ...]] = {}
    for target, sources in _expect(
        block.get("columns", {}), dict, path, f"{key}.columns", "a table of output column = [input columns]"
    ).items():
        where = f'{key}.columns."{target}"'
        (column,) = _refs([target], path, where, ColumnRef.parse, "column")
        found = _refs(sources, path, where, ColumnRef.parse, "column")
        if column.table not in outputs or any(s.table not in inputs for s in found):
            raise GovernanceConfigError(path, where, "must map a column of an output to columns of the inputs")
        columns[column] = found
    return DeclaredLineage(texts["job"], texts["owner"], texts["reason"], inputs, outputs, columns)
