"""Shared fixtures of the OLM v0 integration tests."""

import pytest
from lib.olm_catalog import make_catalog


@pytest.fixture
def catalog_ns(custom, namespace, testbed):
    """The test's namespace, with a CatalogSource at the testbed's `opm serve` (lib.olm_catalog.CATALOG)."""
    make_catalog(custom, namespace, testbed.catalog_address)
    return namespace
