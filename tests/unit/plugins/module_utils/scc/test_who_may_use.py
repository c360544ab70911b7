"""scc/access.py who_may_use: which RBAC grants (and legacy SCC lists) let which subjects use an SCC - one table of
roles and bindings, each with the subjects the authorizer would allow."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access

SCC = {"metadata": {"name": "relaxed"}, "users": [], "groups": []}


def role(name, rules, namespace=None):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "rules": rules}


def rule(verbs=("use",), groups=("security.openshift.io",), resources=("securitycontextconstraints",), names=("relaxed",)):
    return {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources), "resourceNames": list(names)}


def binding(name, role_kind, role_name, subjects, namespace=None):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "roleRef": {"kind": role_kind, "name": role_name}, "subjects": subjects}


SA = {"kind": "ServiceAccount", "name": "builder"}
OC_ROLE = access.scc_cluster_role("relaxed")


CASES = [
    (
        "oc adm policy add-scc-to-user -n ci",
        [],
        [OC_ROLE],
        [binding("system:openshift:scc:relaxed", "ClusterRole", OC_ROLE["metadata"]["name"], [SA], "ci")],
        [],
        SCC,
        [("ServiceAccount", "builder", "ci", "ci", "RoleBinding/ci/system:openshift:scc:relaxed -> ClusterRole/system:openshift:scc:relaxed", False)],
    ),
    (
        "a ClusterRoleBinding to a group of every service account",
        [],
        [role("scc-user", [rule()])],
        [],
        [binding("all-sas", "ClusterRole", "scc-user", [{"kind": "Group", "name": "system:serviceaccounts"}])],
        SCC,
        [("Group", "system:serviceaccounts", None, "cluster", "ClusterRoleBinding/all-sas -> ClusterRole/scc-user", True)],
    ),
    (
        "wildcards (cluster-admin's rule) allow every SCC",
        [],
        [role("cluster-admin", [rule(verbs=["*"], groups=["*"], resources=["*"], names=[])])],
        [],
        [binding("admins", "ClusterRole", "cluster-admin", [{"kind": "User", "name": "alice"}])],
        SCC,
        [("User", "alice", None, "cluster", "ClusterRoleBinding/admins -> ClusterRole/cluster-admin", False)],
    ),
    (
        "a namespaced Role, its RoleBinding; a SA subject without namespace is the binding's",
        [role("local", [rule()], "team-a")],
        [],
        [binding("local", "Role", "local", [SA], "team-a")],
        [],
        SCC,
        [("ServiceAccount", "builder", "team-a", "team-a", "RoleBinding/team-a/local -> Role/local", False)],
    ),
    (
        "a Role of another namespace is not the binding's",
        [role("local", [rule()], "team-b")],
        [],
        [binding("local", "Role", "local", [SA], "team-a")],
        [],
        SCC,
        [],
    ),
    ("another SCC's resourceName", [], [role("other", [rule(names=["privileged"])])], [], [binding("b", "ClusterRole", "other", [SA])], SCC, []),
    ("get is not use", [], [role("reader", [rule(verbs=["get", "list"])])], [], [binding("b", "ClusterRole", "reader", [SA])], SCC, []),
    (
        "the SCC's own legacy users and groups",
        [],
        [],
        [],
        [],
        {"metadata": {"name": "relaxed"}, "users": ["system:serviceaccount:kubevirt:handler", "bob"], "groups": ["system:authenticated"]},
        [
            ("Group", "system:authenticated", None, "cluster", "SCC groups", True),
            ("ServiceAccount", "handler", "kubevirt", "cluster", "SCC users", False),
            ("User", "bob", None, "cluster", "SCC users", False),
        ],
    ),
]


@pytest.mark.parametrize("roles, cluster_roles, role_bindings, cluster_role_bindings, scc, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_who_may_use(roles, cluster_roles, role_bindings, cluster_role_bindings, scc, expected):
    subjects = access.who_may_use(scc, roles, cluster_roles, role_bindings, cluster_role_bindings)
    assert [(s["kind"], s["name"], s["namespace"], s["scope"], s["via"], s["broad"]) for s in subjects] == expected
