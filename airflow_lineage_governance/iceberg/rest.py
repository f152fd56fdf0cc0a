"""pyiceberg's REST catalog with a bound on every request.

A server that is down, unreachable or slow is one sentence naming the catalog (CatalogUnreachableError), never a hung
task or a transport traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests
from pyiceberg.catalog.rest import RestCatalog
from requests.adapters import HTTPAdapter

from airflow_lineage_governance.iceberg.errors import CatalogUnreachableError

TIMEOUT_PROPERTY = "request-timeout-seconds"
"""Our catalog property: the seconds a REST catalog may take to accept a connection and to answer a request."""
DEFAULT_TIMEOUT_S = 60.0
CATALOG_IMPL = "airflow_lineage_governance.iceberg.rest.BoundedRestCatalog"


def request_timeout(properties: Mapping[str, str]) -> float:
    """Return the request timeout in seconds `properties` ask for (DEFAULT_TIMEOUT_S when unset).

    Raises ValueError for a value that is not a positive number.
    """
    value = float(properties.get(TIMEOUT_PROPERTY, DEFAULT_TIMEOUT_S))
    if not value > 0:
        raise ValueError(f"the catalog property {TIMEOUT_PROPERTY} must be a positive number of seconds.")
    return value


class _BoundedAdapter(HTTPAdapter):
    """Sends every request with the catalog's timeout and turns a failed transport into the catalog's sentence."""

    def __init__(self, catalog: str, uri: str, timeout: float) -> None:
        super().__init__()
        self.catalog, self.uri, self.timeout = catalog, uri, timeout

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        try:
            return super().send(
                request,
                stream=stream,
                timeout=self.timeout if timeout is None else timeout,
                verify=verify,
                cert=cert,
                proxies=proxies,
            )
        except requests.exceptions.Timeout:
            raise CatalogUnreachableError(self.catalog, self.uri, f"did not answer within {self.timeout:g} s") from None
        except requests.exceptions.ConnectionError:
            raise CatalogUnreachableError(
                self.catalog, self.uri, "could not be reached (the connection failed)"
            ) from None


class BoundedRestCatalog(RestCatalog):
    """pyiceberg's RestCatalog with every request bounded by the `request-timeout-seconds` property.

    The config and token requests too; a request the server does not answer raises CatalogUnreachableError.
    """

    def _config_headers(self, session: requests.Session) -> None:
        # The first thing pyiceberg does with each session it makes, before any request (the OAuth token's too).
        adapter = _BoundedAdapter(
            self.name, self.uri if hasattr(self, "uri") else self.properties["uri"], request_timeout(self.properties)
        )
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        super()._config_headers(session)
