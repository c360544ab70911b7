"""The extra test bundles of the testbed catalog behave as OLM cases need (dependency, install modes)."""

import json

import pytest
from kubernetes import dynamic
from testbed.kube import wait_for_resource

# One xdist worker for every file of this group: kube-allns' CSV name and kube-demo-addon, which olm/test_operator.py installs and deletes.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olm-v0-shared-operators")]


def _subscribe(api, namespace, testbed, package, approval):
    dyn = dynamic.DynamicClient(api)
    source = "tb-" + namespace[-6:]
    objects = [
        ("operators.coreos.com/v1alpha1", "CatalogSource", source, {"sourceType": "grpc", "address": testbed.catalog_address}),
        ("operators.coreos.com/v1", "OperatorGroup", "og", {"targetNamespaces": [namespace]}),
        (
            "operators.coreos.com/v1alpha1",
            "Subscription",
            package,
            {"name": package, "channel": "stable", "source": source, "sourceNamespace": namespace, "installPlanApproval": approval},
        ),
    ]
    for api_version, kind, name, spec in objects:
        dyn.resources.get(api_version=api_version, kind=kind).create(
            namespace=namespace, body={"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": spec}
        )
    return dyn


def test_addon_pulls_in_kube_demo_through_its_gvk_dependency(api, namespace, testbed):
    dyn = _subscribe(api, namespace, testbed, "kube-demo-addon", "Manual")
    plans = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="InstallPlan")

    plan = wait_for_resource(plans, lambda p: p.get("status", {}).get("phase") == "RequiresApproval", 120, "InstallPlan RequiresApproval", namespace)

    assert sorted(plan["spec"]["clusterServiceVersionNames"]) == ["kube-demo-addon.v0.1.0", "kube-demo.v0.0.2"]
    steps = plan["status"]["plan"]
    # OLM adds a Subscription for the dependency (default channel, automatic approval within this plan).
    dependency = [json.loads(s["resource"]["manifest"]) for s in steps if s["resource"]["kind"] == "Subscription"]
    assert len(dependency) == 1
    assert dependency[0]["spec"]["name"] == "kube-demo"
    assert dependency[0]["spec"]["channel"] == "stable"
    crds = {s["resource"]["name"]: s["resolving"] for s in steps if s["resource"]["kind"] == "CustomResourceDefinition"}
    assert crds == {"kubedemos.demo.kubeforge.io": "kube-demo.v0.0.2", "kubedemoaddons.demo.kubeforge.io": "kube-demo-addon.v0.1.0"}


def test_allns_only_bundle_fails_in_an_own_namespace_operator_group(api, namespace, testbed):
    dyn = _subscribe(api, namespace, testbed, "kube-allns", "Automatic")
    csvs = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="ClusterServiceVersion")

    def failed(c):  # kube-allns's own CSV, not a copy of another test's global operator
        return c["metadata"]["name"].startswith("kube-allns.") and c.get("status", {}).get("phase") == "Failed"

    csv = wait_for_resource(csvs, failed, 120, "CSV kube-allns Failed", namespace)

    assert csv["metadata"]["name"] == "kube-allns.v0.1.0"
    assert csv["status"]["reason"] == "UnsupportedOperatorGroup"
    assert "OwnNamespace InstallModeType not supported" in csv["status"]["message"]
