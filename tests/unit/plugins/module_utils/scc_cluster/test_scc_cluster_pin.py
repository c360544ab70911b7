"""scc_cluster/pin.py: a pin patch guarded by the resourceVersion that conflicts with a concurrent change is decided
again on the object as it is then. The testbed meets the conflict only now and then (a Deployment's controller
updating its status right after creation), so the conflict is staged here; pinning itself is proven on the testbed
(tests/integration/scc/test_scc_admission.py)."""

from collections import namedtuple

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pin as core
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import pin as glue

Patched = namedtuple("Patched", ["after"])
PIN = core.Pin("Deployment", "web", "demo")


def deployment(version, required=None):
    annotations = {core.REQUIRED_SCC_ANNOTATION: required} if required else {}
    return {"metadata": {"name": "web", "namespace": "demo", "resourceVersion": str(version)}, "spec": {"template": {"metadata": {"annotations": annotations}}}}


class StoredDeployment:
    """The ``Cluster`` calls pin.py makes: ``patch`` answers 409 while the patch's resourceVersion is not the stored
    one; ``get`` reads the stored object."""

    def __init__(self):
        self.stored = deployment(2)
        self.patches = []

    def get(self, kind, name, namespace, api_version=None):
        return self.stored

    def patch(self, kind, name, patch, namespace, api_version=None):
        self.patches.append(patch)
        if patch["metadata"]["resourceVersion"] != self.stored["metadata"]["resourceVersion"]:
            raise K8sError("the object has been modified; please apply your changes to the latest version", status=409)
        required = patch["spec"]["template"]["metadata"]["annotations"][core.REQUIRED_SCC_ANNOTATION]
        self.stored = deployment(int(self.stored["metadata"]["resourceVersion"]) + 1, required)
        return Patched(self.stored)


@pytest.fixture(name="cluster")
def fixture_cluster():
    return StoredDeployment()


def test_a_status_update_meanwhile_is_read_again_and_the_pin_written(cluster):
    change = core.change(PIN, deployment(1), "web-netbind", "present")  # read at version 1; version 2 is stored
    result = glue.write(cluster, [change], "web-netbind", {"changed": False})
    assert [p["metadata"]["resourceVersion"] for p in cluster.patches] == ["1", "2"]
    assert result["pinned"][0]["required_scc"] == "web-netbind" and result["changed"] is True


def test_a_pin_someone_else_set_meanwhile_is_refused_not_overwritten(cluster):
    cluster.stored = deployment(2, "anyuid")
    change = core.change(PIN, deployment(1), "web-netbind", "present")
    with pytest.raises(core.PinError, match="is pinned to SCC anyuid, not web-netbind"):
        glue.write(cluster, [change], "web-netbind", {"changed": False})
    assert len(cluster.patches) == 1


def test_an_invalid_patch_fails_at_once_with_the_servers_reason(cluster):
    """A started Job's pod template is immutable: the API server answers 422, which a merge patch's guard never
    means - not read again and again as if the Job kept changing."""
    change = core.change(PIN, deployment(2), "web-netbind", "present")

    def immutable(kind, name, patch, namespace, api_version=None):
        cluster.patches.append(patch)
        raise K8sError("Job.batch is invalid: spec.template: Invalid value: field is immutable", status=422)

    cluster.patch = immutable
    with pytest.raises(K8sError, match="field is immutable") as failed:
        glue.write(cluster, [change], "web-netbind", {"changed": False})
    assert len(cluster.patches) == 1 and failed.value.status == 422
