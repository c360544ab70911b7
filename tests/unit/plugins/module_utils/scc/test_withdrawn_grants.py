"""scc.access.withdrawn_grants: what an SCCGrant edit takes back (pure, table-driven)."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc.access import withdrawn_grants


def grant(scc="anyuid", sas=(), users=(), groups=(), namespace="web", cluster_wide=None):
    out = {"scc": scc, "service_accounts": list(sas), "users": list(users), "groups": list(groups)}
    if namespace is not None:
        out["namespace"] = namespace
    if cluster_wide is not None:
        out["cluster_wide"] = cluster_wide
    return out


@pytest.mark.parametrize(
    "previous, current, expected",
    [
        ([], [grant(sas=["a"])], []),
        ([grant(sas=["a"])], [grant(sas=["a"])], []),
        ([grant(sas=["a", "b"])], [grant(sas=["b"])], [grant(sas=["a"])]),
        # another SCC, namespace or binding scope does not keep a subject
        ([grant(sas=["a"])], [grant(scc="nonroot-v2", sas=["a"])], [grant(sas=["a"])]),
        ([grant(sas=["a"])], [grant(sas=["a"], namespace="other")], [grant(sas=["a"])]),
        ([grant(users=["u"], cluster_wide=True, namespace=None)], [grant(users=["u"])], [grant(users=["u"], cluster_wide=True, namespace=None)]),
        # cluster-wide grants ignore the namespace; kinds of subject are separate
        ([grant(groups=["g"], cluster_wide=True, namespace="x")], [grant(groups=["g"], cluster_wide=True, namespace=None)], []),
        ([grant(sas=["g"])], [grant(groups=["g"])], [grant(sas=["g"])]),
        # subjects spread over several current items of the same binding
        ([grant(sas=["a", "b"], users=["u"])], [grant(sas=["a"]), grant(users=["u"])], [grant(sas=["b"])]),
        # a grant without namespace is its own binding scope
        ([grant(sas=["web/a"], namespace=None)], [grant(sas=["web/a"], namespace=None)], []),
    ],
)
def test_withdrawn_grants(previous, current, expected):
    assert withdrawn_grants(previous, current) == expected


def test_none_inputs():
    assert withdrawn_grants(None, None) == []
