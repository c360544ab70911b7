"""Session fixtures for tests against the real testbed processes."""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "testbed: needs the running testbed (real control plane, KWOK, OLM, opm)")


@pytest.fixture(scope="session")
def testbed():
    """The running testbed: reused when one is up, else brought up (and then torn down at the end)."""
    from testbed import Testbed

    bed = Testbed()
    reused = bed.is_running()
    if not reused:
        bed.up(nodes=int(os.environ.get("KUBEFORGE_TESTBED_NODES", "3")))
    yield bed
    if not reused and os.environ.get("KUBEFORGE_TESTBED_KEEP") != "1":
        bed.down()


@pytest.fixture(scope="session")
def kubeconfig(testbed):
    return testbed.kubeconfig


@pytest.fixture(scope="session")
def api(kubeconfig):
    from testbed.kube import api_client

    client = api_client(kubeconfig, pool=8)
    yield client
    client.close()


@pytest.fixture
def namespace(api, request):
    """A fresh namespace per test, deleted afterwards (no waiting for finalization)."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = "t-" + request.node.name.lower().replace("_", "-")[:40].strip("-") + "-" + os.urandom(3).hex()
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)
