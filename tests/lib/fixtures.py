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


@pytest.fixture(scope="session")
def real_node(testbed):
    """The testbed's real kubelet node (tests/testbed/realnode.py): name, images, and the pod spec fields that put a pod
    there. A testbed brought up without it fails the test: the real paths are part of every run."""
    from testbed import realnode

    facts = testbed.state.get("real_node")
    if not facts:
        pytest.fail("the testbed runs without its real node (`up --without-real-node`): bring it up with one")
    return {
        "name": facts["name"],
        "images": facts["images"],
        "node_selector": dict(realnode.NODE_SELECTOR),
        "tolerations": [dict(realnode.TOLERATION)],
        "pod_subnet": realnode.POD_SUBNET,
    }
