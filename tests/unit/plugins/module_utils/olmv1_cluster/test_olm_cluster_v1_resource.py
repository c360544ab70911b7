# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olmv1_cluster.cluster_catalog.olm_v1_resource names OLM v1 as missing only when discovery lacks its kind: a client
that cannot be made (an invalid kubeconfig, what the catalog_mirror role met) or a starting API server fails with its
own error."""

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, KindNotFoundError
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog import olm_v1_resource

NOT_FOUND = KindNotFoundError("Failed to find exact match for olm.operatorframework.io/v1.ClusterCatalog by [kind, name, singularName, shortNames]")


class _Module:
    def __init__(self, client_error=None, lookup_error=None):
        self.client_error, self.lookup_error, self.looked_up = client_error, lookup_error, []

    @property
    def client(self):
        if self.client_error is not None:
            raise self.client_error
        return object()

    @property
    def cluster(self):
        return self

    def resource(self, kind, api_version):
        client = self.client  # as Cluster.resource makes the module's client first
        self.looked_up.append((kind, api_version, client is not None))
        if self.lookup_error is not None:
            raise self.lookup_error
        return "resource"


@pytest.mark.parametrize(
    "module, message",
    [
        (
            _Module(client_error=K8sError("Could not create API client: Invalid kube-config file. No configuration found.")),
            "^Could not create API client: Invalid kube-config",
        ),
        (_Module(lookup_error=K8sError("the API server is starting (its /readyz is not ok)", status=503)), "^the API server is starting"),
        (_Module(lookup_error=NOT_FOUND), r"^This cluster does not serve ClusterCatalog \(olm.operatorframework.io/v1\): OLM v1 .* is not installed"),
    ],
)
def test_only_a_missing_kind_is_blamed_on_olm_v1(module, message):
    with pytest.raises(K8sError, match=message) as failed:
        olm_v1_resource(module.cluster, "ClusterCatalog")
    if module.client_error is not None:
        assert "not installed" not in failed.value.msg and module.looked_up == []


def test_the_resource_when_the_kind_is_served():
    module = _Module()
    assert olm_v1_resource(module.cluster, "ClusterExtension") == "resource" and module.looked_up == [("ClusterExtension", "olm.operatorframework.io/v1", True)]


@pytest.mark.parametrize("refresh_on_miss", [False, True])
def test_discovery_lacking_the_kind_is_the_error_that_says_so(refresh_on_miss):
    """k8s.client.find_resource's miss (after its refreshes, the API server ready) is the one KindNotFoundError."""
    client = FakeDynamicClient(served=[("v1", "Namespace")])
    with pytest.raises(KindNotFoundError, match="Failed to find exact match for olm.operatorframework.io/v1.ClusterCatalog"):
        find_resource(client, "ClusterCatalog", "olm.operatorframework.io/v1", refresh_on_miss=refresh_on_miss)
