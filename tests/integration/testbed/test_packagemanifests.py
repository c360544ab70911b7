"""OLM's packageserver on the testbed: the PackageManifest API served through the aggregator."""

import json

import pytest
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException
from lib.polling import poll_until
from testbed import catalog

pytestmark = pytest.mark.testbed


def _channel_heads(package):
    """{channel: head CSV} from the package's catalog template: the entry no other entry replaces."""
    heads = {}
    for blob in catalog.catalog_header(package):
        if blob["schema"] == "olm.channel":
            replaced = {e.get("replaces") for e in blob["entries"]}
            heads[blob["name"]] = [e["name"] for e in blob["entries"] if e["name"] not in replaced]
    return heads


def _wait_for_packages(manifests, namespace, source, expected, timeout=90):
    def by_name():
        items = manifests.get(namespace=namespace, label_selector=f"catalog={source}").to_dict()["items"]
        return {item["metadata"]["name"]: item for item in items}

    return poll_until(by_name, timeout, 1, f"packagemanifests {sorted(expected)} of {source}", until=lambda found: set(found) >= expected, show=sorted)


def test_packages_api_service_is_available(api):
    service = client.ApiregistrationV1Api(api).read_api_service("v1.packages.operators.coreos.com")
    conditions = {c.type: c for c in service.status.conditions}
    assert conditions["Available"].status == "True", conditions["Available"].message
    assert service.spec.service.name == "packageserver-service"
    # The Service behind it is an ExternalName to localhost: the aggregator dials loopback only.
    svc = client.CoreV1Api(api).read_namespaced_service(service.spec.service.name, service.spec.service.namespace)
    assert (svc.spec.type, svc.spec.external_name) == ("ExternalName", "localhost")


def test_package_manifests_list_the_testbed_catalog_with_channels_and_entries(api, namespace, testbed):
    dyn = dynamic.DynamicClient(api)
    source = "tb-" + namespace[-6:]
    dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="CatalogSource").create(
        namespace=namespace,
        body={
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": source, "namespace": namespace},
            "spec": {"sourceType": "grpc", "address": testbed.catalog_address, "displayName": "testbed catalog"},
        },
    )
    manifests = dyn.resources.get(api_version="packages.operators.coreos.com/v1", kind="PackageManifest")

    found = _wait_for_packages(manifests, namespace, source, set(catalog.PACKAGES))

    for package in catalog.PACKAGES:
        status = found[package]["status"]
        assert status["catalogSource"] == source
        assert status["catalogSourceNamespace"] == namespace
        heads = _channel_heads(package)
        assert {c["name"]: [c["currentCSV"]] for c in status["channels"]} == heads
        header = catalog.catalog_header(package)
        assert status["defaultChannel"] == next(b["defaultChannel"] for b in header if b["schema"] == "olm.package")
        for channel in status["channels"]:
            template = next(b for b in header if b["schema"] == "olm.channel" and b["name"] == channel["name"])
            assert sorted(e["name"] for e in channel["entries"]) == sorted(e["name"] for e in template["entries"])
            assert all(e["name"] == f"{package}.v{e['version']}" for e in channel["entries"])

    kube_demo = {c["name"]: c for c in found["kube-demo"]["status"]["channels"]}
    assert [e["version"] for e in kube_demo["stable"]["entries"]] == ["0.0.2", "0.0.1"]
    allns = found["kube-allns"]["status"]["channels"][0]["currentCSVDesc"]["installModes"]
    assert [m["type"] for m in allns if m["supported"]] == ["AllNamespaces"]

    # A single package by name, as `kubectl get packagemanifest kube-demo -n <ns>` reads it.
    one = manifests.get(namespace=namespace, name="kube-demo").to_dict()
    assert one["status"]["packageName"] == "kube-demo"


def test_package_manifests_are_authorized_for_the_requesting_user(api, namespace):
    # The aggregator passes the user on (front-proxy headers); an unprivileged user is refused.
    args = ("packages.operators.coreos.com", "v1", namespace, "packagemanifests")
    impersonated = client.ApiClient(api.configuration)
    impersonated.set_default_header("Impersonate-User", "kubeforge-nobody")
    try:
        with pytest.raises(ApiException) as err:
            client.CustomObjectsApi(impersonated).list_namespaced_custom_object(*args)
    finally:
        impersonated.close()
    assert err.value.status == 403
    assert 'User "kubeforge-nobody" cannot list resource "packagemanifests"' in json.loads(err.value.body)["message"]
    assert client.CustomObjectsApi(api).list_namespaced_custom_object(*args)["kind"] == "PackageManifestList"
