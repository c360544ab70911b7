"""SCC access RBAC, shaped like `oc adm policy add-scc-to-user/-group` in OpenShift 4 (scc.md section 3)."""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access

SA = {"kind": "ServiceAccount", "name": "mysa", "namespace": "myns"}
OTHER_SA = {"kind": "ServiceAccount", "name": "mysa", "namespace": "other"}
ALICE = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}
OPS = {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ops"}


def test_cluster_role_matches_oc():
    assert access.scc_cluster_role("anyuid") == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:openshift:scc:anyuid", "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
        "rules": [{"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"], "resourceNames": ["anyuid"], "verbs": ["use"]}],
    }


def test_add_to_nothing_gives_the_oc_rolebinding():
    # scc.md 3.4: oc adm policy add-scc-to-user anyuid -z mysa -n myns
    changed, binding = access.add_subject(None, access.parse_service_account("mysa", "myns"), scc="anyuid", namespace="myns")
    assert changed
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "system:openshift:scc:anyuid", "namespace": "myns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:anyuid"},
        "subjects": [SA],
    }


def test_without_namespace_a_clusterrolebinding():
    changed, binding = access.add_subject(None, OPS, scc="privileged")
    assert changed and binding["kind"] == "ClusterRoleBinding"
    assert "namespace" not in binding["metadata"]
    assert binding["metadata"]["name"] == access.binding_name("privileged") == "system:openshift:scc:privileged"


ADD_CASES = [
    # (id, existing subjects, subject, changed, subjects after)
    ("append", [ALICE], SA, True, [ALICE, SA]),
    ("already-there", [ALICE, SA], SA, False, [ALICE, SA]),
    ("same-name-other-namespace", [OTHER_SA], SA, True, [OTHER_SA, SA]),
    ("null-subjects", None, OPS, True, [OPS]),
    ("user-vs-group-same-name", [{"kind": "Group", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}], ALICE, True, None),
]


@pytest.mark.parametrize("existing, subject, changed, after", [c[1:] for c in ADD_CASES], ids=[c[0] for c in ADD_CASES])
def test_add_subject(existing, subject, changed, after):
    binding = access.scc_binding("anyuid", "myns")
    binding["subjects"] = copy.deepcopy(existing)
    before = copy.deepcopy(binding)
    got_changed, result = access.add_subject(binding, subject, scc="anyuid")
    assert got_changed is changed
    assert binding == before  # never modified in place
    expected = after if after is not None else existing + [subject]
    assert result["subjects"] == expected
    assert result["roleRef"] == binding["roleRef"]


def test_add_refuses_binding_to_another_role():
    binding = access.scc_binding("anyuid", "myns", [SA])
    with pytest.raises(access.SCCAccessError, match="points to ClusterRole system:openshift:scc:anyuid, not to ClusterRole system:openshift:scc:privileged"):
        access.add_subject(binding, ALICE, scc="privileged")
    with pytest.raises(access.SCCAccessError, match="needs|needed"):
        access.add_subject(None, SA)


REMOVE_CASES = [
    # (id, subjects, annotations, subject, changed, subjects after or None when deleted)
    ("last-subject-deletes", [SA], None, SA, True, None),
    ("others-stay", [ALICE, SA, OPS], None, SA, True, [ALICE, OPS]),
    ("namespace-must-match", [OTHER_SA], None, SA, False, [OTHER_SA]),
    ("absent-is-idempotent", [ALICE], None, OPS, False, [ALICE]),
    ("autoupdate-false-keeps-empty", [SA], {"rbac.authorization.kubernetes.io/autoupdate": "false"}, SA, True, []),
    ("autoupdate-true-deletes", [SA], {"rbac.authorization.kubernetes.io/autoupdate": "true"}, SA, True, None),
]


@pytest.mark.parametrize("subjects, annotations, subject, changed, after", [c[1:] for c in REMOVE_CASES], ids=[c[0] for c in REMOVE_CASES])
def test_remove_subject(subjects, annotations, subject, changed, after):
    binding = access.scc_binding("anyuid", None, subjects)
    if annotations:
        binding["metadata"]["annotations"] = annotations
    before = copy.deepcopy(binding)
    got_changed, result = access.remove_subject(binding, subject, scc="anyuid")
    assert got_changed is changed
    assert binding == before
    if after is None:
        assert result is None
    else:
        assert result["subjects"] == after


def test_remove_from_missing_binding():
    assert access.remove_subject(None, SA) == (False, None)


def stored(subjects, version="7"):
    binding = access.scc_binding("anyuid", "myns", subjects)
    binding["metadata"]["resourceVersion"] = version
    return binding


EDIT_CASES = [
    # (id, before, subjects, state, after subjects (None: no binding), edited, request)
    ("grant, none yet", None, [SA], "present", [SA], True, "create"),
    ("grant, already there", [SA], [SA], "present", [SA], False, None),
    ("grant one more", [SA], [SA, ALICE], "present", [SA, ALICE], True, "patch"),
    ("revoke the last", [SA], [SA], "absent", None, True, "delete"),
    ("revoke one of two", [SA, ALICE], [ALICE], "absent", [SA], True, "patch"),
    ("revoke, none there", None, [SA], "absent", None, False, None),
    ("revoke one not bound", [SA], [ALICE], "absent", [SA], False, None),
]


@pytest.mark.parametrize("before, subjects, state, after, edited, write", [c[1:] for c in EDIT_CASES], ids=[c[0] for c in EDIT_CASES])
def test_edit_binding_and_the_one_request_it_needs(before, subjects, state, after, edited, write):
    existing = stored(before) if before is not None else None
    binding, done = access.edit_binding(existing, subjects, "anyuid", "myns", state)
    assert done is edited
    assert (binding or {}).get("subjects", None if after is None else []) == after
    verb, body = access.binding_write(existing, binding)
    assert verb == write
    if verb == "patch":  # guarded: a subject added meanwhile fails the patch instead of being dropped
        assert body == {"metadata": {"resourceVersion": "7"}, "subjects": after}
    if verb == "delete":
        assert body == "7"


PARSE_CASES = [
    # (id, call, expected subject)
    ("sa-slash", lambda: access.parse_service_account("myns/mysa"), SA),
    ("sa-default-namespace", lambda: access.parse_service_account("mysa", "myns"), SA),
    ("sa-user-string", lambda: access.parse_service_account("system:serviceaccount:myns:mysa"), SA),
    ("user", lambda: access.user_subject("alice"), ALICE),
    ("user-that-is-a-service-account", lambda: access.user_subject("system:serviceaccount:myns:mysa"), SA),
    ("group", lambda: access.group_subject("ops"), OPS),
]


@pytest.mark.parametrize("call, expected", [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_parse_subjects(call, expected):
    assert call() == expected


@pytest.mark.parametrize(
    "value, default_namespace",
    [("mysa", None), ("myns/", None), ("/mysa", None), ("a/b/c", None), ("system:serviceaccount:myns", None), (" mysa", "myns"), (7, "myns")],
)
def test_parse_service_account_rejects(value, default_namespace):
    with pytest.raises(access.SCCAccessError):
        access.parse_service_account(value, default_namespace)


def test_parse_subjects_dedupes_in_order():
    subjects = access.parse_subjects(["myns/mysa", "mysa"], ["system:serviceaccount:myns:mysa", "alice"], ["ops"], default_namespace="myns")
    assert subjects == [SA, ALICE, OPS]


BROAD_CASES = [
    ("authenticated", access.group_subject("system:authenticated"), True),
    ("authenticated-oauth", access.group_subject("system:authenticated:oauth"), True),
    ("unauthenticated", access.group_subject("system:unauthenticated"), True),
    ("all-service-accounts", access.group_subject("system:serviceaccounts"), True),
    ("namespace-service-accounts", access.group_subject("system:serviceaccounts:istio-system"), True),
    ("anonymous-user", access.user_subject("system:anonymous"), True),
    ("one-service-account", SA, False),
    ("a-group", OPS, False),
    ("a-user-named-like-a-group", access.user_subject("system:authenticated"), False),
]


@pytest.mark.parametrize("subject, broad", [c[1:] for c in BROAD_CASES], ids=[c[0] for c in BROAD_CASES])
def test_check_broad_subjects(subject, broad):
    assert access.is_broad_subject(subject) is broad
    if broad:
        with pytest.raises(access.BroadSubjectError) as caught:
            access.check_broad_subjects([SA, subject])
        assert isinstance(caught.value, KubeforgeError)
        assert subject["name"] in str(caught.value)
        assert caught.value.failure_fields() == {"subjects": [subject]}
        assert access.check_broad_subjects([SA, subject], allow_broad=True) == [subject]
    else:
        assert access.check_broad_subjects([SA, subject]) == []


@pytest.mark.parametrize(
    "name, default",
    [("restricted-v2", True), ("anyuid", True), ("privileged", True), ("hostmount-anyuid-v2", True), ("nested-container", True), ("my-app-scc", False)],
)
def test_is_default_scc(name, default):
    assert access.is_default_scc(name) is default
    if default:
        with pytest.raises(access.SCCAccessError, match="default OpenShift SCC"):
            access.ensure_not_default(name)
    else:
        access.ensure_not_default(name)


LEGACY_CASES = [
    # (id, scc lists, subject, changed, list name, list after)
    (
        "service-account-in-users",
        {"users": ["system:admin", "system:serviceaccount:myns:mysa"], "groups": ["system:cluster-admins"]},
        SA,
        True,
        "users",
        ["system:admin"],
    ),
    ("user-last-entry", {"users": ["alice"]}, ALICE, True, "users", []),
    ("group", {"users": ["alice"], "groups": ["ops", "system:cluster-admins"]}, OPS, True, "groups", ["system:cluster-admins"]),
    ("duplicates-all-removed", {"users": ["alice", "bob", "alice"]}, ALICE, True, "users", ["bob"]),
    ("not-listed", {"users": ["system:serviceaccount:other:mysa"]}, SA, False, None, None),
    ("null-list", {"users": None}, ALICE, False, None, None),
    ("group-name-in-users-only", {"users": ["ops"], "groups": []}, OPS, False, None, None),
]


@pytest.mark.parametrize("lists, subject, changed, list_name, after", [c[1:] for c in LEGACY_CASES], ids=[c[0] for c in LEGACY_CASES])
def test_remove_from_scc_lists(lists, subject, changed, list_name, after):
    scc = {"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints", "metadata": {"name": "anyuid"}}
    scc.update(copy.deepcopy(lists))
    before = copy.deepcopy(scc)
    got_changed, patch = access.remove_from_scc_lists(scc, subject)
    assert got_changed is changed
    assert scc == before
    if not changed:
        assert patch == []
        return
    path = "/" + list_name
    assert patch == [{"op": "test", "path": path, "value": lists[list_name]}, {"op": "replace", "path": path, "value": after}]


def test_legacy_patch_fails_on_concurrent_change():
    """Apply the patch the way the API server does (RFC 6902 test then replace) to a list changed meanwhile."""

    def apply(obj, patch):
        obj = copy.deepcopy(obj)
        for op in patch:
            key = op["path"].lstrip("/")
            if op["op"] == "test" and obj.get(key) != op["value"]:
                raise ValueError("test failed")
            if op["op"] == "replace":
                obj[key] = op["value"]
        return obj

    scc = {"users": ["system:serviceaccount:myns:mysa", "bob"]}
    _changed, patch = access.remove_from_scc_lists(scc, SA)
    assert apply(scc, patch) == {"users": ["bob"]}
    with pytest.raises(ValueError, match="test failed"):
        apply({"users": ["system:serviceaccount:myns:mysa", "bob", "carol"]}, patch)


def test_legacy_entry_rejects_unknown_kind():
    with pytest.raises(access.SCCAccessError, match="unknown subject kind"):
        access.legacy_entry({"kind": "Robot", "name": "r2"})


@pytest.mark.parametrize(
    "what, state, words",
    [
        ("grant", "present", "the grant is stored, and takes effect only where an SCC admission webhook enforces SCCs"),
        ("grant", "absent", "the grant is taken out of RBAC, which changes pod admission only where an SCC admission webhook enforces SCCs"),
        ("SCC", "present", "the SCC is stored, and takes effect only where an SCC admission webhook enforces SCCs"),
        ("SCC", "absent", "the SCC is deleted, which changes pod admission only where an SCC admission webhook enforces SCCs"),
    ],
)
def test_a_cluster_with_only_the_scc_crd_is_told_what_the_change_means(what, state, words):
    assert access.crd_only_warning(what, state) == "the SCC API is served by a CRD, not by OpenShift: " + words


# ------------------------------------------------------------------------------------------ a grant's plan


@pytest.mark.parametrize(
    "subjects, namespace, cluster_wide, expected",
    [
        ([access.service_account_subject("a", "x"), access.service_account_subject("a", "y")], None, False, "a"),
        ([access.user_subject("alice")], "b", False, "b"),
        ([access.service_account_subject("a", "x")], None, True, None),
    ],
)
def test_binding_namespace(subjects, namespace, cluster_wide, expected):
    assert access.binding_namespace(subjects, namespace, cluster_wide) == expected


@pytest.mark.parametrize(
    "subjects",
    [[access.service_account_subject("a", "x"), access.service_account_subject("b", "y")], [access.group_subject("devs")]],
)
def test_binding_namespace_needs_a_choice(subjects):
    with pytest.raises(KubeforgeError, match="set namespace"):
        access.binding_namespace(subjects)


def test_a_binding_in_another_namespace_than_the_service_accounts_is_refused():
    """SCC admission checks `use` in the pod's namespace: a RoleBinding in b would grant a/x's pods nothing."""
    with pytest.raises(KubeforgeError, match="ServiceAccount a/x run pods outside namespace b"):
        access.binding_namespace([access.service_account_subject("a", "x"), access.service_account_subject("b", "y")], "b")


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
    assert access.psa_level(scc) == level


class Recommended:
    def __init__(self, scc):
        self.scc = scc


@pytest.mark.parametrize(
    "given, recommended, chosen, warned",
    [
        ("anyuid", None, "anyuid", None),
        (None, "nonroot-v2", "nonroot-v2", None),
        ("anyuid", "anyuid", "anyuid", None),
        ("privileged", "restricted-v2", "privileged", "needs no more than SCC restricted-v2, but privileged is granted"),
    ],
)
def test_choose_scc(given, recommended, chosen, warned):
    scc, warnings = access.choose_scc(given, Recommended(recommended) if recommended else None)
    assert scc == chosen
    assert warnings == ([] if warned is None else [w for w in warnings if warned in w])
    assert len(warnings) == (warned is not None)


@pytest.mark.parametrize("recommendation", [None, Recommended(None)], ids=["nothing given", "no default SCC admits the workload"])
def test_no_scc_to_grant_is_refused(recommendation):
    with pytest.raises(KubeforgeError, match="no SCC to grant"):
        access.choose_scc(None, recommendation)


LEGACY_SCC = {"metadata": {"name": "anyuid"}, "users": ["system:serviceaccount:myns:mysa", "bob", "system:serviceaccount:other:mysa"], "groups": ["ops", "dev"]}


def test_subjects_leave_the_legacy_lists_in_one_patch_each_op_testing_what_the_one_before_left():
    removed, patch = access.remove_subjects_from_scc_lists(LEGACY_SCC, [SA, ALICE, OPS, OTHER_SA])
    assert removed == ["system:serviceaccount:myns:mysa", "ops", "system:serviceaccount:other:mysa"]  # alice is in no list
    assert patch == [
        {"op": "test", "path": "/users", "value": LEGACY_SCC["users"]},
        {"op": "replace", "path": "/users", "value": ["bob", "system:serviceaccount:other:mysa"]},
        {"op": "test", "path": "/groups", "value": ["ops", "dev"]},
        {"op": "replace", "path": "/groups", "value": ["dev"]},
        {"op": "test", "path": "/users", "value": ["bob", "system:serviceaccount:other:mysa"]},
        {"op": "replace", "path": "/users", "value": ["bob"]},
    ]
    assert LEGACY_SCC["users"][0] == "system:serviceaccount:myns:mysa"  # the input is not changed


GONE = "SecurityContextConstraints anyuid does not exist: only its binding is cleaned up"
OBSERVED = access.GrantObserved(openshift=True, scc_object=LEGACY_SCC, cluster_role=True)


@pytest.mark.parametrize(
    "state, namespace, observed, remove_legacy, expect",
    [
        ("present", "myns", OBSERVED, False, {"kind": "RoleBinding", "cluster_role": False, "removed": [], "warnings": []}),
        ("present", None, OBSERVED._replace(cluster_role=False), False, {"kind": "ClusterRoleBinding", "cluster_role": True, "removed": [], "warnings": []}),
        ("present", "myns", OBSERVED._replace(openshift=False), False,
         {"kind": "RoleBinding", "cluster_role": False, "removed": [], "warnings": [access.crd_only_warning("grant", "present")]}),
        ("absent", "myns", OBSERVED._replace(cluster_role=False), False, {"kind": "RoleBinding", "cluster_role": False, "removed": [], "warnings": []}),
        ("absent", "myns", OBSERVED, True, {"kind": "RoleBinding", "cluster_role": False, "removed": ["system:serviceaccount:myns:mysa"], "warnings": []}),
        ("absent", "myns", OBSERVED._replace(scc_object=None), True,
         {"kind": "RoleBinding", "cluster_role": False, "removed": [], "warnings": [GONE]}),
    ],
    ids=["grant", "grant cluster-wide, the ClusterRole missing", "grant on the CRD only", "revoke", "revoke from the legacy lists too",
         "revoke of a deleted SCC"],
)
def test_plan_grant(state, namespace, observed, remove_legacy, expect):
    plan = access.plan_grant("anyuid", state, namespace, [SA], observed, remove_legacy)
    assert (plan.binding_kind, plan.namespace, plan.subjects) == (expect["kind"], namespace, [SA])
    assert plan.cluster_role == (access.scc_cluster_role("anyuid") if expect["cluster_role"] else None)
    assert plan.legacy_removed == expect["removed"] and bool(plan.legacy_patch) == bool(expect["removed"])
    assert plan.warnings == expect["warnings"]


def test_a_grant_of_a_missing_scc_is_refused():
    with pytest.raises(KubeforgeError, match="SecurityContextConstraints anyuid does not exist"):
        access.plan_grant("anyuid", "present", "myns", [SA], OBSERVED._replace(scc_object=None))
