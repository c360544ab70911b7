"""OpenShift's own SCC admission on the testbed (tests/testbed/scc_admission.py): pods are admitted, mutated or
refused by the plugin OpenShift runs, so what scc_access grants is proven by a pod, not only by an RBAC review.

Pods are created as the namespace's ServiceAccount ``app`` (impersonated, with the ``edit`` role in the namespace):
the admin's client certificate is in ``system:masters``, for which every SCC is usable.
"""

import re

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.testbed

SA = "app"
RESTRICTED_DROP = ["ALL"]


@pytest.fixture
def as_app(api, namespace):
    """A CoreV1Api acting as ServiceAccount ``app`` of the test namespace (which may create pods there)."""
    core = client.CoreV1Api(api)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": SA}})
    client.RbacAuthorizationV1Api(api).create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "app-edit"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": namespace}],
        },
    )
    impersonating = client.ApiClient(api.configuration)
    impersonating.set_default_header("Impersonate-User", f"system:serviceaccount:{namespace}:{SA}")
    yield client.CoreV1Api(impersonating)
    impersonating.close()


def pod(name, security_context=None, container_security_context=None):
    spec = {
        "serviceAccountName": SA,
        "containers": [{"name": "main", "image": "registry.invalid/app:v1", "securityContext": container_security_context}],
    }
    if security_context:
        spec["securityContext"] = security_context
    return {"metadata": {"name": name}, "spec": spec}


def refusal(core, namespace, body):
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod(namespace, body)
    assert caught.value.status == 403, caught.value.body
    return caught.value.body


def uid_range(api, namespace):
    annotations = client.CoreV1Api(api).read_namespace(namespace).metadata.annotations or {}
    match = re.fullmatch(r"(\d+)/(\d+)", annotations.get("openshift.io/sa.scc.uid-range", ""))
    assert match, annotations
    assert re.fullmatch(r"s0:c\d+,c\d+", annotations.get("openshift.io/sa.scc.mcs", "")), annotations
    start, size = int(match.group(1)), int(match.group(2))
    return start, size


def test_a_new_namespace_gets_its_own_uid_block(api, namespace):
    start, size = uid_range(api, namespace)
    assert size == 10000 and start >= 1000000000 and (start - 1000000000) % 10000 == 0
    others = client.CoreV1Api(api).list_namespace().items
    blocks = [(ns.metadata.annotations or {}).get("openshift.io/sa.scc.uid-range") for ns in others]
    assert blocks.count(f"{start}/{size}") == 1, "UID blocks are not shared between namespaces"


def test_plain_pod_is_admitted_under_restricted_v2_and_mutated(api, namespace, as_app):
    start, size = uid_range(api, namespace)
    created = as_app.create_namespaced_pod(namespace, pod("plain"))
    assert created.metadata.annotations["openshift.io/scc"] == "restricted-v2"
    container = created.spec.containers[0].security_context
    assert start <= container.run_as_user < start + size
    assert container.run_as_non_root is True and container.allow_privilege_escalation is False
    assert container.capabilities.drop == RESTRICTED_DROP
    mcs = client.CoreV1Api(api).read_namespace(namespace).metadata.annotations["openshift.io/sa.scc.mcs"]
    assert created.spec.security_context.se_linux_options.level == mcs


def test_anyuid_needs_a_grant_and_revoking_refuses_again(run_module, kubeconfig, api, namespace, as_app):
    root = pod("root", container_security_context={"runAsUser": 0})
    message = refusal(as_app, namespace, root)
    assert "unable to validate against any security context constraint" in message and "must be in the ranges" in message

    args = {"kubeconfig": kubeconfig, "scc": "anyuid", "service_accounts": [f"{namespace}/{SA}"]}
    granted = run_module("scc_access", args)
    assert granted["changed"] is True and not granted.get("failed"), granted
    admitted = as_app.create_namespaced_pod(namespace, root)
    assert admitted.metadata.annotations["openshift.io/scc"] == "anyuid"
    assert admitted.spec.containers[0].security_context.run_as_user == 0

    revoked = run_module("scc_access", dict(args, state="absent"))
    assert revoked["changed"] is True and not revoked.get("failed"), revoked
    refusal(as_app, namespace, dict(root, metadata={"name": "root-again"}))


def test_privileged_is_refused_without_a_grant(namespace, as_app):
    message = refusal(as_app, namespace, pod("privileged", container_security_context={"privileged": True}))
    assert "Privileged containers are not allowed" in message
