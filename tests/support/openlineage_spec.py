"""OpenLineage conformance: events validated with jsonschema's Draft 2020-12 validator against the official
schemas in ../shared/openlineage-spec (read from there, never copied) and our own facets' schemas, every `$ref`
resolved through a local registry (nothing fetched)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SPEC = Path(__file__).resolve().parents[3] / "shared" / "openlineage-spec"
OURS = Path(__file__).resolve().parents[2] / "airflow_lineage_governance" / "spec"
EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
# Facets the Airflow OpenLineage provider defines itself; the spec has no schema for them.
PROVIDER_FACETS = frozenset(
    {
        "airflow",
        "airflowDagRun",
        "airflowState",
        "airflow_runArgs",
        "airflow_version",
        "unknownSourceAttribute",
        "debug",
    }
)


def _schemas() -> list[dict]:
    paths = [SPEC / "OpenLineage.json", *sorted((SPEC / "facets").glob("*.json")), *sorted(OURS.glob("*.json"))]
    return [json.loads(path.read_text()) for path in paths]


@cache
def registry() -> Registry:
    """Returns the registry of every schema by its `$id`."""
    return Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in _schemas())


@cache
def _by_facet_file() -> dict[str, str]:
    return {schema["$id"].rsplit("/", 1)[1]: schema["$id"] for schema in _schemas()}


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=registry())


@dataclass
class Conformance:
    """What validating events found: errors, facets validated by schema URL, and facets with no schema."""

    events: int = 0
    errors: list[str] = field(default_factory=list)
    validated: dict[str, str] = field(default_factory=dict)  # facet name -> schema it was validated against
    version_fallbacks: dict[str, str] = field(default_factory=dict)  # facet name -> the URL it named
    unschemed: set[str] = field(default_factory=set)


def _facets(event: dict) -> Iterator[tuple[str, str, dict]]:
    yield from (("run", k, v) for k, v in (event.get("run", {}).get("facets") or {}).items())
    yield from (("job", k, v) for k, v in (event.get("job", {}).get("facets") or {}).items())
    for side in ("inputs", "outputs"):
        for dataset in event.get(side) or []:
            for group in ("facets", "inputFacets", "outputFacets"):
                yield from ((f"{side}:{dataset['name']}", k, v) for k, v in (dataset.get(group) or {}).items())


def _check_facet(where: str, name: str, facet: dict, found: Conformance) -> None:
    url = facet.get("_schemaURL", "") if isinstance(facet, dict) else ""
    base, _, fragment = url.partition("#")
    known = _by_facet_file()
    if base not in known.values():
        local = known.get(base.rsplit("/", 1)[-1])
        if local is None:
            found.unschemed.add(name)
            return
        found.version_fallbacks[name] = url
        base = local
    ref = f"{base}#{fragment}" if fragment else base
    for error in _validator(ref).iter_errors(facet):
        found.errors.append(f"{where} facet {name}: {error.message} at {list(error.absolute_path)}")
    found.validated[name] = ref


def conformance(events: list[dict]) -> Conformance:
    """Returns what validating every event and each of its facets against its schema found."""
    found = Conformance()
    event_validator = _validator(EVENT)
    for event in events:
        found.events += 1
        label = f"{event.get('eventType')} {event.get('job', {}).get('name')}"
        found.errors.extend(
            f"{label}: {error.message} at {list(error.absolute_path)}" for error in event_validator.iter_errors(event)
        )
        for where, name, facet in _facets(event):
            _check_facet(f"{label} {where}", name, facet, found)
    return found
