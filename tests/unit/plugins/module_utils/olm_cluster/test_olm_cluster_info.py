# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_cluster.info: which requests the glue sends, and how it degrades when the PackageManifest API is missing.

The fake stands in for the dynamic client only where the testbed cannot help: an API server that answers 403 or 500
on one resource. The real requests against OLM are in tests/integration/olm/test_operator_info.py.
"""

import pytest
from lib.fakes import api_exception
from lib.olm_info import NS, OPERATORS, PACKAGES, cluster, olm_client, package_manifest, subscription

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import info as glue


def test_one_operator_takes_four_requests():
    client = cluster()
    result = glue.operator_info(client, NS, package="kube-demo")
    assert client.requests == [
        ("Subscription", "LIST", None, None),
        ("ClusterServiceVersion", "GET", "kube-demo.v0.0.1", None),
        ("InstallPlan", "LIST", None, None),
        ("PackageManifest", "LIST", f"catalog=demo,catalog-namespace={NS}", "metadata.name=kube-demo"),
    ]
    record = result["operator"]
    assert "warnings" not in result
    assert record["installed"] is True and record["csv"]["version"] == "0.0.1"
    assert record["catalog"]["catalog_source"] == "demo"  # not the community catalog's manifest of the same package
    assert [p["name"] for p in record["pending_install_plans"]] == ["install-pfk2t"]
    assert record["available_upgrades"] == ["0.0.2"]


def test_a_subscription_name_is_read_with_one_get():
    client = cluster()
    result = glue.operator_info(client, NS, name="other-sub")
    assert client.requests == [
        ("Subscription", "GET", "other-sub", None),
        ("InstallPlan", "LIST", None, None),  # nothing installed yet: no CSV request
        ("PackageManifest", "LIST", f"catalog=demo,catalog-namespace={NS}", "metadata.name=kube-other"),
    ]
    record = result["operator"]
    assert record["package"] == "kube-other" and record["present"] is True and record["installed"] is False
    assert [p["csvs"] for p in record["pending_install_plans"]] == [["kube-other.v1.0.0"]]


def test_a_subscription_name_for_another_package_fails():
    with pytest.raises(ValueError, match="is for package kube-other, not kube-demo"):
        glue.operator_info(cluster(), NS, package="kube-demo", name="other-sub")


def test_every_operator_of_the_namespace_lists_each_kind_once():
    client = cluster()
    result = glue.operator_info(client, NS)
    assert client.requests == [
        ("Subscription", "LIST", None, None),
        ("ClusterServiceVersion", "LIST", "!olm.copiedFrom", None),
        ("InstallPlan", "LIST", None, None),
        ("PackageManifest", "LIST", f"catalog=demo,catalog-namespace={NS}", "metadata.name=kube-demo"),
        ("PackageManifest", "LIST", f"catalog=demo,catalog-namespace={NS}", "metadata.name=kube-other"),
    ]
    demo, other = result["operators"]
    assert (demo["package"], demo["installed"], demo["upgrade_available"]) == ("kube-demo", True, True)
    assert (other["package"], other["installed"], other["csv"]) == ("kube-other", False, None)
    assert [p["name"] for p in other["pending_install_plans"]] == ["install-other"]


def test_every_namespace_lists_each_kind_once_across_the_cluster():
    """Without a namespace: one cluster-wide LIST per kind; each record names its namespace and gets the CSV and the
    InstallPlans of its own namespace, and the PackageManifests are read as seen from there."""
    objects = cluster().objects
    elsewhere = dict(subscription(name="kube-demo", uid="u9", installed="kube-demo.v0.0.1", current="kube-demo.v0.0.1", plan=None))
    elsewhere["metadata"] = dict(elsewhere["metadata"], namespace="team-b")
    objects["Subscription"].append(elsewhere)
    client = olm_client(objects, namespaces={NS, "team-b", None})
    result = glue.operator_info(client, None)
    assert [r[0] for r in client.requests[:3]] == ["Subscription", "ClusterServiceVersion", "InstallPlan"]
    assert [(r["namespace"], r["package"]) for r in result["operators"]] == [(NS, "kube-demo"), (NS, "kube-other"), ("team-b", "kube-demo")]
    demo, _other, demo_b = result["operators"]
    assert demo["installed"] is True and [p["name"] for p in demo["pending_install_plans"]] == ["install-pfk2t"]
    # team-b has no CSV of its own (the fake's CSV is in NS) and no InstallPlan: nothing of NS leaks into its record
    assert demo_b["csv"] is None and demo_b["pending_install_plans"] == []
    only = glue.operator_info(olm_client(objects, namespaces={NS, "team-b", None}), None, package="kube-other")
    assert [(r["namespace"], r["package"]) for r in only["operators"]] == [(NS, "kube-other")] and "operator" not in only


def test_options_that_need_a_namespace_are_refused_without_one():
    for option in ({"name": "other-sub"}, {"source": "demo"}, {"source_namespace": NS}):
        with pytest.raises(ValueError, match="need a namespace"):
            glue.operator_info(cluster(), None, **option)


def test_an_empty_namespace_sends_one_request():
    client = olm_client({})
    assert glue.operator_info(client, NS) == {"operators": []}
    assert client.requests == [("Subscription", "LIST", None, None)]


def test_an_absent_package_still_reports_its_catalog():
    client = cluster()
    client.objects["PackageManifest"].append(package_manifest(package="kube-new"))
    result = glue.operator_info(client, NS, package="kube-new")
    assert client.requests == [("Subscription", "LIST", None, None), ("PackageManifest", "LIST", None, "metadata.name=kube-new")]
    record = result["operator"]
    assert record["present"] is False and record["catalog"]["channels"][0]["versions"] == ["0.0.1", "0.0.2"]


def test_an_absent_package_in_two_catalogs_needs_a_source():
    client = cluster()
    client.objects["Subscription"] = []
    result = glue.operator_info(client, NS, package="kube-demo")
    assert result["operator"]["catalog"]["catalog_source"] == "demo"  # the catalog in the namespace itself wins
    client.objects["PackageManifest"] = [package_manifest(source="a", source_namespace="olm"), package_manifest(source="b", source_namespace="olm")]
    result = glue.operator_info(client, NS, package="kube-demo")
    assert result["operator"]["catalog"] is None
    assert result["warnings"] == ["package kube-demo is in 2 catalogs (olm/a, olm/b); set catalog and catalog_namespace to choose one"]
    client.requests.clear()
    result = glue.operator_info(client, NS, package="kube-demo", source="b", source_namespace="olm")
    assert client.requests[-1] == ("PackageManifest", "LIST", "catalog=b,catalog-namespace=olm", "metadata.name=kube-demo")
    assert result["operator"]["catalog"]["catalog_source"] == "b"


NOT_SERVED = "catalog information is not reported: the packages.operators.coreos.com/v1 API is not served (OLM's packageserver serves PackageManifests)"


def test_without_the_packagemanifest_api_the_catalog_is_null_with_one_warning():
    served = {(OPERATORS, "Subscription"), (OPERATORS, "ClusterServiceVersion"), (OPERATORS, "InstallPlan")}
    client = cluster(served=served)
    result = glue.operator_info(client, NS)
    assert [r["catalog"] for r in result["operators"]] == [None, None]
    assert result["warnings"] == [NOT_SERVED]
    # one discovery request, no discovery refresh (a refresh per lookup attempt is what kubernetes.core would do)
    assert [r for r in client.requests if r[0] in ("discovery", "PackageManifest")] == [
        ("discovery", "GET", "/apis/packages.operators.coreos.com/v1", None),
    ]
    assert client.resources.invalidations == 0
    # what needs no catalog is still there
    assert result["operators"][0]["upgrade_available"] is True and result["operators"][0]["installed"] is True


def test_a_cached_packagemanifest_api_costs_no_discovery_request():
    client = cluster()
    glue.operator_info(client, NS, package="kube-demo")
    assert not [r for r in client.requests if r[0] == "discovery"]
    assert client.resources.invalidations == 0


V1 = "olm.operatorframework.io/v1"


def _extension(name, namespace, package, version):
    conditions = [{"type": t, "status": "True", "reason": "Succeeded", "message": "m", "observedGeneration": 1} for t in ("Installed", "Progressing")]
    return {
        "apiVersion": V1,
        "kind": "ClusterExtension",
        "metadata": {"name": name, "generation": 1},
        "spec": {"namespace": namespace, "source": {"sourceType": "Catalog", "catalog": {"packageName": package}}},
        "status": {"conditions": conditions, "install": {"bundle": {"name": f"{package}.v{version}", "version": version}}},
    }


def test_cluster_extensions_of_the_namespace_take_one_list_when_olm_v1_is_served():
    served = {
        (OPERATORS, "Subscription"),
        (OPERATORS, "ClusterServiceVersion"),
        (OPERATORS, "InstallPlan"),
        (PACKAGES, "PackageManifest"),
        (V1, "ClusterExtension"),
    }
    client = cluster(served=served)
    client.objects["ClusterExtension"] = [
        _extension("b", NS, "kube-v1demo", "0.2.0"),
        _extension("a", "elsewhere", "kube-v1demo", "0.1.0"),
        _extension("c", NS, "kube-other", "1.0.0"),
    ]
    result = glue.operator_info(client, NS)
    assert [r for r in client.requests if r[0] in ("discovery", "ClusterExtension")] == [("ClusterExtension", "LIST", None, None)]
    assert [(e["name"], e["installed_version"], e["installed"]) for e in result["cluster_extensions"]] == [("b", "0.2.0", True), ("c", "1.0.0", True)]
    only = glue.operator_info(client, NS, package="kube-v1demo")
    assert [e["name"] for e in only["cluster_extensions"]] == ["b"]
    client.errors["ClusterExtension"] = api_exception(403, "clusterextensions is forbidden: cannot list at the cluster scope")
    denied = glue.operator_info(client, NS)
    assert "cluster_extensions" not in denied and len(denied["operators"]) == 2
    assert denied["warnings"] == [
        "OLM v1 ClusterExtensions are not reported: Failed to list ClusterExtension: clusterextensions is forbidden: cannot list at the cluster scope"
    ]
    del client.errors["ClusterExtension"]
    by_name = glue.operator_info(client, NS, name="other-sub")
    assert "cluster_extensions" not in by_name  # a Subscription asked for by name
    # served but not yet in the discovery cache: not reported, and no request to find out
    client = cluster(served=served, cached={OPERATORS, PACKAGES})
    client.objects["ClusterExtension"] = [_extension("b", NS, "kube-v1demo", "0.2.0")]
    assert "cluster_extensions" not in glue.operator_info(client, NS)
    assert not [r for r in client.requests if r[0] in ("discovery", "ClusterExtension")]


def test_a_packagemanifest_api_newer_than_the_discovery_cache_is_found():
    client = cluster(cached={OPERATORS})
    result = glue.operator_info(client, NS, package="kube-demo")
    assert result["operator"]["available_upgrades"] == ["0.0.2"] and "warnings" not in result
    assert ("discovery", "GET", "/apis/packages.operators.coreos.com/v1", None) in client.requests
    assert client.resources.invalidations == 1  # find_resource refreshes the stale cache once


def test_an_unavailable_aggregated_api_is_a_warning():
    client = cluster(cached={OPERATORS}, errors={"discovery": api_exception(503, "service unavailable")})
    result = glue.operator_info(client, NS, package="kube-demo")
    assert result["operator"]["catalog"] is None
    assert result["warnings"] == [
        "catalog information is not reported: the packages.operators.coreos.com/v1 API is not available (HTTP 503): service unavailable"
        " (OLM's packageserver serves PackageManifests)"
    ]


@pytest.mark.parametrize(
    "status, text", [(403, "packagemanifests.packages.operators.coreos.com is forbidden"), (503, "the server is currently unable to handle the request")]
)
def test_an_unreadable_packagemanifest_api_is_a_warning(status, text):
    client = cluster(errors={"PackageManifest": api_exception(status, text)})
    result = glue.operator_info(client, NS)
    assert [r["catalog"] for r in result["operators"]] == [None, None]
    assert len(result["warnings"]) == 1
    assert result["warnings"] == [f"catalog information is not reported: Failed to list PackageManifest in namespace {NS}: {text} (HTTP {status})"]
    assert [kind for kind, *_rest in client.requests].count("PackageManifest") == 1  # it stops asking


@pytest.mark.parametrize("kind", ["Subscription", "InstallPlan", "ClusterServiceVersion"])
def test_errors_on_olm_objects_fail(kind):
    client = cluster(errors={kind: api_exception(500, "etcdserver: request timed out")})
    with pytest.raises(K8sError) as caught:
        glue.operator_info(client, NS, package="kube-demo")
    assert caught.value.status == 500
    assert "etcdserver: request timed out" in str(caught.value)


def test_operators_api_not_served_fails():
    client = cluster(served=set())
    with pytest.raises(K8sError, match="Failed to find exact match for operators.coreos.com/v1alpha1.Subscription"):
        glue.operator_info(client, NS)
