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
