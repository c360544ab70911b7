"""olm_operator's check mode against the testbed's real OLM v0: for a fresh install in a new namespace, an upgrade
with Manual approval and a package no catalog has, check mode runs first, then the real run, and what check mode
said it would do is what the real run did - the objects created (as found on the cluster afterwards), the
Subscription's spec, the InstallPlan approved - or the same failure, before any write."""

import pytest
from kubernetes import client
from lib.olm_catalog import CATALOG, GROUP, V1ALPHA1
from lib.polling import poll_until

pytestmark = pytest.mark.testbed

PACKAGES = "packages.operators.coreos.com"


def operator(run_module, kubeconfig, namespace, check_mode=False, **args):
    params = dict(kubeconfig=kubeconfig, namespace=namespace, package="kube-demo", catalog=CATALOG, channel="stable", wait_timeout=180)
    params.update(args)
    return run_module("olm_operator", params, check_mode=check_mode, diff=True)


def ok(result):
    assert not result.get("failed"), {k: result.get(k) for k in ("msg", "reason", "waiting_for", "csv_phase", "csv_reason")}
    return result


def items(custom, namespace, plural, version=V1ALPHA1):
    return custom.list_namespaced_custom_object(GROUP, version, namespace, plural)["items"]


def serving(custom, namespace, package):
    """Wait until packageserver lists ``package`` among the PackageManifests of the namespace's catalog (it fills its
    list package by package as the registry streams them, so a first non-empty list can lack it); returns their names."""
    return poll_until(
        lambda: sorted(
            m["metadata"]["name"]
            for m in custom.list_namespaced_custom_object(PACKAGES, "v1", namespace, "packagemanifests", label_selector=f"catalog={CATALOG}")["items"]
        ),
        120,
        0.5,
        f"PackageManifest {package} of {namespace}/{CATALOG}",
        until=lambda names: package in names,
    )


def test_a_fresh_install_in_a_new_namespace_creates_what_check_mode_said(run_module, kubeconfig, catalog_ns, operator_ns, custom, api):
    """The namespace, its OperatorGroup and the Subscription: check mode names and shows all three, creates none;
    the real run creates exactly them. (OLM resolves only from the Subscription's own or the global catalog
    namespace, so the real run does not wait: this test is about the writes, the next one about OLM's part.)"""
    args = dict(catalog_namespace=catalog_ns, namespace_labels={"team": "a"}, wait=False)
    planned = ok(operator(run_module, kubeconfig, operator_ns, check_mode=True, **args))
    assert planned["changed"] is True
    assert planned["created"] == {"namespace": operator_ns, "operator_group": operator_ns, "subscription": "kube-demo"}
    after = planned["diff"]["after"]
    assert after["namespace"]["metadata"] == {"name": operator_ns, "labels": {"team": "a"}}, after
    with pytest.raises(client.ApiException) as missing:
        client.CoreV1Api(api).read_namespace(operator_ns)
    assert missing.value.status == 404

    done = ok(operator(run_module, kubeconfig, operator_ns, **args))
    assert done["created"] == planned["created"]
    assert done["diff"]["after"]["namespace"] == after["namespace"]
    labels = client.CoreV1Api(api).read_namespace(operator_ns).metadata.labels
    assert labels["team"] == "a"
    (group,) = items(custom, operator_ns, "operatorgroups", "v1")
    assert group["metadata"]["name"] == after["operator_group"]["metadata"]["name"]
    assert group["spec"]["targetNamespaces"] == after["operator_group"]["spec"]["targetNamespaces"] == [operator_ns]
    (sub,) = items(custom, operator_ns, "subscriptions")
    assert sub["metadata"]["name"] == after["subscription"]["metadata"]["name"] == "kube-demo"
    assert sub["spec"] == after["subscription"]["spec"] == done["diff"]["after"]["subscription"]["spec"]
    # diffs carry no status and no server bookkeeping
    assert "status" not in done["diff"]["after"]["subscription"]
    assert not {"managedFields", "resourceVersion", "uid"} & set(done["diff"]["after"]["subscription"]["metadata"])


def test_a_manual_upgrade_approves_the_install_plan_check_mode_named(run_module, kubeconfig, catalog_ns, custom):
    ns = catalog_ns
    planned_install = ok(operator(run_module, kubeconfig, ns, check_mode=True, version="0.0.1"))
    installed = ok(operator(run_module, kubeconfig, ns, version="0.0.1"))
    assert installed["created"] == planned_install["created"] == {"operator_group": ns, "subscription": "kube-demo"}
    assert installed["diff"]["after"]["subscription"]["spec"] == planned_install["diff"]["after"]["subscription"]["spec"]
    assert (
        installed["diff"]["after"]["operator_group"]["spec"]["targetNamespaces"]
        == planned_install["diff"]["after"]["operator_group"]["spec"]["targetNamespaces"]
    )

    def pending():
        return [
            p["metadata"]["name"]
            for p in items(custom, ns, "installplans")
            if p["spec"]["clusterServiceVersionNames"] == ["kube-demo.v0.0.2"] and not p["spec"]["approved"]
        ]

    (plan_name,) = poll_until(pending, 60, 0.5, "OLM's InstallPlan of kube-demo 0.0.2")
    # the Subscription points at that plan once OLM has recorded it
    poll_until(
        lambda: (
            ((custom.get_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions", "kube-demo").get("status") or {}).get("installPlanRef") or {}).get(
                "name"
            )
            == plan_name
        ),
        60,
        0.5,
        f"the Subscription's installPlanRef {plan_name}",
    )

    planned = ok(operator(run_module, kubeconfig, ns, check_mode=True, version="0.0.2"))
    assert planned["changed"] is True
    assert planned["would_approve"] == {
        "install_plan": plan_name,
        "csvs": ["kube-demo.v0.0.2"],
        "message": f"would approve InstallPlan {plan_name} (CSV kube-demo.v0.0.2)",
    }
    assert planned["diff"]["after"]["install_plans"] == {plan_name: {"approved": True, "csvs": ["kube-demo.v0.0.2"]}}
    assert pending() == [plan_name]  # check mode approved nothing

    upgraded = ok(operator(run_module, kubeconfig, ns, version="0.0.2"))
    assert upgraded["approved_install_plans"] == [plan_name] and upgraded["installed_csv"] == "kube-demo.v0.0.2"
    assert upgraded["created"] == planned["created"] == {}
    assert upgraded["diff"]["before"]["install_plans"] == planned["diff"]["before"]["install_plans"]
    assert upgraded["diff"]["after"]["install_plans"] == planned["diff"]["after"]["install_plans"]
    assert upgraded["diff"]["after"]["subscription"]["spec"] == planned["diff"]["after"]["subscription"]["spec"]
    assert "status" not in upgraded["diff"]["after"]["subscription"] and "status" not in upgraded["diff"]["before"]["subscription"]


def test_a_package_no_catalog_has_fails_the_same_way_in_both(run_module, kubeconfig, catalog_ns, custom):
    ns = catalog_ns
    assert "kube-demo" in serving(custom, ns, "kube-demo")
    results = [operator(run_module, kubeconfig, ns, package="kube-nowhere", check_mode=check) for check in (True, False)]
    for result in results:
        assert result.get("failed") and result.get("reason") == "ConstraintsNotSatisfiable", result
        assert f"package kube-nowhere is not in CatalogSource {ns}/{CATALOG}" in result["msg"] and "kube-demo" in result["msg"], result["msg"]
    assert results[0]["msg"] == results[1]["msg"]
    assert items(custom, ns, "subscriptions") == [] and items(custom, ns, "operatorgroups", "v1") == []
