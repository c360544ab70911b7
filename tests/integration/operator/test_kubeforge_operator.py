"""The kubeforge-operator end to end on the testbed, with the real ansible-operator.

The operator's bundle (operator/bundle) is rendered into a catalog by catalog_render, served by `opm serve`, and
installed by olm_operator; OLM creates the ServiceAccount and RBAC the CSV declares, and ansible-operator runs as a
local process with a token of that ServiceAccount - so every reconcile proves the shipped RBAC is enough.
"""

import functools
import os
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.polling import poll_until
from lib.runners import run_module_subprocess
from lib.scc import scc_object

# One xdist worker for every file of this group: the operator watches every namespace, so it would reconcile
# test_resource_status's OperatorInstall; its proxy port is fixed.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("kubeforge-operator")]

ROOT = Path(__file__).resolve().parents[3]
OPERATOR_DIR = ROOT / "operator"
GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"
OPERATOR_NS = "kubeforge-system"
OPERATOR_SA = "kubeforge-operator"
BUNDLE_IMAGE = "quay.io/kubeforge/kubeforge-operator-bundle:v0.1.0"
NODES = 10
V1 = "example.invalid/kubeforge/agent:v1"
V2 = "example.invalid/kubeforge/agent:v2"
CRASHLOOP = "example.invalid/kubeforge/crashloop:v1"


def condition(obj, kind):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


@pytest.fixture(scope="module")
def operator_catalog(testbed, tmp_path_factory):
    """The operator's catalog, rendered by catalog_render from operator/catalog-template.yaml with the bundle image
    mapped to operator/bundle (nothing pulled), validated by catalog_validate, served by `opm serve` on loopback."""
    work = tmp_path_factory.mktemp("kubeforge-operator-catalog")
    run = functools.partial(run_module_subprocess, work)
    rendered = run(
        "catalog_render",
        {
            "template": str(OPERATOR_DIR / "catalog-template.yaml"),
            "dest": str(work / "catalog" / "kubeforge-operator" / "catalog.yaml"),
            "bundle_images": {BUNDLE_IMAGE: str(OPERATOR_DIR / "bundle")},
            "pull": False,
        },
    )
    assert not rendered.get("failed"), rendered
    validated = run("catalog_validate", {"path": str(work / "catalog")})
    assert not validated.get("failed"), validated
    blobs = list(yaml.safe_load_all((work / "catalog" / "kubeforge-operator" / "catalog.yaml").read_text()))
    bundles = [b for b in blobs if b["schema"] == "olm.bundle"]
    assert [b["image"] for b in bundles] == [BUNDLE_IMAGE] and any(p["type"] == "olm.bundle.object" for p in bundles[0]["properties"])
    # Served with the image emptied: OLM v0 would unpack an image through a Job, which KWOK cannot run.
    yield testbed.serve_catalog(work / "catalog")
    testbed.stop_catalog()


@pytest.fixture(scope="module")
def installed_operator(testbed, api, kubeconfig, operator_catalog, tmp_path_factory):
    """The kubeforge-operator installed by olm_operator from its catalog (CSV Succeeded); uninstalled at the end."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    try:
        core.create_namespace({"metadata": {"name": OPERATOR_NS}})
    except ApiException as exc:
        assert exc.status == 409, exc
    catalog = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "kubeforge-operator-catalog"},
        "spec": {"sourceType": "grpc", "address": operator_catalog, "displayName": "kubeforge-operator"},
    }
    try:
        custom.create_namespaced_custom_object("operators.coreos.com", "v1alpha1", OPERATOR_NS, "catalogsources", catalog)
    except ApiException as exc:
        assert exc.status == 409, exc
        custom.patch_namespaced_custom_object(
            "operators.coreos.com", "v1alpha1", OPERATOR_NS, "catalogsources", "kubeforge-operator-catalog", {"spec": catalog["spec"]}
        )
    run = functools.partial(run_module_subprocess, tmp_path_factory.mktemp("kubeforge-operator-install"))
    args = {"kubeconfig": kubeconfig, "package": "kubeforge-operator", "namespace": OPERATOR_NS, "catalog": "kubeforge-operator-catalog", "wait_timeout": 300}
    result = run("olm_operator", args)
    assert not result.get("failed") and result["installed_csv"] == "kubeforge-operator.v0.1.0", result
    yield result
    removed = run("olm_operator", dict(args, state="absent"))
    assert not removed.get("failed"), removed
    custom.delete_namespaced_custom_object("operators.coreos.com", "v1alpha1", OPERATOR_NS, "catalogsources", "kubeforge-operator-catalog")


@pytest.fixture(scope="module")
def kubeforge_operator(installed_operator, ansible_operator):
    """ansible-operator running operator/watches.yaml as the CSV's ServiceAccount (all namespaces); stopped before
    the operator is uninstalled (its token dies with the ServiceAccount)."""
    process = ansible_operator(OPERATOR_DIR / "watches.yaml", service_account=(OPERATOR_NS, OPERATOR_SA))
    yield process
    process.stop()


def create(api, namespace, plural, kind, name, spec):
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": {"name": name}, "spec": spec}
    return client.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, namespace, plural, body)


def get(api, namespace, plural, name):
    try:
        return client.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def patch_spec(api, namespace, plural, name, spec):
    client.CustomObjectsApi(api).patch_namespaced_custom_object(GROUP, VERSION, namespace, plural, name, {"spec": spec})


def delete(api, namespace, plural, name):
    client.CustomObjectsApi(api).delete_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)


def ready_at(api, namespace, plural, name, generation, status="True", kind="Ready"):
    def check():
        obj = get(api, namespace, plural, name)
        cond = condition(obj or {}, kind)
        if obj and cond.get("status") == status and (obj.get("status") or {}).get("observedGeneration") == generation:
            return obj
        return None

    return check


def events_of(api, namespace, name, kind):
    items = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
    return [(e.type, e.reason) for e in items if e.involved_object.kind == kind]


def make_testbed_catalog(api, namespace, testbed):
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "testbed-catalog"},
        "spec": {"sourceType": "grpc", "address": testbed.catalog_address, "displayName": "testbed"},
    }
    client.CustomObjectsApi(api).create_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "catalogsources", body)


# ---------------------------------------------------------------------------------------------------- OperatorInstall


def test_operator_install_upgrade_uninstall(api, namespace, testbed, kubeforge_operator):
    make_testbed_catalog(api, namespace, testbed)
    create(
        api,
        namespace,
        "operatorinstalls",
        "OperatorInstall",
        "kube-demo",
        {"package": "kube-demo", "catalog": "testbed-catalog", "channel": "stable", "version": "0.0.1"},
    )

    obj = poll_until(ready_at(api, namespace, "operatorinstalls", "kube-demo", 1), 240, describe="OperatorInstall Ready with the CSV")
    assert obj["status"]["installedCSV"] == "kube-demo.v0.0.1", obj["status"]
    assert "kube-demo.v0.0.1 is Succeeded" in condition(obj, "Ready")["message"]
    assert condition(obj, "Failed")["status"] == "False"
    assert obj["metadata"]["finalizers"] == ["operators.kubeforge.io/uninstall"]
    # (the Event follows the status it belongs to by a moment)
    poll_until(
        lambda: events_of(api, namespace, "kube-demo", "OperatorInstall"), 30, describe="the Installed event", until=lambda e: ("Normal", "Installed") in e
    )

    patch_spec(api, namespace, "operatorinstalls", "kube-demo", {"version": "0.0.2"})
    obj = poll_until(ready_at(api, namespace, "operatorinstalls", "kube-demo", 2), 240, describe="the upgrade to 0.0.2")
    assert obj["status"]["installedCSV"] == "kube-demo.v0.0.2", obj["status"]

    delete(api, namespace, "operatorinstalls", "kube-demo")
    poll_until(lambda: get(api, namespace, "operatorinstalls", "kube-demo") is None, 240, describe="the OperatorInstall gone (finalizer done)")
    custom = client.CustomObjectsApi(api)
    for plural in ("subscriptions", "clusterserviceversions", "installplans"):
        # not the copies of global operators' CSVs other tests install
        selector = "!olm.copiedFrom" if plural == "clusterserviceversions" else None
        left = custom.list_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, plural, label_selector=selector)["items"]
        assert left == [] or all(i["metadata"].get("deletionTimestamp") for i in left), f"{plural} left: {[i['metadata']['name'] for i in left]}"
    groups = custom.list_namespaced_custom_object("operators.coreos.com", "v1", namespace, "operatorgroups")["items"]
    assert groups == [], [g["metadata"]["name"] for g in groups]


def test_operator_install_failure_is_reported_with_olms_reason(api, namespace, testbed, kubeforge_operator):
    make_testbed_catalog(api, namespace, testbed)
    create(api, namespace, "operatorinstalls", "OperatorInstall", "missing", {"package": "no-such-operator", "catalog": "testbed-catalog", "waitTimeout": 120})

    obj = poll_until(ready_at(api, namespace, "operatorinstalls", "missing", 1, kind="Failed"), 180, describe="the Failed condition")
    failed = condition(obj, "Failed")
    assert failed["reason"] == "ConstraintsNotSatisfiable", failed
    assert "no-such-operator" in failed["message"] and "Subscription" in failed["message"], failed["message"]
    assert condition(obj, "Ready")["status"] == "False"
    # resource_status records the Event right after the status it sets: under load it can land a moment later
    poll_until(
        lambda: events_of(api, namespace, "missing", "OperatorInstall"),
        30,
        describe="the Warning event",
        until=lambda events: ("Warning", "ConstraintsNotSatisfiable") in events,
    )
    delete(api, namespace, "operatorinstalls", "missing")
    poll_until(lambda: get(api, namespace, "operatorinstalls", "missing") is None, 180, describe="the failed OperatorInstall gone")


def test_spec_values_are_never_templated(api, namespace, testbed, kubeforge_operator):
    """markUnsafe: a spec value that looks like Jinja reaches the module as text (and fails as a package name)."""
    make_testbed_catalog(api, namespace, testbed)
    create(api, namespace, "operatorinstalls", "OperatorInstall", "jinja", {"package": "{{ 7 * 6 }}", "catalog": "testbed-catalog", "waitTimeout": 60})
    obj = poll_until(ready_at(api, namespace, "operatorinstalls", "jinja", 1, kind="Failed"), 180, describe="the Failed condition")
    message = condition(obj, "Failed")["message"]
    # the package name reaches the module and the API server as text; rendered it would read 42
    assert "present of {{ 7 * 6 }} in namespace" in message and "Subscription {{ 7 * 6 }}" in message, message
    assert "present of 42 " not in message and "Subscription 42" not in message, message
    delete(api, namespace, "operatorinstalls", "jinja")
    poll_until(lambda: get(api, namespace, "operatorinstalls", "jinja") is None, 180, describe="the OperatorInstall gone")


# ----------------------------------------------------------------------------------------------------------- SCCGrant


def can_use(api, namespace, service_account, scc):
    review = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=f"system:serviceaccount:{namespace}:{service_account}",
            groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
            resource_attributes=client.V1ResourceAttributes(
                group="security.openshift.io", resource="securitycontextconstraints", verb="use", name=scc, namespace=namespace
            ),
        )
    )
    return client.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed


@pytest.fixture
def scc_name(api):
    name = "kf-op-" + os.urandom(3).hex()
    custom = client.CustomObjectsApi(api)
    custom.create_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", scc_object(name))
    yield name
    custom.delete_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)
    try:
        client.RbacAuthorizationV1Api(api).delete_cluster_role("system:openshift:scc:" + name)
    except ApiException:
        pass


def test_scc_grant_create_change_delete(api, namespace, scc_name, kubeforge_operator):
    create(api, namespace, "sccgrants", "SCCGrant", "legacy", {"grants": [{"scc": scc_name, "serviceAccounts": ["app"], "namespace": namespace}]})
    obj = poll_until(ready_at(api, namespace, "sccgrants", "legacy", 1), 120, describe="SCCGrant Ready")
    assert obj["status"]["applied"]["grants"][0]["service_accounts"] == ["app"], obj["status"]
    assert can_use(api, namespace, "app", scc_name) and not can_use(api, namespace, "other", scc_name)

    patch_spec(api, namespace, "sccgrants", "legacy", {"grants": [{"scc": scc_name, "serviceAccounts": ["other"], "namespace": namespace}]})
    poll_until(ready_at(api, namespace, "sccgrants", "legacy", 2), 120, describe="SCCGrant Ready at generation 2")
    assert can_use(api, namespace, "other", scc_name) and not can_use(api, namespace, "app", scc_name), "the grant the spec dropped is taken back"

    delete(api, namespace, "sccgrants", "legacy")
    poll_until(lambda: get(api, namespace, "sccgrants", "legacy") is None, 120, describe="the SCCGrant gone (finalizer done)")
    assert not can_use(api, namespace, "other", scc_name)
    bindings = client.RbacAuthorizationV1Api(api).list_namespaced_role_binding(namespace).items
    assert [b.metadata.name for b in bindings if scc_name in b.metadata.name] == [], "the binding goes with its last subject"
    # watches.yaml's blacklist: every read reached the API server, none came from the proxy's lagging cache
    assert "Read object from cache" not in kubeforge_operator.log_text()


# ------------------------------------------------------------------------------------------------------ CanaryRollout


def create_daemonset(api, namespace, name):
    labels = {"app": name}
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}},
            "template": {"metadata": {"labels": labels}, "spec": {"nodeSelector": {"type": "kwok"}, "containers": [{"name": "agent", "image": V1}]}},
        },
    }
    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set(namespace, body)

    def settled():
        ds = apps.read_namespaced_daemon_set(name, namespace)
        st = ds.status
        return (st.desired_number_scheduled or 0) >= NODES and st.updated_number_scheduled == st.desired_number_scheduled == st.number_available

    poll_until(settled, 90, describe=f"DaemonSet {name} settled")


def test_canary_rollout_progress_and_restart(api, namespace, nodes, kubeforge_operator):
    create_daemonset(api, namespace, "agent")
    create(api, namespace, "canaryrollouts", "CanaryRollout", "agent", {"daemonSet": "agent", "images": {"agent": V2}, "requeuePeriod": "1s"})

    phases = []

    def progressing():
        obj = get(api, namespace, "canaryrollouts", "agent") or {}
        phase = (obj.get("status") or {}).get("phase")
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
        return phase in ("canary", "fast") and condition(obj, "Progressing").get("status") == "True"

    poll_until(progressing, 120, 0.2, describe="the rollout in progress, in status")
    kubeforge_operator.restart()  # mid-rollout: the next reconcile resumes from the DaemonSet's annotations
    obj = poll_until(ready_at(api, namespace, "canaryrollouts", "agent", 1), 300, describe="the rollout done")
    assert obj["status"]["phase"] == "done" and obj["status"]["updatedNumberScheduled"] == obj["status"]["desiredNumberScheduled"] >= NODES, obj["status"]
    assert set(phases) <= {"canary", "fast", "done"} and phases[0] == "canary", phases
    # ansible-operator read the requeue_after task from the run's events (through the http event plugin).
    assert "Set the reconciliation to occur after 1s" in kubeforge_operator.log_text()
    ds = client.AppsV1Api(api).read_namespaced_daemon_set("agent", namespace)
    assert ds.spec.template.spec.containers[0].image == V2
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3, "the original strategy is restored"


def test_canary_rollout_halts_on_crash_loop(api, namespace, nodes, kubeforge_operator):
    create_daemonset(api, namespace, "agent")
    create(
        api,
        namespace,
        "canaryrollouts",
        "CanaryRollout",
        "crash",
        {"daemonSet": "agent", "images": {"agent": CRASHLOOP}, "canaryTimeout": 60, "requeuePeriod": "1s"},
    )
    obj = poll_until(ready_at(api, namespace, "canaryrollouts", "crash", 1, kind="Failed"), 180, describe="the Failed condition")
    failed = condition(obj, "Failed")
    assert failed["reason"] == "Halted" and "CrashLoopBackOff" in failed["message"], failed
    assert obj["status"]["phase"] == "halted"
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=agent").items
    assert sum(1 for p in pods if p.spec.containers[0].image == CRASHLOOP) == 1, "halted on one node"


# ---------------------------------------------------------------------------------------------------- least privilege


@pytest.mark.parametrize(
    "verb, group, resource",
    [
        ("get", "", "secrets"),
        ("list", "", "secrets"),
        ("delete", "apiextensions.k8s.io", "customresourcedefinitions"),
        ("create", "apps", "deployments"),
        ("delete", "", "namespaces"),
        ("update", "", "nodes"),
        ("bind", "rbac.authorization.k8s.io", "clusterroles"),
        ("escalate", "rbac.authorization.k8s.io", "clusterroles"),
        ("impersonate", "", "serviceaccounts"),
        ("create", "", "serviceaccounts/token"),
        ("delete", "rbac.authorization.k8s.io", "clusterroles"),
    ],
)
def test_service_account_cannot_do_what_the_roles_never_do(api, installed_operator, verb, group, resource):
    review = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=f"system:serviceaccount:{OPERATOR_NS}:{OPERATOR_SA}",
            groups=["system:serviceaccounts", f"system:serviceaccounts:{OPERATOR_NS}", "system:authenticated"],
            resource_attributes=client.V1ResourceAttributes(
                group=group, resource=resource.split("/")[0], subresource=(resource.split("/") + [""])[1], verb=verb, namespace="default"
            ),
        )
    )
    assert not client.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed, f"{verb} {resource} must be refused"
