"""olm_diagnose against the testbed's real OLM v0: the causes test_operator.py's failures do not produce - a CSV no
Subscription references (with the support tarball), a Subscription OLM cannot resolve that blocks every install of
its namespace, and an OperatorGroup the CSV's install modes do not allow. (The other causes are produced where the
matching olm_operator failure is: test_operator.py.)"""

import json
import tarfile
import time

import pytest
from kubernetes import client
from lib.olm_catalog import CATALOG, GROUP, V1ALPHA1
from lib.polling import poll_until
from testbed.pki import PACKAGESERVER_SERVICE

pytestmark = pytest.mark.testbed

PACKAGESERVER_API = "v1.packages.operators.coreos.com"


def subscribe(custom, namespace, name, package):
    body = {
        "apiVersion": f"{GROUP}/{V1ALPHA1}",
        "kind": "Subscription",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"name": package, "source": CATALOG, "sourceNamespace": namespace, "channel": "stable"},
    }
    custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "subscriptions", body)


def diagnose(run_module, kubeconfig, namespace, package, **args):
    result = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, namespace=namespace, package=package, **args))
    assert not result.get("failed"), result
    return result


def test_orphaned_csv_with_the_support_tarball(run_module, kubeconfig, catalog_ns, custom, tmp_path):
    ns = catalog_ns
    installed = run_module("olm_operator", dict(kubeconfig=kubeconfig, namespace=ns, package="kube-demo", catalog=CATALOG, channel="stable", version="0.0.1"))
    assert not installed.get("failed"), installed.get("msg")
    assert diagnose(run_module, kubeconfig, ns, "kube-demo")["findings"] == []  # a healthy install names nothing
    # a package the namespace has no Subscription of (a typo, another namespace) is named, not "no known failure"
    (wrong,) = diagnose(run_module, kubeconfig, ns, "kube-dmeo")["findings"]
    assert wrong["cause"] == "NoSubscription" and "its Subscriptions: kube-demo (package kube-demo)" in wrong["message"], wrong
    custom.delete_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions", "kube-demo")

    dest = tmp_path / "support" / "kube-demo.tar.gz"
    result = diagnose(run_module, kubeconfig, ns, "kube-demo", dest=str(dest))
    orphan = [f for f in result["findings"] if f["cause"] == "OrphanedCSV"]
    assert [f["objects"] for f in orphan] == [["ClusterServiceVersion/kube-demo.v0.0.1"]], result["summary"]
    assert result["changed"] is True and result["counts"]["csvs"] == 1 and result["counts"]["subscriptions"] == 0
    with tarfile.open(dest) as tar:
        names = tar.getnames()
        summary = tar.extractfile(next(n for n in names if n.endswith("/summary.txt"))).read().decode()
        csvs = json.loads(tar.extractfile(next(n for n in names if n.endswith("/objects/csvs.json"))).read())
    assert names == result["files"] and "OrphanedCSV" in summary
    assert [c["metadata"]["name"] for c in csvs["items"]] == ["kube-demo.v0.0.1"]
    assert "managedFields" not in csvs["items"][0]["metadata"]

    predicted = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, namespace=ns, package="kube-demo", dest=str(tmp_path / "check.tar.gz")), check_mode=True)
    assert predicted["changed"] is True and not (tmp_path / "check.tar.gz").exists()


def test_an_unresolvable_subscription_blocks_the_whole_namespace(run_module, kubeconfig, catalog_ns, custom):
    ns = catalog_ns
    subscribe(custom, ns, "leftover", "no-such-operator")
    subscribe(custom, ns, "kube-demo", "kube-demo")
    # Without an OperatorGroup OLM does not even try: the Subscriptions stay without status.
    findings = {f["cause"]: f for f in diagnose(run_module, kubeconfig, ns, "kube-demo")["findings"]}
    # (the new CatalogSource may not have reported READY yet: then that is named too)
    assert set(findings) <= {"NoOperatorGroup", "CatalogNotServing"}, findings
    assert findings["NoOperatorGroup"]["objects"] == ["Subscription/kube-demo", "Subscription/leftover"], findings
    group = {"apiVersion": f"{GROUP}/v1", "kind": "OperatorGroup", "metadata": {"name": "own"}, "spec": {"targetNamespaces": [ns]}}
    custom.create_namespaced_custom_object(GROUP, "v1", ns, "operatorgroups", group)

    def failed_subscriptions():
        subs = custom.list_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions")["items"]
        return {
            s["metadata"]["name"]
            for s in subs
            if any(c.get("type") == "ResolutionFailed" and c.get("status") == "True" for c in (s.get("status") or {}).get("conditions") or [])
        }

    # OLM writes the failure onto each Subscription of the namespace, one after the other.
    poll_until(failed_subscriptions, 90, 0.5, "OLM to fail the namespace's resolution", until=lambda names: names == {"kube-demo", "leftover"})
    result = diagnose(run_module, kubeconfig, ns, "kube-demo")
    causes = {f["cause"]: f for f in result["findings"]}
    assert {"ConstraintsNotSatisfiable", "UnresolvableSubscriptionInNamespace"} <= set(causes), result["summary"]
    blocking = causes["UnresolvableSubscriptionInNamespace"]
    assert blocking["objects"] == ["Subscription/leftover"] and "fix or delete leftover" in blocking["fix"], blocking
    # OLM writes leftover's failure onto kube-demo too: the finding names both Subscriptions once.
    resolution = causes["ConstraintsNotSatisfiable"]
    assert "the catalog of Subscription leftover has no package no-such-operator" in resolution["message"], resolution
    assert resolution["objects"] == ["Subscription/kube-demo", "Subscription/leftover"], resolution


def test_an_operator_group_the_install_modes_do_not_allow(run_module, kubeconfig, catalog_ns, custom):
    """kube-demo supports OwnNamespace, SingleNamespace and AllNamespaces, not MultiNamespace."""
    ns = catalog_ns
    group = {"apiVersion": f"{GROUP}/v1", "kind": "OperatorGroup", "metadata": {"name": "two"}, "spec": {"targetNamespaces": [ns, "default"]}}
    custom.create_namespaced_custom_object(GROUP, "v1", ns, "operatorgroups", group)
    subscribe(custom, ns, "kube-demo", "kube-demo")

    def reason():
        csvs = custom.list_namespaced_custom_object(GROUP, V1ALPHA1, ns, "clusterserviceversions", label_selector="!olm.copiedFrom")["items"]
        return [(c.get("status") or {}).get("reason") for c in csvs]

    poll_until(reason, 120, 0.5, "OLM to refuse the OperatorGroup", until=lambda reasons: "UnsupportedOperatorGroup" in reasons)
    result = diagnose(run_module, kubeconfig, ns, "kube-demo")
    (finding,) = [f for f in result["findings"] if f["cause"] == "InstallModeMismatch"]
    assert "supported install modes: OwnNamespace, SingleNamespace, AllNamespaces" in finding["message"], finding
    assert "OperatorGroup/two" in finding["objects"], finding


def _nudge_aggregator(core):
    """The aggregator re-checks an APIService when its Service changes (else every 30 s): touch an annotation."""
    service, namespace = PACKAGESERVER_SERVICE
    core.patch_namespaced_service(service, namespace, {"metadata": {"annotations": {"kubeforge.io/recheck": str(time.time())}}})


def _packageserver_available(api_registration):
    conditions = (api_registration.read_api_service(PACKAGESERVER_API).status.conditions) or []
    return next((c for c in conditions if c.type == "Available"), None)


# Exclusive: while packageserver is frozen, every client that reads PackageManifests (olm_operator does) fails.
@pytest.mark.exclusive
def test_a_hung_packageserver(run_module, kubeconfig, catalog_ns, testbed, api):
    """packageserver answers nothing (SIGSTOP): the aggregator's own check marks its APIService unavailable, and
    olm_diagnose - whose client discovers the API groups, this one included - still reads the namespace and names it."""
    core, registration = client.CoreV1Api(api), client.ApiregistrationV1Api(api)
    try:
        with testbed.hung("packageserver"):
            _nudge_aggregator(core)
            poll_until(
                lambda: _packageserver_available(registration),
                60,
                0.5,
                "the aggregator to mark packageserver unavailable",
                until=lambda c: c and c.status == "False",
            )
            result = diagnose(run_module, kubeconfig, catalog_ns, "kube-demo")
    finally:
        _nudge_aggregator(core)
        poll_until(lambda: _packageserver_available(registration), 60, 0.5, "packageserver available again", until=lambda c: c and c.status == "True")
    (finding,) = [f for f in result["findings"] if f["cause"] == "PackageServerUnavailable"]
    assert "FailedDiscoveryCheck" in finding["message"] and finding["objects"] == [f"APIService/{PACKAGESERVER_API}"], finding
