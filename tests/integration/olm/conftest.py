"""Shared fixtures of the OLM v0 integration tests."""

import pytest
from kubernetes import client
from lib.olm_catalog import make_catalog


@pytest.fixture
def catalog_ns(custom, namespace, testbed):
    """The test's namespace, with a CatalogSource at the testbed's `opm serve` (lib.olm_catalog.CATALOG)."""
    make_catalog(custom, namespace, testbed.catalog_address)
    return namespace


@pytest.fixture
def operator_ns(catalog_ns, api):
    """A namespace the module creates (deleted afterwards)."""
    name = f"{catalog_ns}-op"[:63]
    yield name
    try:
        client.CoreV1Api(api).delete_namespace(name)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
