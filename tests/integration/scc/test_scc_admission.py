"""OpenShift's own SCC admission on the testbed (tests/testbed/scc_admission.py): pods are admitted, mutated or
refused by the plugin OpenShift runs, so what scc_access grants is proven by a pod, not only by an RBAC review.

Pods are created as the namespace's ServiceAccount ``app`` (impersonated, with the ``edit`` role in the namespace):
the admin's client certificate is in ``system:masters``, for which every SCC is usable.
"""

import os
import re

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.polling import poll_until

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
    user = f"system:serviceaccount:{namespace}:{SA}"
    review = {
        "spec": {
            "user": user,
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
            "resourceAttributes": {"namespace": namespace, "verb": "create", "resource": "pods"},
        }
    }
    # the authorizer reads RoleBindings from a cache: a refusal must be admission's, not a binding not seen yet
    authorization = client.AuthorizationV1Api(api)
    poll_until(lambda: authorization.create_subject_access_review(review).status.allowed, 30, describe=f"RBAC to allow {user} to create pods")
    impersonating = client.ApiClient(api.configuration)
    impersonating.set_default_header("Impersonate-User", user)
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


# Pod specs (containers "main") and what makes them interesting to the recommender.
WORKLOADS = {
    "plain": {},
    "root": {"containers": [{"securityContext": {"runAsUser": 0}}]},
    "uid-1001": {"containers": [{"securityContext": {"runAsUser": 1001}}]},
    "non-root-flag": {"securityContext": {"runAsNonRoot": True}},
    "escalation": {"containers": [{"securityContext": {"allowPrivilegeEscalation": True}}]},
    "net-admin": {"containers": [{"securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}]},
    "net-bind": {"containers": [{"securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}}]},
    "host-network": {"hostNetwork": True},
    "host-port": {"containers": [{"ports": [{"containerPort": 8080, "hostPort": 8080}]}]},
    "host-pid": {"hostPID": True},
    "host-path": {"volumes": [{"name": "logs", "hostPath": {"path": "/var/log"}}]},
    "nfs": {"volumes": [{"name": "share", "nfs": {"server": "nfs.invalid", "path": "/export"}}]},
    "privileged": {"containers": [{"securityContext": {"privileged": True}}]},
    "unconfined-seccomp": {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
    "fs-group-0": {"securityContext": {"fsGroup": 0}},
    "unsafe-sysctl": {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]}},
    "root-host-network": {"hostNetwork": True, "containers": [{"securityContext": {"runAsUser": 0}}]},
}


def workload_spec(extra):
    spec = {k: v for k, v in extra.items() if k != "containers"}
    container = {"name": "main", "image": "registry.invalid/app:v1"}
    for override in extra.get("containers", [{}]):
        container.update(override)
    spec.update(serviceAccountName=SA, containers=[container])
    return spec


@pytest.fixture
def every_scc_usable(api, namespace, as_app):
    """ServiceAccount app may use every default SCC in the namespace (RoleBindings to their ClusterRoles)."""
    rbac = client.RbacAuthorizationV1Api(api)
    names = [r.metadata.name.rsplit(":", 1)[1] for r in rbac.list_cluster_role().items if r.metadata.name.startswith("system:openshift:scc:")]
    for name in names:
        rbac.create_namespaced_role_binding(
            namespace,
            {
                "metadata": {"name": f"use-{name}"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"system:openshift:scc:{name}"},
                "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": namespace}],
            },
        )
    return names


def admitted_under(core, namespace, name, spec, scc):
    """Whether the real admission admits the pod under ``scc`` alone (``openshift.io/required-scc``, a dry run)."""
    body = {"metadata": {"name": name, "annotations": {"openshift.io/required-scc": scc}}, "spec": spec}
    try:
        created = core.create_namespaced_pod(namespace, body, dry_run="All")
    except ApiException as exc:
        assert exc.status == 403, exc.body
        return False
    assert created.metadata.annotations["openshift.io/scc"] == scc
    return True


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_recommendation_agrees_with_admission(run_module, kubeconfig, namespace, as_app, every_scc_usable, workload):
    """scc_access's least-privileged SCC is admitted by OpenShift's plugin, and every SCC it ranks below is refused."""
    spec = workload_spec(WORKLOADS[workload])
    pod_object = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": workload, "namespace": namespace}, "spec": spec}
    result = run_module("scc_access", {"kubeconfig": kubeconfig, "for_workload": pod_object, "service_accounts": [f"{namespace}/{SA}"]}, check_mode=True)
    assert not result.get("failed"), result
    recommended, rejected = result["recommendation"]["scc"], list(result["recommendation"]["rejected"])
    admission = {scc: admitted_under(as_app, namespace, workload, spec, scc) for scc in [*rejected, recommended] if scc}
    assert recommended is None or admission[recommended], f"{workload}: recommended {recommended}, which admission refuses ({admission})"
    wrongly_rejected = [scc for scc in rejected if admission[scc]]
    assert not wrongly_rejected, f"{workload}: admission admits {wrongly_rejected}, ranked below {recommended} ({result['recommendation']['reasons']})"


def test_recommendation_uses_the_namespace_ranges(run_module, kubeconfig, api, namespace, as_app, every_scc_usable):
    """A UID or fsGroup inside the namespace's block is what restricted-v2 assigns anyway: admission takes it there."""
    start, _size = uid_range(api, namespace)
    spec = workload_spec({"securityContext": {"fsGroup": start}, "containers": [{"securityContext": {"runAsUser": start + 5}}]})
    pod_object = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "in-range", "namespace": namespace}, "spec": spec}
    result = run_module("scc_access", {"kubeconfig": kubeconfig, "for_workload": pod_object, "service_accounts": [f"{namespace}/{SA}"]}, check_mode=True)
    assert admitted_under(as_app, namespace, "in-range", spec, "restricted-v2")
    assert result["recommendation"]["scc"] == "restricted-v2", result["recommendation"]


AGENT = {
    "hostNetwork": True,
    "containers": [{"securityContext": {"runAsUser": 1001, "capabilities": {"add": ["NET_ADMIN"]}}, "ports": [{"containerPort": 9100, "hostPort": 9100}]}],
}


@pytest.fixture
def custom_scc(api):
    """Name for a custom SCC, deleted (with its ClusterRole) afterwards."""
    name = "kf-admit-" + os.urandom(3).hex()
    yield name
    for delete in (
        lambda: client.CustomObjectsApi(api).delete_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name),
        lambda: client.RbacAuthorizationV1Api(api).delete_cluster_role("system:openshift:scc:" + name),
    ):
        try:
            delete()
        except ApiException:
            pass


def test_a_custom_scc_admits_exactly_what_it_allows(run_module, kubeconfig, namespace, as_app, custom_scc):
    spec = workload_spec(AGENT)
    made = run_module("scc", {"kubeconfig": kubeconfig, "name": custom_scc, "for_workload": {"kind": "Pod", "spec": spec}})
    assert made["changed"] is True and not made.get("failed"), made
    refusal(as_app, namespace, {"metadata": {"name": "agent-before"}, "spec": spec})  # not granted yet
    granted = run_module("scc_access", {"kubeconfig": kubeconfig, "scc": custom_scc, "service_accounts": [f"{namespace}/{SA}"]})
    assert not granted.get("failed"), granted

    admitted = as_app.create_namespaced_pod(namespace, {"metadata": {"name": "agent"}, "spec": spec})
    assert admitted.metadata.annotations["openshift.io/scc"] == custom_scc
    assert admitted.spec.containers[0].security_context.run_as_user == 1001
    # One thing more than the workload asked for: the SCC does not allow it.
    for extra, word in (({"hostPID": True}, "Host PID"), ({"containers": [dict(AGENT["containers"][0], securityContext={"runAsUser": 1002})]}, "1002")):
        wider = workload_spec(dict(AGENT, **extra))
        message = refusal(as_app, namespace, {"metadata": {"name": "agent-wider"}, "spec": wider})
        assert word in message, message


def test_a_pinned_deployment_runs_under_its_pinned_scc(run_module, kubeconfig, api, namespace, as_app, custom_scc):
    """openshift.io/required-scc on the template: the plain pod (restricted-v2 would admit it) gets the pinned SCC."""
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": custom_scc, "add_capabilities": ["SYS_NICE"]})["changed"] is True
    apps = client.AppsV1Api(api)
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": workload_spec({})}
    deployment = {"metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": template}}
    apps.create_namespaced_deployment(namespace, deployment)
    pin = [{"kind": "Deployment", "name": "web", "namespace": namespace}]
    pinned = run_module("scc_access", {"kubeconfig": kubeconfig, "scc": custom_scc, "service_accounts": [f"{namespace}/{SA}"], "pin_workloads": pin})
    assert pinned["changed"] is True and not pinned.get("failed"), pinned

    def pinned_pod():
        for item in client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=web").items:
            annotations = item.metadata.annotations or {}
            if annotations.get("openshift.io/required-scc") == custom_scc and item.metadata.deletion_timestamp is None:
                return item
        return None

    found = poll_until(pinned_pod, 120, describe="a pod of the pinned template")
    assert found.metadata.annotations["openshift.io/scc"] == custom_scc
