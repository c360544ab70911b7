# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RBAC for SCC use, built and edited the way ``oc adm policy add-scc-to-user/-group`` does in OpenShift 4.

openshift/oc ``pkg/cli/admin/policy/modify_scc.go`` (scc.md section 3): the grant is a binding named
``system:openshift:scc:<scc>`` to the ClusterRole of the same name (verb ``use`` on the one SCC); a RoleBinding in the
namespace when one is given, else a ClusterRoleBinding. Subjects are appended to an existing binding of that name;
removal takes out only the matching subject (kind, name and namespace) and deletes the binding once it is empty
unless its ``rbac.authorization.kubernetes.io/autoupdate`` annotation is ``"false"``. Legacy grants in the SCC's own
``users``/``groups`` lists are cleaned with a JSON patch whose ``test`` op makes a concurrent change fail rather than
be overwritten (KubeVirt's pattern, scc.md section 3.3).

Pure functions over plain dicts: inputs are never modified, results are new objects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt

RBAC_NAME_FORMAT = "system:openshift:scc:%s"
RBAC_API_GROUP = "rbac.authorization.k8s.io"
RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

# The SCCs OpenShift 4 ships (scc.md section 2): never created, edited or deleted by us. The CVO reconciles the v2
# ones and nested-container and creates the others once; Red Hat says not to modify any of them.
DEFAULT_SCC_NAMES = frozenset(
    (
        "restricted-v2",
        "restricted-v3",
        "nonroot-v2",
        "hostnetwork-v2",
        "anyuid",
        "privileged",
        "hostaccess",
        "hostmount-anyuid",
        "hostmount-anyuid-v2",
        "hostnetwork",
        "nonroot",
        "restricted",
        "nested-container",
    )
)

# Groups whose grant reaches every (authenticated, anonymous or service account) identity, and the anonymous user.
BROAD_GROUPS = frozenset(("system:authenticated", "system:authenticated:oauth", "system:unauthenticated", "system:serviceaccounts"))
BROAD_GROUP_PREFIXES = ("system:serviceaccounts:",)
BROAD_USERS = frozenset(("system:anonymous",))


class SCCAccessError(KubeforgeError):
    """An SCC grant that cannot or must not be built (bad subject, foreign binding, default SCC)."""


class BroadSubjectError(SCCAccessError):
    """A grant to a group that covers every user or every service account, refused unless explicitly allowed."""

    def __init__(self, message, subjects=()):
        super().__init__(message)
        self.subjects = [dict(s) for s in subjects]

    def failure_fields(self):
        return {"subjects": self.subjects}


# Where the SCC API is a CRD without OpenShift (the project's testbed, a vanilla cluster with the CRD installed), SCCs
# and grants are stored objects: only an SCC admission webhook, where one runs, admits pods by them. What a change of
# one means there, by what changes and how (a grant stored or revoked, an SCC stored or deleted).
CRD_ONLY_PREFIX = "the SCC API is served by a CRD, not by OpenShift: "
CRD_ONLY_WORDS = {
    ("grant", "present"): "the grant is stored, and takes effect only where an SCC admission webhook enforces SCCs",
    ("grant", "absent"): "the grant is taken out of RBAC, which changes pod admission only where an SCC admission webhook enforces SCCs",
    ("SCC", "present"): "the SCC is stored, and takes effect only where an SCC admission webhook enforces SCCs",
    ("SCC", "absent"): "the SCC is deleted, which changes pod admission only where an SCC admission webhook enforces SCCs",
}


def crd_only_warning(what, state):
    """The warning for a change of ``what`` (``grant`` or ``SCC``) with ``state`` (``present``/``absent``) on a cluster
    whose SCC API is only a CRD."""
    return CRD_ONLY_PREFIX + CRD_ONLY_WORDS[(what, state)]


def rbac_name(scc):
    _require_name("SCC", scc)
    return RBAC_NAME_FORMAT % scc


def is_default_scc(name):
    """True for the SCCs OpenShift ships; their definitions must never be modified."""
    return name in DEFAULT_SCC_NAMES


def ensure_not_default(name):
    if is_default_scc(name):
        raise SCCAccessError("SCC %s is a default OpenShift SCC and is never modified; create a custom SCC instead" % name)


def scc_cluster_role(scc):
    """The ClusterRole ``system:openshift:scc:<scc>`` that grants ``use`` of one SCC (as oc creates when missing)."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": rbac_name(scc), "annotations": {AUTOUPDATE_ANNOTATION: "true"}},
        "rules": [
            {
                "apiGroups": ["security.openshift.io"],
                "resources": ["securitycontextconstraints"],
                "resourceNames": [scc],
                "verbs": ["use"],
            }
        ],
    }


def binding_name(scc):
    """oc names the RoleBinding and the ClusterRoleBinding alike: ``system:openshift:scc:<scc>`` (RoleBindingName)."""
    return rbac_name(scc)


def scc_binding(scc, namespace=None, subjects=()):
    """A RoleBinding in ``namespace`` (oc ``-n``) or, without one, a ClusterRoleBinding granting ``use`` of ``scc``."""
    metadata = {"name": binding_name(scc)}
    if namespace:
        _require_name("namespace", namespace)
        metadata["namespace"] = namespace
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": metadata,
        "roleRef": {"apiGroup": RBAC_API_GROUP, "kind": "ClusterRole", "name": rbac_name(scc)},
        "subjects": [dict(s) for s in subjects],
    }


# ------------------------------------------------------------------------------------------------ subjects
def _require_name(what, value):
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise SCCAccessError("%s name must be a non-empty string without surrounding spaces, got %r" % (what, excerpt(value)))


def service_account_subject(namespace, name):
    _require_name("service account namespace", namespace)
    _require_name("service account", name)
    if "/" in name or ":" in name or "/" in namespace or ":" in namespace:
        raise SCCAccessError("invalid service account %s/%s" % (excerpt(namespace), excerpt(name)))
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def parse_service_account(value, default_namespace=None):
    """``"ns/name"``, ``"system:serviceaccount:ns:name"`` or ``"name"`` (in ``default_namespace``, like ``oc -z``)."""
    if not isinstance(value, str):
        raise SCCAccessError("service account must be a string, got %s" % type(value).__name__)
    if value.startswith(SERVICE_ACCOUNT_PREFIX):
        parts = value[len(SERVICE_ACCOUNT_PREFIX) :].split(":")
        if len(parts) != 2:
            raise SCCAccessError("invalid service account user name %s" % excerpt(value))
        return service_account_subject(parts[0], parts[1])
    if "/" in value:
        namespace, _sep, name = value.partition("/")
        return service_account_subject(namespace, name)
    if not default_namespace:
        raise SCCAccessError("service account %s needs a namespace: write namespace/name" % excerpt(value))
    return service_account_subject(default_namespace, value)


def user_subject(name):
    """A User subject; ``system:serviceaccount:ns:name`` becomes a ServiceAccount subject, as in oc buildSubjects."""
    _require_name("user", name)
    if name.startswith(SERVICE_ACCOUNT_PREFIX):
        return parse_service_account(name)
    return {"kind": "User", "apiGroup": RBAC_API_GROUP, "name": name}


def group_subject(name):
    _require_name("group", name)
    return {"kind": "Group", "apiGroup": RBAC_API_GROUP, "name": name}


def parse_subjects(service_accounts=(), users=(), groups=(), default_namespace=None):
    """Subjects from option lists, in order, without duplicates."""
    subjects = [parse_service_account(v, default_namespace) for v in service_accounts or ()]
    subjects += [user_subject(v) for v in users or ()]
    subjects += [group_subject(v) for v in groups or ()]
    unique = []
    for subject in subjects:
        if not any(same_subject(subject, seen) for seen in unique):
            unique.append(subject)
    return unique


def same_subject(left, right):
    """oc's match: kind, name and namespace equal (a missing namespace counts as empty)."""
    return left.get("kind") == right.get("kind") and left.get("name") == right.get("name") and (left.get("namespace") or "") == (right.get("namespace") or "")


def describe_subject(subject):
    if subject.get("kind") == "ServiceAccount":
        return "ServiceAccount %s/%s" % (subject.get("namespace"), subject.get("name"))
    return "%s %s" % (subject.get("kind"), subject.get("name"))


def is_broad_subject(subject):
    name = subject.get("name") or ""
    if subject.get("kind") == "Group":
        return name in BROAD_GROUPS or name.startswith(BROAD_GROUP_PREFIXES)
    if subject.get("kind") == "User":
        return name in BROAD_USERS
    return False


def check_broad_subjects(subjects, allow_broad=False):
    """The broad subjects among ``subjects``; raises BroadSubjectError when there are any and not ``allow_broad``."""
    broad = [s for s in subjects if is_broad_subject(s)]
    if broad and not allow_broad:
        names = ", ".join(describe_subject(s) for s in broad)
        raise BroadSubjectError(
            "refusing to grant an SCC to %s: the grant would reach every user or service account it covers; "
            "grant it to specific service accounts, or allow broad subjects explicitly" % names,
            broad,
        )
    return broad


# ------------------------------------------------------------------------------------------------ bindings
def _check_binding(binding, scc):
    ref = binding.get("roleRef") or {}
    if binding.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
        raise SCCAccessError("expected a RoleBinding or ClusterRoleBinding, got %s" % excerpt(binding.get("kind")))
    if scc is not None and (ref.get("kind") != "ClusterRole" or ref.get("name") != rbac_name(scc)):
        name = (binding.get("metadata") or {}).get("name")
        raise SCCAccessError("%s %s points to %s %s, not to ClusterRole %s" % (binding.get("kind"), name, ref.get("kind"), ref.get("name"), rbac_name(scc)))


def add_subject(binding, subject, scc=None, namespace=None):
    """``(changed, binding)`` with ``subject`` appended (a new binding when ``binding`` is None, then ``scc`` is needed).

    Like oc AddRole: an existing binding of that name pointing to another role is an error.
    """
    if binding is None:
        if scc is None:
            raise SCCAccessError("the SCC name is needed to create a new binding")
        return True, scc_binding(scc, namespace, [subject])
    _check_binding(binding, scc)
    subjects = binding.get("subjects") or []
    if any(same_subject(subject, s) for s in subjects):
        return False, copy.deepcopy(binding)
    result = copy.deepcopy(binding)
    result["subjects"] = copy.deepcopy(subjects) + [dict(subject)]
    return True, result


def remove_subject(binding, subject, scc=None):
    """``(changed, binding or None)``: ``subject`` removed; None when nothing is left and the binding may be deleted.

    Like oc RemoveRole, except that a missing subject is not an error (idempotent ``state: absent``). A binding whose
    autoupdate annotation is ``"false"`` is kept, empty.
    """
    if binding is None:
        return False, None
    _check_binding(binding, scc)
    subjects = binding.get("subjects") or []
    kept = [copy.deepcopy(s) for s in subjects if not same_subject(subject, s)]
    if len(kept) == len(subjects):
        return False, copy.deepcopy(binding)
    annotations = (binding.get("metadata") or {}).get("annotations") or {}
    if not kept and annotations.get(AUTOUPDATE_ANNOTATION) != "false":
        return True, None
    result = copy.deepcopy(binding)
    result["subjects"] = kept
    return True, result


def edit_binding(binding, subjects, scc, namespace, state):
    """``(binding after, edited)``: every subject added (``state=present``) or removed (``absent``) from ``binding``
    (None: none exists; after: None when it is to be deleted)."""
    edited = False
    for subject in subjects:
        if state == "present":
            done, binding = add_subject(binding, subject, scc, namespace)
        else:
            done, binding = remove_subject(binding, subject, scc)
        edited = edited or done
        if binding is None:
            break
    return binding, edited


def binding_write(before, after):
    """The one request that turns ``before`` into ``after``: ``("delete" | "create" | "patch" | None, body)``. The
    delete and the patch carry ``before``'s resourceVersion, so a subject someone added meanwhile makes them fail
    (409) instead of being dropped."""
    if after is None and before is None or after == before:
        return None, None
    if after is None:
        return "delete", before["metadata"]["resourceVersion"]
    if before is None:
        return "create", after
    return "patch", {"metadata": {"resourceVersion": before["metadata"]["resourceVersion"]}, "subjects": after.get("subjects") or []}


# --------------------------------------------------------------------------------------- legacy SCC lists
def legacy_entry(subject):
    """``(list name, entry)`` of a subject in an SCC's legacy ``users``/``groups`` lists."""
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return "users", "%s%s:%s" % (SERVICE_ACCOUNT_PREFIX, subject.get("namespace"), subject.get("name"))
    if kind == "User":
        return "users", subject.get("name")
    if kind == "Group":
        return "groups", subject.get("name")
    raise SCCAccessError("unknown subject kind %s" % excerpt(kind))


def remove_from_scc_lists(scc_obj, subject):
    """``(changed, json_patch)`` removing ``subject`` from the SCC's legacy ``users``/``groups`` list.

    The patch starts with a ``test`` of the whole list, so it fails if someone changed the list in between instead
    of overwriting that change. This is the one edit allowed on default SCCs: taking out our own legacy grant (KubeVirt
    does the same on ``privileged``); it never adds entries.
    """
    list_name, entry = legacy_entry(subject)
    current = scc_obj.get(list_name)
    if not isinstance(current, list) or entry not in current:
        return False, []
    kept = [value for value in current if value != entry]
    path = "/%s" % list_name
    return True, [{"op": "test", "path": path, "value": list(current)}, {"op": "replace", "path": path, "value": kept}]


GRANT_SUBJECT_KEYS = ("service_accounts", "users", "groups")


def _grant_binding(grant):
    """The binding a grant (an scc_relax_grants item) lives in: (SCC, cluster-wide, namespace)."""
    cluster_wide = bool(grant.get("cluster_wide"))
    return grant.get("scc"), cluster_wide, "" if cluster_wide else (grant.get("namespace") or "")


def withdrawn_grants(previous, current):
    """What to take back: the grants of ``previous`` minus every subject that ``current`` still grants through the
    same binding (same SCC, same namespace or cluster-wide), as written (``app`` and ``ns/app`` are not matched).
    Grants left with no subject are dropped, so a subject granted before and now is never taken back, not even
    for a moment."""
    kept = {}
    for grant in current or ():
        subjects = kept.setdefault(_grant_binding(grant), {key: set() for key in GRANT_SUBJECT_KEYS})
        for key in GRANT_SUBJECT_KEYS:
            subjects[key].update(grant.get(key) or ())
    withdrawn = []
    for grant in previous or ():
        still = kept.get(_grant_binding(grant), {})
        left = {key: [s for s in grant.get(key) or () if s not in still.get(key, ())] for key in GRANT_SUBJECT_KEYS}
        if any(left.values()):
            withdrawn.append(dict(grant, **left))
    return withdrawn


# ------------------------------------------------------------------------------------------------- who may use


def _has(values, wanted):
    return wanted in (values or ()) or "*" in (values or ())


def rule_grants_use(rule, scc):
    """Whether one RBAC rule allows the verb ``use`` on SCC ``scc`` (wildcards included, as the authorizer reads it)."""
    names = rule.get("resourceNames") or ()
    return (
        _has(rule.get("verbs"), "use")
        and _has(rule.get("apiGroups"), "security.openshift.io")
        and _has(rule.get("resources"), "securitycontextconstraints")
        and (not names or scc in names)
    )


def who_may_use(scc, roles=(), cluster_roles=(), role_bindings=(), cluster_role_bindings=()):
    """Every subject that may use SCC ``scc`` (a dict), sorted: ``{"kind", "name", "namespace", "scope", "via"}``.

    ``scope`` is ``cluster`` (a ClusterRoleBinding, or the SCC's own ``users``/``groups`` lists) or the namespace
    of the RoleBinding whose pods may use it. ``via`` names the grant: ``ClusterRoleBinding/<b> -> ClusterRole/<r>``,
    ``RoleBinding/<ns>/<b> -> Role/<r>`` or ``SCC users`` / ``SCC groups``. ``broad`` marks subjects that stand for
    every user or service account (system:authenticated, system:serviceaccounts, ...)."""
    name = (scc.get("metadata") or {}).get("name")
    granting_roles = {
        ("Role", (r.get("metadata") or {}).get("namespace"), (r.get("metadata") or {}).get("name"))
        for r in roles
        if any(rule_grants_use(rule, name) for rule in r.get("rules") or ())
    }
    granting_roles |= {
        ("ClusterRole", None, (r.get("metadata") or {}).get("name"))
        for r in cluster_roles
        if any(rule_grants_use(rule, name) for rule in r.get("rules") or ())
    }
    found = []

    def add(kind, subject_name, namespace, scope, via):
        broad = (kind == "Group" and (subject_name in BROAD_GROUPS or subject_name.startswith(BROAD_GROUP_PREFIXES))) or (
            kind == "User" and subject_name in BROAD_USERS
        )
        found.append({"kind": kind, "name": subject_name, "namespace": namespace, "scope": scope, "via": via, "broad": broad})

    for binding, cluster_wide in [(b, False) for b in role_bindings] + [(b, True) for b in cluster_role_bindings]:
        meta = binding.get("metadata") or {}
        ref = binding.get("roleRef") or {}
        namespace = None if cluster_wide else meta.get("namespace")
        role = (ref.get("kind"), None if ref.get("kind") == "ClusterRole" else namespace, ref.get("name"))
        if role not in granting_roles:
            continue
        where = "ClusterRoleBinding/%s" % meta.get("name") if cluster_wide else "RoleBinding/%s/%s" % (namespace, meta.get("name"))
        via = "%s -> %s/%s" % (where, ref.get("kind"), ref.get("name"))
        for subject in binding.get("subjects") or ():
            kind = subject.get("kind")
            subject_namespace = (subject.get("namespace") or namespace) if kind == "ServiceAccount" else None
            add(kind, subject.get("name") or "", subject_namespace, "cluster" if cluster_wide else namespace, via)
    for user in scc.get("users") or ():
        if user.startswith(SERVICE_ACCOUNT_PREFIX) and user.count(":") == 3:
            _prefix, _sa, namespace, account = user.split(":")
            add("ServiceAccount", account, namespace, "cluster", "SCC users")
        else:
            add("User", user, None, "cluster", "SCC users")
    for group in scc.get("groups") or ():
        add("Group", group, None, "cluster", "SCC groups")
    return sorted(found, key=lambda s: (s["kind"], s["namespace"] or "", s["name"], s["scope"] or "", s["via"]))


# ------------------------------------------------------------------------------------------ a grant's plan
# The Pod Security level an SCC corresponds to (OpenShift's label syncer maps SCCs the same way, scc.md 6.1/8).
PSA_LEVEL_OF_SCC = {
    "restricted-v2": "restricted",
    "restricted": "baseline",
    "nonroot-v2": "restricted",
    "nonroot": "baseline",
    "anyuid": "baseline",
}


def psa_level(scc):
    """The Pod Security level that admits what ``scc`` admits: anything not known to be narrower is privileged."""
    return PSA_LEVEL_OF_SCC.get(scc, "privileged")


def choose_scc(scc, recommendation):
    """``(scc, warnings)``: the SCC to grant, ``scc`` as given or else the one ``recommendation`` (a
    ``recommend.Recommendation`` or None) names, and a warning when the given one is broader than needed."""
    chosen = scc or (recommendation.scc if recommendation else None)
    if not chosen:
        raise SCCAccessError("no SCC to grant: set scc, or for_workload with a pod template some default SCC admits")
    warnings = []
    if recommendation and scc and recommendation.scc and recommendation.scc != scc:
        warnings.append(f"the workload needs no more than SCC {recommendation.scc}, but {scc} is granted")
    return chosen, warnings


def binding_namespace(subjects, namespace=None, cluster_wide=False):
    """The namespace of the grant's RoleBinding, or None for a ClusterRoleBinding (``cluster_wide``)."""
    if cluster_wide:
        return None
    if namespace:
        # admission checks `use` in the pod's namespace: a RoleBinding elsewhere grants its pods nothing
        elsewhere = sorted(
            f"{s['namespace']}/{s['name']}" for s in subjects if s.get("kind") == "ServiceAccount" and s.get("namespace") not in (None, namespace)
        )
        if elsewhere:
            raise SCCAccessError(
                f"ServiceAccount {', '.join(elsewhere)} run pods outside namespace {namespace}: a RoleBinding in {namespace} does not let "
                "them use the SCC (admission checks the pod's namespace); use their namespace or cluster_wide=true"
            )
        return namespace
    namespaces = {s.get("namespace") for s in subjects if s.get("kind") == "ServiceAccount"}
    if len(namespaces) == 1 and all(s.get("kind") == "ServiceAccount" for s in subjects):
        return namespaces.pop()
    raise SCCAccessError(
        "set namespace (a RoleBinding there) or cluster_wide=true (a ClusterRoleBinding): users, groups and service "
        "accounts of several namespaces have no namespace of their own"
    )


def remove_subjects_from_scc_lists(scc_obj, subjects):
    """``(entries removed, json_patch)`` taking every subject out of the SCC's legacy lists in one request: the
    patches of ``remove_from_scc_lists`` one after the other, each testing the list as the one before left it."""
    removed, patch = [], []
    for subject in subjects:
        changed, ops = remove_from_scc_lists(scc_obj, subject)
        if changed:
            scc_obj = dict(scc_obj, **{ops[-1]["path"][1:]: ops[-1]["value"]})
            removed.append(legacy_entry(subject)[1])
            patch.extend(ops)
    return removed, patch


# What a grant through RBAC reads before it writes: ``openshift`` (truthy: OpenShift's own SCC API, not a CRD), the
# SCC object (None: it does not exist) and whether the ClusterRole ``system:openshift:scc:<scc>`` exists.
GrantObserved = namedtuple("GrantObserved", ["openshift", "scc_object", "cluster_role"])

# The writes of a grant or revoke: ``cluster_role`` the ClusterRole to create (None: none), the binding of kind
# ``binding_kind`` in ``namespace`` to edit (``edit_binding``, read again at the write), and ``legacy_patch`` the one
# JSON patch of the SCC taking ``legacy_removed`` out of its legacy lists (empty: none); ``warnings`` for the result.
GrantPlan = namedtuple("GrantPlan", ["scc", "state", "binding_kind", "namespace", "subjects", "cluster_role", "legacy_removed", "legacy_patch", "warnings"])


def plan_grant(scc, state, namespace, subjects, observed, remove_legacy=False):
    """The ``GrantPlan`` of granting (``state=present``) or revoking (``absent``) ``use`` of ``scc`` to ``subjects``
    through a binding in ``namespace`` (None: cluster-wide), from ``observed`` (a ``GrantObserved``)."""
    warnings = []
    if observed.scc_object is None:
        if state == "present":
            raise SCCAccessError(f"SecurityContextConstraints {scc} does not exist")
        # Taking back a grant of an SCC deleted meanwhile: its binding may still name the subjects.
        warnings.append(f"SecurityContextConstraints {scc} does not exist: only its binding is cleaned up")
    if not observed.openshift:
        warnings.append(crd_only_warning("grant", state))
    removed, patch = [], []
    if state == "absent" and remove_legacy and observed.scc_object is not None:
        removed, patch = remove_subjects_from_scc_lists(observed.scc_object, subjects)
    return GrantPlan(
        scc=scc,
        state=state,
        binding_kind="RoleBinding" if namespace else "ClusterRoleBinding",
        namespace=namespace,
        subjects=list(subjects),
        cluster_role=scc_cluster_role(scc) if state == "present" and not observed.cluster_role else None,
        legacy_removed=removed,
        legacy_patch=patch,
        warnings=warnings,
    )
