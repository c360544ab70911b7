# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olmv1_cluster.cluster_catalog_info: which catalogd addresses go through the API server's service proxy. Reading
catalogd's content directly is proven against the testbed's catalogd (tests/integration/olmv1); the testbed's
catalogd runs outside the cluster, so the service-proxy request is checked here by its path only."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog_info import proxy_path


@pytest.mark.parametrize(
    "base, path",
    [
        (
            "https://catalogd-service.olmv1-system.svc/catalogs/operatorhubio",
            "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:443/proxy/catalogs/operatorhubio/api/v1/all",
        ),
        (
            "https://catalogd-service.openshift-catalogd.svc.cluster.local:8443/catalogs/redhat-operators/",
            "/api/v1/namespaces/openshift-catalogd/services/https:catalogd-service:8443/proxy/catalogs/redhat-operators/api/v1/all",
        ),
        ("https://127.0.0.1:8083/catalogs/kubeforge", None),  # the testbed's local catalogd: read directly
        ("https://catalogs.example.com/catalogs/x", None),  # a route
    ],
)
def test_an_in_cluster_catalogd_address_is_read_through_the_api_servers_service_proxy(base, path):
    assert proxy_path(base) == path
