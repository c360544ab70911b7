"""Fixtures shared by test directories, registered for every test by the repository's conftest.py
(``pytest_plugins``): none is autouse, and those that need the testbed are only set up where a test asks for them.
"""

import pytest


@pytest.fixture(scope="module")
def nodes(testbed, request):
    """The testbed scaled to the test file's ``NODES`` KWOK nodes (once per file); returns that number."""
    testbed.scale_nodes(request.module.NODES)
    return request.module.NODES


@pytest.fixture
def custom(api):
    """kubernetes' CustomObjectsApi on the testbed's admin client."""
    from kubernetes import client

    return client.CustomObjectsApi(api)
