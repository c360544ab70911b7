"""olm/cluster_extension.deletion_blockers: what holds a ClusterExtension being deleted, in words."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.cluster_extension import deletion_blockers

CRD = {"metadata": {"name": "kubev1demos.v1demo.kubeforge.io", "finalizers": ["customresourcecleanup.apiextensions.k8s.io"]}}


def item(name, finalizers=()):
    return {"metadata": {"name": name, "namespace": "ns", "finalizers": list(finalizers)}}


@pytest.mark.parametrize("extension, crds, leftovers, expected", [
    ({"metadata": {"finalizers": ["foregroundDeletion"]}}, [], {}, ""),
    (
        {"metadata": {"finalizers": ["foregroundDeletion", "olm.operatorframework.io/cleanup-unpack-cache"]}},
        [],
        {},
        "its finalizers olm.operatorframework.io/cleanup-unpack-cache remain (operator-controller removes them: is it running?)",
    ),
    (None, [CRD], {}, "CustomResourceDefinition kubev1demos.v1demo.kubeforge.io is not deleted yet"),
    (
        None,
        [CRD],
        {CRD["metadata"]["name"]: [item("a", ["example.com/cleanup"]), item("b"), item("c"), item("d")]},
        "CustomResourceDefinition kubev1demos.v1demo.kubeforge.io waits for 4 of its objects to be deleted - ns/a (finalizers: "
        "example.com/cleanup), ns/b (finalizers: none), ns/c (finalizers: none) and 1 more: their finalizers were the uninstalled "
        "operator's to remove; remove them yourself once nothing needs that cleanup",
    ),
])
def test_deletion_blockers(extension, crds, leftovers, expected):
    assert deletion_blockers(extension, crds, leftovers) == expected
