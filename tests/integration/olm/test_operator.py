"""olm_operator against the testbed's real OLM v0: install, pin, upgrade, refuse, fail fast, uninstall.

Every test gets its own namespace with a CatalogSource pointing at the testbed's `opm serve` (packages kube-demo
0.0.1/0.0.2, kube-demo-addon, kube-crashloop, kube-privileged, kube-allns).
"""

import re
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.olm_catalog import CATALOG, GROUP, V1ALPHA1, make_catalog
from lib.polling import poll_until
from testbed.procs import free_port

# One xdist worker for every file of this group: this file deletes kube-demo-addon's CRD (and every KubeDemoAddon)
# and installs kube-allns, whose CSV name test_catalog_bundles uses too.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olm-v0-shared-operators")]


# copies of CSVs from global (AllNamespaces) operators other tests install are in every namespace: not ours
def items(custom, namespace, plural, version=V1ALPHA1):
    selector = "!olm.copiedFrom" if plural == "clusterserviceversions" else None
    return custom.list_namespaced_custom_object(GROUP, version, namespace, plural, label_selector=selector)["items"]


def names(custom, namespace, plural, version=V1ALPHA1):
    return sorted(i["metadata"]["name"] for i in items(custom, namespace, plural, version))


def ok(result):
    """Assert a module run succeeded, showing OLM's message and reason when it did not."""
    assert not result.get("failed"), {k: result.get(k) for k in ("msg", "reason", "waiting_for", "install_plan_phase", "csv_phase", "csv_reason")}


def diagnosed(run_module, kubeconfig, namespace, package, cause, **args):
    """olm_diagnose after a failure: its finding of ``cause`` (asserting there is one)."""
    result = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, namespace=namespace, package=package, **args))
    assert not result.get("failed"), result
    found = [f for f in result["findings"] if f["cause"] == cause]
    assert found, result["summary"]
    return found[0]


def operator(run_module, kubeconfig, namespace, package="kube-demo", check_mode=False, diff=False, **args):
    params = dict(kubeconfig=kubeconfig, namespace=namespace, package=package, catalog=CATALOG, channel="stable", wait_timeout=180)
    params.update(args)
    return run_module("olm_operator", params, check_mode=check_mode, diff=diff)


def test_install_pin_upgrade_idempotent(run_module, kubeconfig, catalog_ns, custom):
    ns = catalog_ns
    predicted = operator(run_module, kubeconfig, ns, version="0.0.1", check_mode=True, diff=True)
    ok(predicted)
    assert predicted["changed"] is True
    # The diff shows the OperatorGroup it would create: kube-demo supports OwnNamespace, the least privilege.
    assert predicted["diff"]["after"]["operator_group"]["spec"]["targetNamespaces"] == [ns], predicted["diff"]
    assert predicted["diff"]["after"]["subscription"]["spec"]["startingCSV"] == "kube-demo.v0.0.1", predicted["diff"]
    assert names(custom, ns, "subscriptions") == [] and names(custom, ns, "operatorgroups", "v1") == []

    first = operator(run_module, kubeconfig, ns, version="0.0.1", diff=True)
    ok(first)
    assert first["changed"] is True
    assert first["installed_csv"] == "kube-demo.v0.0.1" and first["version"] == "0.0.1" and first["phase"] == "Succeeded"
    assert len(first["approved_install_plans"]) == 1
    assert first["created"]["operator_group"] == ns and first["created"]["subscription"] == "kube-demo"
    assert first["diff"]["after"]["subscription"]["spec"]["startingCSV"] == "kube-demo.v0.0.1"
    # OLM proposes the upgrade to 0.0.2 at once; the pinned install must not approve it.
    plans = items(custom, ns, "installplans")
    assert any(p["spec"]["clusterServiceVersionNames"] == ["kube-demo.v0.0.2"] and not p["spec"]["approved"] for p in plans) or len(plans) == 1

    again = operator(run_module, kubeconfig, ns, version="0.0.1")
    assert again["changed"] is False and again["installed_csv"] == "kube-demo.v0.0.1", again
    assert operator(run_module, kubeconfig, ns, version="0.0.1", check_mode=True)["changed"] is False

    predicted_upgrade = operator(run_module, kubeconfig, ns, version="0.0.2", check_mode=True)
    assert predicted_upgrade["changed"] is True, predicted_upgrade
    # OLM rewrites the Subscription's status now and then, for a moment without installedCSV.
    installed = poll_until(
        lambda: (custom.get_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions", "kube-demo").get("status") or {}).get("installedCSV"),
        30,
        0.5,
        "the Subscription's installedCSV",
    )
    assert installed == "kube-demo.v0.0.1"
    # without waiting the module approves nothing, so the pinned move would not happen: refused, nothing changed
    unwaited = operator(run_module, kubeconfig, ns, version="0.0.2", wait=False)
    assert unwaited.get("failed") and "with wait=false nothing would change" in unwaited["msg"], unwaited
    assert all(
        not p["spec"]["approved"]
        for p in custom.list_namespaced_custom_object(GROUP, V1ALPHA1, ns, "installplans")["items"]
        if p["spec"]["clusterServiceVersionNames"] == ["kube-demo.v0.0.2"]
    )

    upgraded = operator(run_module, kubeconfig, ns, version="0.0.2")
    ok(upgraded)
    assert upgraded["changed"] is True and upgraded["installed_csv"] == "kube-demo.v0.0.2" and upgraded["phase"] == "Succeeded"
    assert len(upgraded["approved_install_plans"]) == 1
    assert operator(run_module, kubeconfig, ns, version="0.0.2")["changed"] is False

    downgrade = operator(run_module, kubeconfig, ns, version="0.0.1")
    assert downgrade["failed"] and "does not downgrade" in downgrade["msg"], downgrade


def test_a_plan_resolved_from_the_catalog_the_subscription_left_is_not_approved(run_module, kubeconfig, catalog_ns, custom, testbed):
    """kube-demo 0.0.1 pinned from one catalog, OLM's plan for 0.0.2 from it pending; then the Subscription moves to
    another catalog (a mirror of the same content): the module does not approve the old catalog's plan, and once that
    plan is deleted, as the message says, OLM resolves again and the upgrade comes from the new catalog."""
    ns = catalog_ns
    ok(operator(run_module, kubeconfig, ns, version="0.0.1"))

    def pending_upgrades():
        return [p for p in items(custom, ns, "installplans") if p["spec"]["clusterServiceVersionNames"] == ["kube-demo.v0.0.2"]]

    (stale,) = poll_until(pending_upgrades, 60, 0.5, "OLM's plan of kube-demo 0.0.2")
    make_catalog(custom, ns, testbed.catalog_address, name="mirror")
    moved = operator(run_module, kubeconfig, ns, version="0.0.2", catalog="mirror")
    assert moved.get("failed") and moved.get("reason") == "InstallPlanFromAnotherCatalog", moved
    assert f"InstallPlan {stale['metadata']['name']} takes kube-demo.v0.0.2 from CatalogSource {ns}/{CATALOG}" in moved["msg"], moved["msg"]
    assert not any(p["spec"]["approved"] for p in pending_upgrades())

    custom.delete_namespaced_custom_object(GROUP, V1ALPHA1, ns, "installplans", stale["metadata"]["name"])
    upgraded = operator(run_module, kubeconfig, ns, version="0.0.2", catalog="mirror")
    ok(upgraded)
    assert upgraded["installed_csv"] == "kube-demo.v0.0.2", upgraded
    (approved,) = [p for p in pending_upgrades() if p["spec"]["approved"]]
    steps = [s["resource"] for s in approved["status"]["plan"] if s["resolving"] == "kube-demo.v0.0.2"]
    sources = {(r.get("sourceName"), r.get("sourceNamespace")) for r in steps}
    assert sources == {("mirror", ns)}, sources


def test_starting_csv_and_source_name_the_fields_as_olm_does(run_module, kubeconfig, catalog_ns, custom):
    """starting_csv (a CSV name, looked up in the channel) pins like version (whose upgrades the test above covers);
    source is catalog's alias."""
    ns = catalog_ns
    params = dict(kubeconfig=kubeconfig, namespace=ns, package="kube-demo", source=CATALOG, channel="stable", wait_timeout=180)
    installed = run_module("olm_operator", dict(params, starting_csv="kube-demo.v0.0.1"))
    ok(installed)
    assert installed["installed_csv"] == "kube-demo.v0.0.1" and installed["version"] == "0.0.1"
    sub = custom.get_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions", "kube-demo")["spec"]
    assert (sub["startingCSV"], sub["installPlanApproval"], sub["source"]) == ("kube-demo.v0.0.1", "Manual", CATALOG), sub
    assert run_module("olm_operator", dict(params, starting_csv="kube-demo.v0.0.1"))["changed"] is False

    # Once the catalog is served (it is: the install resolved from it), a name the channel does not list is refused.
    unknown = run_module("olm_operator", dict(params, starting_csv="kube-demo.v9.9.9"))
    assert unknown.get("failed") and "starting_csv kube-demo.v9.9.9 is not in channel stable of package kube-demo" in unknown["msg"], unknown
    assert "kube-demo.v0.0.2" in unknown["msg"], unknown["msg"]


def test_uninstall_leaves_nothing_it_created(run_module, kubeconfig, catalog_ns, custom, api):
    ns = catalog_ns
    installed = operator(run_module, kubeconfig, ns, version="0.0.1")
    assert installed["phase"] == "Succeeded", installed
    predicted = operator(run_module, kubeconfig, ns, state="absent", check_mode=True)
    assert predicted["changed"] is True and names(custom, ns, "subscriptions") == ["kube-demo"]

    removed = operator(run_module, kubeconfig, ns, state="absent")
    ok(removed)
    assert removed["removed"] == {"subscription": "kube-demo", "csv": "kube-demo.v0.0.1", "operator_group": ns}
    assert names(custom, ns, "subscriptions") == []
    assert names(custom, ns, "clusterserviceversions") == []
    assert names(custom, ns, "operatorgroups", "v1") == []
    # InstallPlans (non-blocking owner refs to the Subscription) and the operator's Deployment go with the GC.
    apps = client.AppsV1Api(api)

    def left():
        return items(custom, ns, "installplans") + apps.list_namespaced_deployment(ns).items

    poll_until(left, 60, 0.5, "the garbage collector to delete the InstallPlans and the Deployment", until=lambda objs: not objs)
    # An InstallPlan OLM resolved just before the Subscription went (the upgrade to 0.0.2) can be created after it
    # (seen once in a loaded run); it is owned by the Subscription, so the garbage collector deletes it too.
    time.sleep(2)
    poll_until(left, 60, 0.5, "the garbage collector to delete a late InstallPlan", until=lambda objs: not objs)
    assert operator(run_module, kubeconfig, ns, state="absent")["changed"] is False


def test_unknown_package_fails_fast_with_olm_reason(run_module, kubeconfig, catalog_ns, custom):
    started = time.monotonic()
    result = operator(run_module, kubeconfig, catalog_ns, package="no-such-operator")
    elapsed = time.monotonic() - started
    assert result["failed"] and result["reason"] == "ConstraintsNotSatisfiable" and result["refused"] is True, result
    assert "no-such-operator" in result["msg"]
    # refused before any write, the catalog's packages read: long before wait_timeout (180 s)
    assert elapsed < 60, elapsed
    assert items(custom, catalog_ns, "subscriptions") == []

    # olm_diagnose decodes OLM's own verdict on such a Subscription, made by hand
    group = {"apiVersion": f"{GROUP}/v1", "kind": "OperatorGroup", "metadata": {"name": catalog_ns}, "spec": {"targetNamespaces": [catalog_ns]}}
    custom.create_namespaced_custom_object(GROUP, "v1", catalog_ns, "operatorgroups", group)
    sub = {
        "apiVersion": f"{GROUP}/{V1ALPHA1}",
        "kind": "Subscription",
        "metadata": {"name": "no-such-operator"},
        "spec": {"name": "no-such-operator", "source": CATALOG, "sourceNamespace": catalog_ns, "channel": "stable"},
    }
    custom.create_namespaced_custom_object(GROUP, V1ALPHA1, catalog_ns, "subscriptions", sub)

    def resolution_failed():
        got = custom.get_namespaced_custom_object(GROUP, V1ALPHA1, catalog_ns, "subscriptions", "no-such-operator")
        return any(c.get("type") == "ResolutionFailed" and c.get("status") == "True" for c in (got.get("status") or {}).get("conditions") or [])

    poll_until(resolution_failed, 120, 0.5, "OLM's ResolutionFailed on the Subscription")
    finding = diagnosed(run_module, kubeconfig, catalog_ns, "no-such-operator", "ConstraintsNotSatisfiable")
    assert "the catalog of Subscription no-such-operator has no package no-such-operator" in finding["message"], finding


def test_unknown_channel_fails_fast(run_module, kubeconfig, catalog_ns):
    result = operator(run_module, kubeconfig, catalog_ns, channel="nightly")
    assert result["failed"] and result["reason"] == "ConstraintsNotSatisfiable", result
    assert "nightly" in result["msg"]


def test_crashlooping_operator_fails_with_csv_phase(run_module, kubeconfig, catalog_ns):
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-crashloop")
    assert result["failed"], result
    assert result["reason"] == "CrashLoopBackOff"
    # While the Deployment's pods crash, OLM shows the CSV Installing or (a CI run saw it) InstallReady again: the
    # failure names whichever phase OLM shows at that moment.
    assert result["csv_phase"] in ("InstallReady", "Installing"), result
    assert f"kube-crashloop.v0.1.0 phase {result['csv_phase']}" in result["msg"] and "CrashLoopBackOff" in result["msg"]
    # the pod's problem leads, OLM's phase and message ("waiting for spec update of deployment ...") follow
    assert result["msg"].startswith("pod kube-crashloop-controller-manager-") and "is CrashLoopBackOff (restarts: 5)" in result["msg"], result["msg"]
    assert result["msg"].index("CrashLoopBackOff") < result["msg"].index("; OLM: ClusterServiceVersion kube-crashloop.v0.1.0 phase"), result["msg"]
    finding = diagnosed(run_module, kubeconfig, catalog_ns, "kube-crashloop", "CrashLoop")
    assert "kube-crashloop-controller-manager-" in finding["message"] and finding["objects"][0].startswith("Pod/"), finding
    # the KWOK stage's crash loop: its image and last exit; a simulated node serves no log, which is said briefly
    assert "(image example.invalid/kubeforge/crashloop:v1)" in finding["message"] and "last exit code 1 (Error)" in finding["message"], finding
    assert "no log to be had (" in finding["message"] and "bundle" not in finding["fix"], finding


def test_scc_refusal_fails_fast(run_module, kubeconfig, catalog_ns):
    """The testbed's SCC admission (OpenShift's plugin) refuses the operator's privileged pod, as OpenShift does."""
    started = time.monotonic()
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-privileged")
    assert result["failed"] and result["reason"] == "FailedCreate", result
    assert "unable to validate against any security context constraint" in result["msg"] and "Privileged containers are not allowed" in result["msg"]
    assert time.monotonic() - started < 60
    finding = diagnosed(run_module, kubeconfig, catalog_ns, "kube-privileged", "SCCRejected")
    assert "scc_access" in finding["fix"], finding


def test_pod_security_rejection_fails_fast(run_module, kubeconfig, catalog_ns, api):
    # With the privileged SCC granted to the operator's ServiceAccount, Pod Security admission is what refuses.
    grant = {"kubeconfig": kubeconfig, "scc": "privileged", "service_accounts": [f"{catalog_ns}/kube-privileged-controller-manager"]}
    assert not run_module("scc_access", grant).get("failed")
    client.CoreV1Api(api).patch_namespace(catalog_ns, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    started = time.monotonic()
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-privileged")
    assert result["failed"] and result["reason"] == "FailedCreate", result
    assert "violates PodSecurity" in result["msg"] and "privileged" in result["msg"]
    assert time.monotonic() - started < 60
    finding = diagnosed(run_module, kubeconfig, catalog_ns, "kube-privileged", "PodSecurityRejected")
    assert finding["objects"][0].startswith("ReplicaSet/kube-privileged-controller-manager-"), finding


def test_catalog_with_nothing_listening(run_module, kubeconfig, namespace, custom):
    make_catalog(custom, namespace, f"127.0.0.1:{free_port()}")
    result = operator(run_module, kubeconfig, namespace)
    assert result["failed"], result
    assert f"CatalogSource {namespace}/{CATALOG}" in result["msg"] and "TRANSIENT_FAILURE" in result["msg"]
    assert result["reason"] == "CatalogSourceUnhealthy"
    finding = diagnosed(run_module, kubeconfig, namespace, "kube-demo", "CatalogNotServing")
    assert finding["objects"] == [f"CatalogSource/{namespace}/{CATALOG}"] and "TRANSIENT_FAILURE" in finding["message"], finding


def test_plan_with_another_subscriptions_csv_is_not_approved(run_module, kubeconfig, catalog_ns, custom):
    ns = catalog_ns
    assert operator(run_module, kubeconfig, ns, version="0.0.1")["phase"] == "Succeeded"
    # kube-demo's upgrade to 0.0.2 is pending; OLM now plans the add-on together with it in one InstallPlan.
    result = operator(run_module, kubeconfig, ns, package="kube-demo-addon", approval="Manual")
    assert result["failed"] and result["reason"] == "ForeignCSVsInInstallPlan", result
    assert "kube-demo.v0.0.2" in result["msg"]
    assert all(not p["spec"]["approved"] for p in items(custom, ns, "installplans") if "kube-demo-addon.v0.1.0" in p["spec"]["clusterServiceVersionNames"])
    finding = diagnosed(run_module, kubeconfig, ns, "kube-demo-addon", "InstallPlanCarriesOtherOperators")
    assert "kube-demo.v0.0.2" in finding["message"] and "kube-demo-addon.v0.1.0" in finding["message"], finding


def test_dependency_is_installed_with_the_operator(run_module, kubeconfig, catalog_ns, custom):
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-demo-addon", approval="Manual")
    ok(result)
    assert result["installed_csv"] == "kube-demo-addon.v0.1.0" and result["phase"] == "Succeeded"
    csvs = {c["metadata"]["name"]: c["status"]["phase"] for c in items(custom, catalog_ns, "clusterserviceversions")}
    assert any(name.startswith("kube-demo.v") and phase == "Succeeded" for name, phase in csvs.items()), csvs
    subs = {s["spec"]["name"] for s in items(custom, catalog_ns, "subscriptions")}
    assert subs == {"kube-demo", "kube-demo-addon"}


# Exclusive: OLM copies an AllNamespaces CSV into every namespace, and the copies outlive the test (its namespace is
# deleted without waiting); tests that expect no CSV in a namespace of theirs would see them.
@pytest.mark.exclusive
def test_install_mode_follows_the_csv(run_module, kubeconfig, catalog_ns, custom):
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-allns")
    ok(result)
    groups = items(custom, catalog_ns, "operatorgroups", "v1")
    assert len(groups) == 1 and not groups[0]["spec"].get("targetNamespaces")


def test_two_operator_groups_are_refused(run_module, kubeconfig, catalog_ns, custom):
    for name in ("og-a", "og-b"):
        custom.create_namespaced_custom_object(
            GROUP, "v1", catalog_ns, "operatorgroups", {"apiVersion": f"{GROUP}/v1", "kind": "OperatorGroup", "metadata": {"name": name}, "spec": {}}
        )
    result = operator(run_module, kubeconfig, catalog_ns)
    assert result["failed"] and result["reason"] == "TooManyOperatorGroups", result
    assert names(custom, catalog_ns, "subscriptions") == []


def test_k8s_auth_environment_alone_authenticates(run_module, kubeconfig, catalog_ns):
    params = dict(namespace=catalog_ns, package="kube-demo", catalog=CATALOG, channel="stable", version="0.0.1", wait_timeout=180)
    result = run_module("olm_operator", params, env={"K8S_AUTH_KUBECONFIG": kubeconfig, "KUBECONFIG": "/nonexistent", "HOME": "/nonexistent"})
    ok(result)
    assert result["installed_csv"] == "kube-demo.v0.0.1"


def test_missing_catalog_is_reported_before_subscribing(run_module, kubeconfig, namespace, custom):
    # Check mode of a play whose catalog step was only dry-run: predicted, with a warning instead of a failure.
    predicted = operator(run_module, kubeconfig, namespace, check_mode=True)
    assert predicted["changed"] is True and not predicted.get("failed"), predicted
    assert "does not exist (yet)" in str(predicted["warnings"])  # ansible-core 2.19 returns structured warnings
    result = operator(run_module, kubeconfig, namespace)
    assert result["failed"] and "does not exist" in result["msg"], result
    with pytest.raises(ApiException):
        custom.get_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "subscriptions", "kube-demo")


def test_remove_crds_deletes_operands_then_crds(run_module, kubeconfig, catalog_ns, custom, api):
    ns = catalog_ns
    ok(operator(run_module, kubeconfig, ns, package="kube-demo-addon", approval="Manual"))
    custom.create_namespaced_custom_object(
        "demo.kubeforge.io",
        "v1alpha1",
        ns,
        "kubedemoaddons",
        {"apiVersion": "demo.kubeforge.io/v1alpha1", "kind": "KubeDemoAddon", "metadata": {"name": "mine"}, "spec": {}},
    )
    # Without the explicit option the CRD and its custom resources stay.
    kept = operator(run_module, kubeconfig, ns, package="kube-demo-addon", state="absent", check_mode=True)
    assert "crds" not in kept["removed"], kept

    # remove_crds: the former name of delete_crds_and_data, kept as an alias.
    removed = operator(run_module, kubeconfig, ns, package="kube-demo-addon", state="absent", remove_crds=True)
    ok(removed)
    assert removed["removed"]["operands"] == [f"KubeDemoAddon/{ns}/mine"]
    assert removed["removed"]["crds"] == ["kubedemoaddons.demo.kubeforge.io"]
    assert removed["removed"]["subscription"] == "kube-demo-addon"
    # nothing OLM labelled for the CSV stays at cluster scope (it leaves shipped ClusterRoles behind on its own)
    rbac = client.RbacAuthorizationV1Api(api)
    for lister in (rbac.list_cluster_role, rbac.list_cluster_role_binding):
        left = lister(label_selector="olm.managed=true,olm.owner=kube-demo-addon.v0.1.0").items
        assert not left, [o.metadata.name for o in left]
    extensions = client.ApiextensionsV1Api(api)

    def crd_if_any():
        try:
            return extensions.read_custom_resource_definition("kubedemoaddons.demo.kubeforge.io")
        except ApiException as exc:
            assert exc.status == 404
            return None

    def lifecycle(crd):
        meta = crd.metadata
        return f"created {meta.creation_timestamp}, deletion {meta.deletion_timestamp}, finalizers {meta.finalizers}"

    # Cluster-scoped: the API server finalizes the CRD after removing its custom resources everywhere, which can
    # take a while on a loaded machine.
    poll_until(crd_if_any, 180, 0.5, "the CRD to be deleted", until=lambda crd: crd is None, show=lifecycle)
    # The dependency OLM installed (kube-demo, its own Subscription) stays.
    assert [s["spec"]["name"] for s in items(custom, ns, "subscriptions")] == ["kube-demo"]


def test_an_uninstall_held_by_an_operand_finalizer_names_it(run_module, kubeconfig, catalog_ns, custom):
    """An operand whose finalizer nobody removes (here: one the operator does not know) holds the uninstall; the
    timeout names it and its finalizer, and a run after the finalizer is gone finishes the uninstall."""
    ns = catalog_ns
    group, plural = ("demo.kubeforge.io", "v1alpha1"), "kubedemoaddons"
    ok(operator(run_module, kubeconfig, ns, package="kube-demo-addon", approval="Manual"))
    held = {"apiVersion": "demo.kubeforge.io/v1alpha1", "kind": "KubeDemoAddon", "spec": {},
            "metadata": {"name": "held", "finalizers": ["example.kubeforge.io/held"]}}
    custom.create_namespaced_custom_object(*group, ns, plural, held)
    try:
        stuck = operator(run_module, kubeconfig, ns, package="kube-demo-addon", state="absent", delete_crds_and_data=True, wait_timeout=15)
        assert stuck["failed"], stuck
        assert f"KubeDemoAddon/{ns}/held (finalizers: example.kubeforge.io/held) still there" in stuck["msg"], stuck["msg"]
        assert stuck["removed"]["operands"] == [f"KubeDemoAddon/{ns}/held"]
    finally:
        custom.patch_namespaced_custom_object(*group, ns, plural, "held", {"metadata": {"finalizers": None}})
    finished = operator(run_module, kubeconfig, ns, package="kube-demo-addon", state="absent", delete_crds_and_data=True)
    ok(finished)
    assert finished["removed"]["crds"] == ["kubedemoaddons.demo.kubeforge.io"], finished


def test_absent_refuses_a_subscription_of_another_name(run_module, kubeconfig, catalog_ns, custom):
    ok(operator(run_module, kubeconfig, catalog_ns, version="0.0.1", subscription_name="console-made"))
    result = operator(run_module, kubeconfig, catalog_ns, state="absent")
    assert result["failed"] and "subscribed by console-made" in result["msg"], result
    assert names(custom, catalog_ns, "subscriptions") == ["console-made"]


def placement(real_node):
    """A Subscription config that puts an operator's pods on the real node."""
    return {"nodeSelector": real_node["node_selector"], "tolerations": real_node["tolerations"]}


def test_a_config_olm_applies_late_or_never_fails_fast_naming_what_the_pod_runs(run_module, kubeconfig, catalog_ns, real_node, api):
    """OLM v0.46 creates a CSV's Deployment before the Subscription's installedCSV names the CSV, so without the
    Subscription's config. Whether it applies the config later is a race in OLM (seen both ways on the testbed):
    - never: the pod crash-loops on a KWOK node, and the failure says the pod runs without the config and the way out;
    - late: the config's pod lands on the real node, whose kubelet fails to pull the bundle's image (example.invalid
      never resolves), and that is the failure, with no claim about the config."""
    started = time.monotonic()
    result = operator(run_module, kubeconfig, catalog_ns, package="kube-crashloop", config=placement(real_node))
    assert result["failed"], result
    assert time.monotonic() - started < 150, "olm_operator waited for its timeout instead of failing fast"
    pods = client.CoreV1Api(api).list_namespaced_pod(catalog_ns).items
    if result.get("reason") == "CrashLoopBackOff":
        assert "the pod runs without the Subscription's spec.config" in result["msg"], result["msg"]
        assert "delete Deployment kube-crashloop-controller-manager" in result["msg"], result["msg"]
    else:
        assert result.get("reason") in ("ErrImagePull", "ImagePullBackOff"), result["msg"]
        assert "example.invalid/kubeforge/crashloop" in result["msg"] and "spec.config" not in result["msg"], result["msg"]
        assert real_node["name"] in {p.spec.node_name for p in pods}, [p.spec.node_name for p in pods]


def test_image_pull_failure_on_the_real_node_fails_fast(run_module, kubeconfig, catalog_ns, real_node, api):
    """kube-demo's first pod becomes available on a KWOK node, so OLM then applies the config: the new pod lands on the
    real node, whose kubelet really tries to pull the bundle's image (example.invalid: the node's containerd sends it
    to a loopback port that refuses, so no DNS query leaves the machine). The failure leads with the pod's problem."""
    started = time.monotonic()
    result = operator(run_module, kubeconfig, catalog_ns, config=placement(real_node))
    assert result["failed"] and result.get("reason") in ("ErrImagePull", "ImagePullBackOff"), result["msg"]
    assert "example.invalid/kubeforge/" in result["msg"] and "spec.config" not in result["msg"], result["msg"]
    assert result["msg"].startswith("pod kube-demo-controller-manager-") and "; OLM: ClusterServiceVersion kube-demo." in result["msg"], result["msg"]
    assert "dial tcp 127.0.0.1:1: connect: connection refused" in result["msg"] and "lookup example.invalid" not in result["msg"], result["msg"]
    assert time.monotonic() - started < 120, "olm_operator waited for its timeout instead of failing fast"
    pods = client.CoreV1Api(api).list_namespaced_pod(catalog_ns).items
    assert real_node["name"] in {p.spec.node_name for p in pods}
    # The kubelet alternates ErrImagePull (a pull failed: a moment) and ImagePullBackOff (until the next try): every
    # read names the failure, whichever it sees (one in two said "no known failure found" before).
    seen = set()
    for _read in range(4):
        finding = diagnosed(run_module, kubeconfig, catalog_ns, "kube-demo", "ImagePullFailed")
        assert "example.invalid/kubeforge/" in finding["fix"] and "ImageDigestMirrorSet" in finding["fix"], finding
        match = re.search(r"container \S+ cannot pull image example\.invalid/kubeforge/\S+ \((ErrImagePull|ImagePullBackOff): ", finding["message"])
        assert match, finding
        seen.add(match.group(1))
    print(f"olm_diagnose named the pull failure in 4 reads of 4, the kubelet showing {sorted(seen)}")
