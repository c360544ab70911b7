"""scc_cluster/access.py decisions made before any request: which namespace gets the binding, and the Pod Security
level an SCC corresponds to. The cluster behaviour is proven on the testbed (tests/integration/scc)."""

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import access as glue


@pytest.mark.parametrize(
    "params, subjects, expected",
    [
        ({}, [access.service_account_subject("a", "x"), access.service_account_subject("a", "y")], "a"),
        ({"namespace": "b"}, [access.user_subject("alice")], "b"),
        ({"cluster_wide": True}, [access.service_account_subject("a", "x")], None),
    ],
)
def test_binding_namespace(params, subjects, expected):
    assert glue._binding_namespace(params, subjects) == expected


@pytest.mark.parametrize(
    "subjects",
    [[access.service_account_subject("a", "x"), access.service_account_subject("b", "y")], [access.group_subject("devs")]],
)
def test_binding_namespace_needs_a_choice(subjects):
    with pytest.raises(KubeforgeError, match="set namespace"):
        glue._binding_namespace({}, subjects)


def test_a_binding_in_another_namespace_than_the_service_accounts_is_refused():
    """SCC admission checks `use` in the pod's namespace: a RoleBinding in b would grant a/x's pods nothing."""
    with pytest.raises(KubeforgeError, match="ServiceAccount a/x run pods outside namespace b"):
        glue._binding_namespace({"namespace": "b"}, [access.service_account_subject("a", "x"), access.service_account_subject("b", "y")])


@pytest.mark.parametrize(
    "scc, level",
    [
        ("restricted-v2", "restricted"),
        ("nonroot-v2", "restricted"),
        ("anyuid", "baseline"),
        ("privileged", "privileged"),
        ("hostaccess", "privileged"),
        ("custom", "privileged"),
    ],
)
def test_psa_level(scc, level):
    assert glue.psa_level(scc) == level


SCC_CRD_ONLY = {
    ("security.openshift.io/v1", "SecurityContextConstraints"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}


@pytest.mark.parametrize(
    "state, says, never",
    [
        ("present", "the grant is stored, and takes effect only where an SCC admission webhook enforces SCCs", "taken out"),
        ("absent", "the grant is taken out of RBAC, which changes pod admission only where", "stored"),
    ],
)
def test_a_cluster_with_only_the_scc_crd_is_told_what_the_grant_or_revoke_means(state, says, never):
    """The testbed serves OpenShift's SCC CRD without OpenShift: a revoke must not say the grant is stored."""
    scc = {"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints", "metadata": {"name": "anyuid"}}
    binding = access.scc_binding("anyuid", "a", [access.service_account_subject("a", "x")])
    binding["metadata"]["resourceVersion"] = "7"
    client = FakeDynamicClient({"SecurityContextConstraints": [scc], "APIService": [], "ClusterRole": [access.scc_cluster_role("anyuid")],
                                "RoleBinding": [binding] if state == "absent" else []}, served=SCC_CRD_ONLY, dry_run=True)
    params = {"scc": "anyuid", "service_accounts": ["a/y"], "state": state, "fallback": "none", "remove_from_scc_lists": False}
    result = glue.apply(client, params, check_mode=True)
    (warning,) = [w for w in result["warnings"] if "served by a CRD" in w]
    assert says in warning and never not in warning, warning
    assert warning == access.crd_only_warning("grant", state)
