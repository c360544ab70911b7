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
    registry = testbed.state["registry"]
    return {
        "name": facts["name"],
        "images": facts["images"],
        # The testbed registry, which the node's containerd pulls from (with these credentials).
        "registry": {"host": registry["host"], "ca_file": registry["ca_file"], "username": registry["username"], "password_file": registry["password_file"]},
        "node_selector": dict(realnode.NODE_SELECTOR),
        "tolerations": [dict(realnode.TOLERATION)],
        "pod_subnet": realnode.POD_SUBNET,
    }


@pytest.fixture
def real_node_namespace(api, real_node, request):
    """A fresh namespace whose pods all run on the real node (namespace node selector and default tolerations),
    deleted afterwards: OLM's registry pods, bundle unpack Jobs and operator Deployments made there run for real."""
    import os

    from kubernetes import client
    from testbed import realnode

    core = client.CoreV1Api(api)
    name = "r-" + request.node.name.lower().replace("_", "-")[:40].strip("-") + "-" + os.urandom(3).hex()
    core.create_namespace({"metadata": {"name": name, "annotations": dict(realnode.NAMESPACE_ANNOTATIONS)}})
    yield name
    core.delete_namespace(name)
