"""olm_operator_info against the testbed's real OLM v0 and packageserver (PackageManifest API).

One namespace for the module: a grpc CatalogSource at the testbed's `opm serve`, an OperatorGroup, and a Manual
Subscription to kube-demo (channel stable, startingCSV kube-demo.v0.0.1) whose first InstallPlan alone is approved,
so kube-demo 0.0.1 is installed and OLM's upgrade plan to 0.0.2 waits for approval. It is set up with the kubernetes
client directly, not with olm_operator, so this test depends on nothing but OLM.
"""

import json
import os
from urllib.parse import urlsplit

import pytest
from kubernetes import client, dynamic
from testbed.kube import wait_for_resource

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import get_client
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import operator_info

pytestmark = pytest.mark.testbed

OPERATORS = "operators.coreos.com"
CATALOG = "kube-demo-catalog"


def install_pinned(dyn, namespace, catalog_address, timeout=180):
    """kube-demo 0.0.1 through a Manual Subscription, approving only the first InstallPlan; returns when the CSV
    is Succeeded and OLM's next plan (to 0.0.2) waits for approval."""
    v1alpha1, v1 = f"{OPERATORS}/v1alpha1", f"{OPERATORS}/v1"
    dyn.resources.get(api_version=v1alpha1, kind="CatalogSource").create(
        namespace=namespace,
        body={
            "apiVersion": v1alpha1,
            "kind": "CatalogSource",
            "metadata": {"name": CATALOG, "namespace": namespace},
            "spec": {"sourceType": "grpc", "address": catalog_address, "displayName": "kube-demo test catalog"},
        },
    )
    dyn.resources.get(api_version=v1, kind="OperatorGroup").create(
        namespace=namespace,
        body={"apiVersion": v1, "kind": "OperatorGroup", "metadata": {"name": "og", "namespace": namespace}, "spec": {"targetNamespaces": [namespace]}},
    )
    dyn.resources.get(api_version=v1alpha1, kind="Subscription").create(
        namespace=namespace,
        body={
            "apiVersion": v1alpha1,
            "kind": "Subscription",
            "metadata": {"name": "kube-demo", "namespace": namespace},
            "spec": {
                "name": "kube-demo",
                "channel": "stable",
                "source": CATALOG,
                "sourceNamespace": namespace,
                "installPlanApproval": "Manual",
                "startingCSV": "kube-demo.v0.0.1",
            },
        },
    )
    plans = dyn.resources.get(api_version=v1alpha1, kind="InstallPlan")

    def waiting_for(csv_name):
        return lambda p: p["spec"]["clusterServiceVersionNames"] == [csv_name] and p.get("status", {}).get("phase") == "RequiresApproval"

    first = wait_for_resource(plans, waiting_for("kube-demo.v0.0.1"), timeout, "InstallPlan for kube-demo.v0.0.1", namespace)
    plans.patch(namespace=namespace, name=first["metadata"]["name"], body={"spec": {"approved": True}}, content_type="application/merge-patch+json")
    csvs = dyn.resources.get(api_version=v1alpha1, kind="ClusterServiceVersion")
    wait_for_resource(
        csvs,
        lambda c: c["metadata"]["name"] == "kube-demo.v0.0.1" and c.get("status", {}).get("phase") == "Succeeded",
        timeout,
        "CSV kube-demo.v0.0.1 Succeeded",
        namespace,
    )
    upgrade = wait_for_resource(plans, waiting_for("kube-demo.v0.0.2"), timeout, "InstallPlan for kube-demo.v0.0.2", namespace)
    subs = dyn.resources.get(api_version=v1alpha1, kind="Subscription")
    wait_for_resource(
        subs,
        lambda s: s.get("status", {}).get("installedCSV") == "kube-demo.v0.0.1" and s["status"].get("currentCSV") == "kube-demo.v0.0.2",
        timeout,
        "Subscription kube-demo at 0.0.1 with 0.0.2 current",
        namespace,
    )
    return first["metadata"]["name"], upgrade["metadata"]["name"]


@pytest.fixture(scope="module")
def installed(api, testbed):
    """``(namespace, first plan, upgrade plan)`` with kube-demo 0.0.1 installed and its PackageManifest served."""
    name = "t-operator-info-" + os.urandom(3).hex()
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    try:
        dyn = dynamic.DynamicClient(api)
        first, upgrade = install_pinned(dyn, name, testbed.catalog_address)
        # packageserver lists a CatalogSource's packages once it has connected to it
        manifests = dyn.resources.get(api_version="packages.operators.coreos.com/v1", kind="PackageManifest")
        wait_for_resource(
            manifests,
            lambda m: m["metadata"]["name"] == "kube-demo" and m["metadata"]["labels"].get("catalog") == CATALOG,
            120,
            "PackageManifest kube-demo of " + CATALOG,
            name,
        )
        yield name, first, upgrade
    finally:
        core.delete_namespace(name)


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    kubeforge.operators.olm_operator_info:
      kubeconfig: "{{ kubeconfig }}"
      namespace: "{{ operator_namespace }}"
  tasks:
    - name: One operator
      kubeforge.operators.olm_operator_info:
        package: kube-demo
      register: one
    - name: The same in check mode
      kubeforge.operators.olm_operator_info:
        package: kube-demo
      check_mode: true
      register: checked
    - name: By Subscription name
      kubeforge.operators.olm_operator_info:
        name: kube-demo
      register: by_name
    - name: Every Subscription of the namespace
      kubeforge.operators.olm_operator_info:
      register: every
    - name: Every Subscription of kube-demo in the cluster (null overrides the module_defaults namespace)
      kubeforge.operators.olm_operator_info:
        package: kube-demo
        namespace: null
      register: cluster_wide
    - name: A package of the catalog that is not subscribed
      kubeforge.operators.olm_operator_info:
        package: kube-allns
      register: absent
    - name: A package nobody has
      kubeforge.operators.olm_operator_info:
        package: no-such-package
      register: unknown
    - name: Keep the results for the test
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: >-
          {{ {'one': one, 'checked': checked, 'by_name': by_name, 'every': every, 'cluster_wide': cluster_wide,
              'absent': absent, 'unknown': unknown} | to_json }}
        mode: "0600"
"""


def test_module_reports_installed_pending_and_absent_operators(installed, kubeconfig, run_playbook, tmp_path):
    namespace, first_plan, upgrade_plan = installed
    results_file = tmp_path / "results.json"
    returncode, output = run_playbook(PLAYBOOK, {"kubeconfig": kubeconfig, "operator_namespace": namespace, "results_file": str(results_file)})
    assert returncode == 0, output
    assert "[WARNING]" not in output, output
    results = json.loads(results_file.read_text())

    one = results["one"]
    assert one["changed"] is False
    op = one["operator"]
    assert (op["package"], op["namespace"], op["present"]) == ("kube-demo", namespace, True)
    assert op["installed"] is True
    assert op["installed_version"] == "0.0.1"
    assert op["csv"] == {
        "name": "kube-demo.v0.0.1",
        "version": "0.0.1",
        "phase": "Succeeded",
        "reason": "InstallSucceeded",
        "message": "install strategy completed with no errors",
        "display_name": "Kube Demo",
    }
    sub = op["subscription"]
    assert (sub["name"], sub["channel"], sub["source"], sub["source_namespace"]) == ("kube-demo", "stable", CATALOG, namespace)
    assert (sub["approval"], sub["starting_csv"]) == ("Manual", "kube-demo.v0.0.1")
    assert (sub["state"], sub["installed_csv"], sub["current_csv"], sub["install_plan"]) == (
        "UpgradePending",
        "kube-demo.v0.0.1",
        "kube-demo.v0.0.2",
        upgrade_plan,
    )
    assert [(c["type"], c["reason"]) for c in sub["conditions"]] == [("InstallPlanPending", "RequiresApproval")]
    assert {c["type"]: c["status"] for c in sub["raw_conditions"]}["CatalogSourcesUnhealthy"] == "False"
    assert op["pending_install_plans"] == [
        {"name": upgrade_plan, "phase": "RequiresApproval", "approved": False, "approval": "Manual", "csvs": ["kube-demo.v0.0.2"]}
    ]
    assert first_plan not in [p["name"] for p in op["pending_install_plans"]]
    catalog = op["catalog"]
    assert (catalog["package"], catalog["default_channel"], catalog["catalog_source"], catalog["catalog_source_namespace"]) == (
        "kube-demo",
        "stable",
        CATALOG,
        namespace,
    )
    assert catalog["catalog_source_display_name"] == "kube-demo test catalog"
    assert [c["name"] for c in catalog["channels"]] == ["alpha", "stable"]
    stable = catalog["channels"][1]
    assert (stable["current_csv"], stable["current_version"], stable["versions"]) == ("kube-demo.v0.0.2", "0.0.2", ["0.0.1", "0.0.2"])
    assert stable["entries"] == [{"name": "kube-demo.v0.0.1", "version": "0.0.1"}, {"name": "kube-demo.v0.0.2", "version": "0.0.2"}]
    assert op["available_upgrades"] == ["0.0.2"]
    assert op["upgrade_available"] is True

    assert results["checked"]["changed"] is False and results["checked"]["operator"] == op
    assert results["by_name"]["operator"] == op
    assert "operator" not in results["every"]
    assert results["every"]["operators"] == [op]
    # the whole cluster: this namespace's record as above, among those of parallel tests' namespaces, in order
    everywhere = results["cluster_wide"]["operators"]
    assert "operator" not in results["cluster_wide"] and {r["package"] for r in everywhere} == {"kube-demo"}, everywhere
    assert [r for r in everywhere if r["namespace"] == namespace] == [op]
    assert [r["namespace"] for r in everywhere] == sorted(r["namespace"] for r in everywhere)

    absent = results["absent"]["operator"]
    assert (absent["package"], absent["present"], absent["installed"], absent["subscription"], absent["csv"]) == ("kube-allns", False, False, None, None)
    assert absent["pending_install_plans"] == [] and absent["available_upgrades"] == [] and absent["upgrade_available"] is False
    assert absent["catalog"]["catalog_source"] == CATALOG
    assert [(c["name"], c["versions"]) for c in absent["catalog"]["channels"]] == [("stable", ["0.1.0"])]

    unknown = results["unknown"]["operator"]
    assert (unknown["package"], unknown["present"], unknown["catalog"]) == ("no-such-package", False, None)


def count_requests(k8s_client):
    """Record the HTTP requests of a kubernetes.core client, discovery included, as a list of ``(method, path)``."""
    api_client = k8s_client.client.client
    seen = []
    original = api_client.call_api

    def counting(*args, **kwargs):
        # the generated transport calls call_api(method, url, ...); older ones call_api(path, method, ...)
        first, second = args[0], args[1]
        method, url = (first, second) if first.isupper() else (second, first)
        seen.append((method, urlsplit(url).path))
        return original(*args, **kwargs)

    api_client.call_api = counting
    return seen


def last_parts(seen):
    return [path.rsplit("/", 1)[-1] for _method, path in seen]


def without_olm_v1(seen):
    """The requests minus the one LIST of ClusterExtensions a run adds when OLM v1 runs on the testbed too."""
    v1 = [(m, p) for m, p in seen if p == "/apis/olm.operatorframework.io/v1/clusterextensions"]
    assert len(v1) <= 1, seen
    return [r for r in seen if r not in v1]


def test_requests_per_run(installed, kubeconfig):
    namespace = installed[0]
    k8s = get_client(kubeconfig=kubeconfig)
    operator_info(k8s, namespace, package="kube-demo")  # warms the discovery cache, as every later run finds it
    seen = count_requests(k8s)

    one = operator_info(k8s, namespace, package="kube-demo")
    assert one["operator"]["available_upgrades"] == ["0.0.2"]
    assert [method for method, _path in without_olm_v1(seen)] == ["GET"] * 4, seen
    assert last_parts(without_olm_v1(seen)) == ["subscriptions", "kube-demo.v0.0.1", "installplans", "packagemanifests"], seen

    seen.clear()
    every = operator_info(k8s, namespace)
    assert len(every["operators"]) == 1
    assert last_parts(without_olm_v1(seen)) == ["subscriptions", "clusterserviceversions", "installplans", "packagemanifests"], seen

    seen.clear()
    operator_info(k8s, namespace, package="kube-allns")
    assert last_parts(without_olm_v1(seen)) == ["subscriptions", "packagemanifests"], seen
