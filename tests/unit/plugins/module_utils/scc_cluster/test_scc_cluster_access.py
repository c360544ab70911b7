"""scc_cluster/access.py decisions made before any request: which namespace gets the binding, and the Pod Security
level an SCC corresponds to. The cluster behaviour is proven on the testbed (tests/integration/scc)."""

import pytest

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
