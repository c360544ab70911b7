"""scc_access on the testbed: RBAC grants checked with real SubjectAccessReviews, broad subjects refused, legacy
list cleanup, check mode, idempotence, the least-privilege recommendation and the Pod Security fallback.

The testbed serves the SCC API from OpenShift's CRD and enforces SCCs with OpenShift's own admission plugin as a
webhook (test_scc_admission.py proves grants with pods); real OpenShift is detected by its aggregated APIs, which the
testbed lacks, so the module warns that a grant takes effect only where an SCC admission webhook enforces SCCs.
"""

import os

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.scc import scc_object

pytestmark = pytest.mark.testbed


@pytest.fixture
def scc(api):
    custom = client.CustomObjectsApi(api)
    name = "kf-test-" + os.urandom(3).hex()
    yield name, custom
    for plural, group in (("securitycontextconstraints", "security.openshift.io"),):
        try:
            custom.delete_cluster_custom_object(group, "v1", plural, name)
        except ApiException:
            pass
    try:
        client.RbacAuthorizationV1Api(api).delete_cluster_role("system:openshift:scc:" + name)
    except ApiException:
        pass


def can_use(api, namespace, sa, scc_name):
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": f"system:serviceaccount:{namespace}:{sa}",
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
            "resourceAttributes": {
                "group": "security.openshift.io",
                "resource": "securitycontextconstraints",
                "name": scc_name,
                "verb": "use",
                "namespace": namespace,
            },
        },
    }
    return client.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed


def test_grant_and_revoke_service_accounts(run_module, kubeconfig, namespace, api, scc):
    name, custom = scc
    custom.create_cluster_custom_object(
        "security.openshift.io", "v1", "securitycontextconstraints", scc_object(name, users=[f"system:serviceaccount:{namespace}:legacy"])
    )
    args = {"kubeconfig": kubeconfig, "scc": name, "service_accounts": [f"{namespace}/app", f"{namespace}/other"]}
    assert not can_use(api, namespace, "app", name)

    predicted = run_module("scc_access", args, check_mode=True, diff=True)
    assert predicted["changed"] is True and not predicted.get("failed"), predicted
    assert not can_use(api, namespace, "app", name)

    granted = run_module("scc_access", args, diff=True)
    # check mode ran the same plan as dry runs: it reported what the real run did
    for key in ("binding", "created_cluster_role", "warnings", "openshift", "diff"):
        assert predicted[key] == granted[key], key
    assert granted["changed"] is True and granted["openshift"] is False, granted
    assert granted["binding"]["kind"] == "RoleBinding" and granted["binding"]["namespace"] == namespace
    assert granted["created_cluster_role"] == f"system:openshift:scc:{name}"
    assert "takes effect only where an SCC admission webhook enforces SCCs" in str(granted["warnings"])
    assert can_use(api, namespace, "app", name) and can_use(api, namespace, "other", name)
    assert run_module("scc_access", args)["changed"] is False

    # scc_info names the same subjects the API server's authorizer allows: the RoleBinding's, and the SCC's own list
    (info,) = run_module("scc_info", {"kubeconfig": kubeconfig, "name": name})["sccs"]
    via = f"RoleBinding/{namespace}/system:openshift:scc:{name} -> ClusterRole/system:openshift:scc:{name}"
    mine = [(s["kind"], s["namespace"], s["name"], s["scope"], s["via"]) for s in info["who_may_use"] if s["namespace"] == namespace]
    assert mine == [
        ("ServiceAccount", namespace, "app", namespace, via),
        ("ServiceAccount", namespace, "legacy", "cluster", "SCC users"),
        ("ServiceAccount", namespace, "other", namespace, via),
    ], info["who_may_use"]
    # cluster-admin's wildcard rule allows every SCC, as on OpenShift
    assert ("Group", "system:masters", "ClusterRoleBinding/cluster-admin -> ClusterRole/cluster-admin") in [
        (s["kind"], s["name"], s["via"]) for s in info["who_may_use"]
    ], info["who_may_use"]
    assert (info["default"], info["created_by_kubeforge"], info["broad"]) == (False, False, False), info
    assert all(can_use(api, namespace, s["name"], name) for s in info["who_may_use"] if s["via"] == via)
    empty = run_module("scc_info", {"kubeconfig": kubeconfig, "name": ""})  # an empty variable must not list every SCC
    assert empty.get("failed") and "name must not be empty" in empty["msg"], empty

    revoke_one = run_module("scc_access", dict(args, state="absent", service_accounts=[f"{namespace}/app"]))
    assert revoke_one["changed"] is True and [s["name"] for s in revoke_one["binding"]["subjects"]] == ["other"]
    assert not can_use(api, namespace, "app", name) and can_use(api, namespace, "other", name)

    legacy_args = dict(args, state="absent", service_accounts=[f"{namespace}/other", f"{namespace}/legacy"], remove_from_scc_lists=True)
    predicted = run_module("scc_access", legacy_args, check_mode=True)
    assert custom.get_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)["users"] == [
        f"system:serviceaccount:{namespace}:legacy"
    ]
    legacy = run_module("scc_access", legacy_args)
    assert legacy["changed"] is True and legacy["binding"] is None, legacy
    assert {key: predicted[key] for key in ("changed", "binding", "removed_from_scc_lists")} == {
        key: legacy[key] for key in ("changed", "binding", "removed_from_scc_lists")
    }
    assert legacy["removed_from_scc_lists"] == [f"system:serviceaccount:{namespace}:legacy"]
    assert custom.get_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)["users"] == []
    with pytest.raises(ApiException):
        client.RbacAuthorizationV1Api(api).read_namespaced_role_binding(f"system:openshift:scc:{name}", namespace)
    assert run_module("scc_access", dict(args, state="absent"))["changed"] is False


def test_revoke_after_the_scc_is_gone_cleans_the_binding(run_module, kubeconfig, namespace, api, scc):
    """A grant outlives its SCC (deleted meanwhile): taking it back still empties the binding, with a warning."""
    name, custom = scc
    custom.create_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", scc_object(name))
    args = {"kubeconfig": kubeconfig, "scc": name, "service_accounts": [f"{namespace}/app"]}
    assert run_module("scc_access", args)["changed"] is True
    custom.delete_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)

    assert run_module("scc_access", args).get("failed"), "granting an SCC that does not exist fails"
    revoked = run_module("scc_access", dict(args, state="absent", remove_from_scc_lists=True))
    assert revoked["changed"] is True and revoked["binding"] is None and not revoked.get("failed"), revoked
    assert "does not exist: only its binding is cleaned up" in str(revoked["warnings"])
    with pytest.raises(ApiException):
        client.RbacAuthorizationV1Api(api).read_namespaced_role_binding(f"system:openshift:scc:{name}", namespace)


def test_broad_subjects_refused(run_module, kubeconfig, namespace, scc):
    name, custom = scc
    custom.create_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", scc_object(name))
    args = {"kubeconfig": kubeconfig, "scc": name, "groups": [f"system:serviceaccounts:{namespace}"], "namespace": namespace}
    refused = run_module("scc_access", args)
    assert refused["failed"] and "refusing to grant an SCC" in refused["msg"], refused
    granted = run_module("scc_access", dict(args, allow_broad_subjects=True))
    assert granted["changed"] is True and not granted.get("failed"), granted
    # taking a broad grant back needs no opt-in
    revoked = run_module("scc_access", dict(args, state="absent"))
    assert revoked["changed"] is True and not revoked.get("failed"), revoked


def test_recommendation_and_pod_security_fallback(run_module, kubeconfig, namespace, api):
    workload = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx", "securityContext": {"runAsUser": 0}}]}}},
    }
    result = run_module(
        "scc_access",
        {"kubeconfig": kubeconfig, "for_workload": workload, "service_accounts": [f"{namespace}/web"], "fallback": "pod_security"},
    )
    assert not result.get("failed"), result
    assert result["recommendation"]["scc"] == "anyuid" and result["scc"] == "anyuid"
    assert result["fallback"]["enforce"] == "baseline"
    labels = client.CoreV1Api(api).read_namespace(namespace).metadata.labels
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    # a grant of a narrower SCC in the same namespace does not tighten the level the first grant needs
    narrower = run_module(
        "scc_access", {"kubeconfig": kubeconfig, "scc": "restricted-v2", "service_accounts": [f"{namespace}/other"], "fallback": "pod_security"}
    )
    assert not narrower.get("failed") and narrower["fallback"]["enforce"] == "baseline" and narrower["changed"] is False, narrower
    undone = run_module(
        "scc_access", {"kubeconfig": kubeconfig, "scc": "anyuid", "state": "absent", "service_accounts": [f"{namespace}/web"], "fallback": "pod_security"}
    )
    assert undone["changed"] is True
    assert "pod-security.kubernetes.io/enforce" not in (client.CoreV1Api(api).read_namespace(namespace).metadata.labels or {})
