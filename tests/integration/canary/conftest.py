"""Every canary test creates DaemonSets that must land on the testbed's KWOK nodes."""

import pytest


@pytest.fixture(scope="module", autouse=True)
def every_test_on_kwok_nodes(nodes):
    """The shared ``nodes`` fixture (lib.fixtures) for every test file here."""
