"""resource_status against the real API server: conditions merged by type, transition times, observedGeneration,
Events on transitions, no write on a no-op, check mode, and clear errors."""

import pytest
from kubernetes import client

# One xdist worker for every file of this group: asserts that nothing but the module writes its OperatorInstall,
# which a running kubeforge-operator would reconcile.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("kubeforge-operator")]
GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"


def create_install(api, namespace, name="demo"):
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "OperatorInstall",
        "metadata": {"name": name},
        "spec": {"package": "kube-demo", "catalog": "testbed-catalog"},
    }
    return client.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, namespace, "operatorinstalls", body)


def read(api, namespace, name="demo"):
    return client.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, namespace, "operatorinstalls", name)


def events_of(api, namespace, name="demo"):
    items = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
    return [(e.type, e.reason) for e in items if e.involved_object.kind == "OperatorInstall"]


READY = {"type": "Ready", "status": "True", "reason": "Installed", "message": "kube-demo.v0.0.1 is Succeeded"}
NOT_FAILED = {"type": "Failed", "status": "False", "reason": "Installed"}


def test_conditions_fields_generation_events_and_noop(run_module, kubeconfig, namespace, api, operator_crds):
    obj = create_install(api, namespace)
    args = {"kubeconfig": kubeconfig, "resource": obj, "conditions": [READY, NOT_FAILED], "status": {"installedCSV": "kube-demo.v0.0.1"}}

    checked = run_module("resource_status", args, check_mode=True, diff=True)
    assert checked["changed"] is True and checked["diff"]["after"]["status"]["installedCSV"] == "kube-demo.v0.0.1", checked
    assert read(api, namespace).get("status") in (None, {}), "check mode must not write"

    first = run_module("resource_status", args)
    assert first["changed"] is True and first["transitions"] == ["Ready", "Failed"], first
    status = read(api, namespace)["status"]
    assert status["installedCSV"] == "kube-demo.v0.0.1" and status["observedGeneration"] == 1
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and ready["observedGeneration"] == 1 and ready["lastTransitionTime"]
    assert sorted(events_of(api, namespace)) == [("Normal", "Installed"), ("Normal", "Installed")]

    written = read(api, namespace)["metadata"]["resourceVersion"]
    again = run_module("resource_status", args)
    assert again["changed"] is False and again["events"] == [], again
    assert read(api, namespace)["metadata"]["resourceVersion"] == written, "a no-op must not write"

    failed = dict(args, conditions=[{"type": "Failed", "status": "True", "reason": "ConstraintsNotSatisfiable", "message": "no operators found"}])
    flipped = run_module("resource_status", failed)
    assert flipped["transitions"] == ["Failed"], flipped
    conditions = {c["type"]: c for c in read(api, namespace)["status"]["conditions"]}
    assert conditions["Failed"]["status"] == "True" and conditions["Ready"]["status"] == "True", "other conditions are kept"
    assert ("Warning", "ConstraintsNotSatisfiable") in events_of(api, namespace)


def test_observed_generation_is_the_one_the_run_started_from(run_module, kubeconfig, namespace, api, operator_crds):
    obj = create_install(api, namespace)
    client.CustomObjectsApi(api).patch_namespaced_custom_object(GROUP, VERSION, namespace, "operatorinstalls", "demo", {"spec": {"channel": "alpha"}})
    result = run_module("resource_status", {"kubeconfig": kubeconfig, "resource": obj, "conditions": [READY]})
    assert result["status"]["observedGeneration"] == 1, "the spec changed after the run started: generation 2 is not observed yet"
    assert read(api, namespace)["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    "resource, error",
    [
        ({"api_version": f"{GROUP}/{VERSION}", "kind": "OperatorInstall", "name": "missing"}, "not found"),
        ({"api_version": "v1", "kind": "ConfigMap", "name": "x"}, "has no status subresource"),
        ({"kind": "OperatorInstall", "name": "x"}, "resource needs apiVersion"),
    ],
    ids=["missing", "no-status-subresource", "no-api-version"],
)
def test_clear_errors(run_module, kubeconfig, namespace, operator_crds, resource, error):
    result = run_module("resource_status", {"kubeconfig": kubeconfig, "resource": dict(resource, namespace=namespace), "conditions": [READY]})
    assert result.get("failed") and error in result["msg"], result


def test_invalid_reason_is_refused_before_anything_is_sent(run_module, kubeconfig, namespace, api, operator_crds):
    obj = create_install(api, namespace)
    bad = {"type": "Ready", "status": "True", "reason": "not camel case"}
    result = run_module("resource_status", {"kubeconfig": kubeconfig, "resource": obj, "conditions": [bad]})
    assert result.get("failed") and "must be CamelCase" in result["msg"], result
    assert read(api, namespace).get("status") in (None, {})
