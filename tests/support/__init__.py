"""Helpers the tests of more than one package share: events, catalogs, servers, conformance and sample data."""
