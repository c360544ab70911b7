# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the scc_access module: grant or revoke the ``use`` of an SCC through RBAC, as
``oc adm policy add-scc-to-user/-group`` does in OpenShift 4, with the Pod Security fallback on other clusters.

The rules (binding content, subjects, broad subjects, legacy lists, the least-privileged SCC) are pure code in
``scc/access.py`` and ``scc/recommend.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import detect_openshift, diff_view
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import create_object, delete_object, get_object, patch_object
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pod_security as ps
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.recommend import namespace_context, recommend_scc
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import pin, pod_security

SCC_API = "security.openshift.io/v1"
SCC_KIND = "SecurityContextConstraints"

# The Pod Security level an SCC corresponds to (OpenShift's label syncer maps SCCs the same way, scc.md 6.1/8).
PSA_LEVEL_OF_SCC = {
    "restricted-v2": "restricted",
    "restricted": "baseline",
    "nonroot-v2": "restricted",
    "nonroot": "baseline",
    "anyuid": "baseline",
}

# Read-change-write rounds of a binding before a conflict fails the module.
BINDING_ATTEMPTS = 5


def psa_level(scc):
    """The Pod Security level that admits what ``scc`` admits: anything not known to be narrower is privileged."""
    return PSA_LEVEL_OF_SCC.get(scc, "privileged")


def _binding_namespace(params, subjects):
    if params.get("cluster_wide"):
        return None
    if params.get("namespace"):
        namespace = params["namespace"]
        # admission checks `use` in the pod's namespace: a RoleBinding elsewhere grants its pods nothing
        elsewhere = sorted(
            f"{s['namespace']}/{s['name']}" for s in subjects if s.get("kind") == "ServiceAccount" and s.get("namespace") not in (None, namespace)
        )
        if elsewhere:
            raise KubeforgeError(
                f"ServiceAccount {', '.join(elsewhere)} run pods outside namespace {namespace}: a RoleBinding in {namespace} does not let "
                "them use the SCC (admission checks the pod's namespace); use their namespace or cluster_wide=true"
            )
        return namespace
    namespaces = {s.get("namespace") for s in subjects if s.get("kind") == "ServiceAccount"}
    if len(namespaces) == 1 and all(s.get("kind") == "ServiceAccount" for s in subjects):
        return namespaces.pop()
    raise KubeforgeError(
        "set namespace (a RoleBinding there) or cluster_wide=true (a ClusterRoleBinding): users, groups and service "
        "accounts of several namespaces have no namespace of their own"
    )


def _summary(binding):
    if binding is None:
        return None
    meta = binding.get("metadata") or {}
    return {"kind": binding.get("kind"), "name": meta.get("name"), "namespace": meta.get("namespace"), "subjects": binding.get("subjects") or []}


def _workload_namespace(params, subjects):
    """The namespace the workload's pods run in: its own, the module's, or that of its only service accounts."""
    workload = params.get("for_workload")
    own = ((workload.get("metadata") or {}).get("namespace")) if isinstance(workload, dict) else None
    namespaces = {s.get("namespace") for s in subjects if s.get("kind") == "ServiceAccount"}
    return own or params.get("namespace") or (namespaces.pop() if len(namespaces) == 1 else None)


def _namespace_context(client, params, subjects):
    """The namespace's UID/group ranges and MCS level, so that values inside them count as admission counts them;
    nothing when the namespace is unknown, missing or unreadable (values are then treated as outside)."""
    name = _workload_namespace(params, subjects)
    if not name:
        return {}
    try:
        namespace = get_object(client, find_resource(client, "Namespace", "v1"), name)
    except K8sError:
        return {}
    return namespace_context(((namespace or {}).get("metadata") or {}).get("annotations"))


def apply(client, params, check_mode):
    """Grant (``state=present``) or revoke (``absent``) ``use`` of the SCC; returns the module result."""
    subjects = access.parse_subjects(params.get("service_accounts"), params.get("users"), params.get("groups"), params.get("namespace"))
    result = {"changed": False, "warnings": []}
    recommendation = None
    if params.get("for_workload"):
        recommendation = recommend_scc(params["for_workload"], **_namespace_context(client, params, subjects))
        result["recommendation"] = recommendation._asdict()
    scc = params.get("scc") or (recommendation.scc if recommendation else None)
    if not scc:
        raise KubeforgeError("no SCC to grant: set scc, or for_workload with a pod template some default SCC admits")
    result["scc"] = scc
    if recommendation and params.get("scc") and recommendation.scc and recommendation.scc != params["scc"]:
        result["warnings"].append(f"the workload needs no more than SCC {recommendation.scc}, but {params['scc']} is granted")
    pins, pin_warnings = pin.prepare(client, params, scc, subjects)  # reads only: fails before anything is granted
    result["warnings"].extend(pin_warnings)
    if not subjects:
        if recommendation is None and not pins:
            raise KubeforgeError("name at least one of service_accounts, users, groups or pin_workloads")
        return pin.write(client, pins, scc, result)  # a recommendation and/or pins only
    if params.get("state", "present") == "present":  # revoking a broad grant is always allowed
        access.check_broad_subjects(subjects, params.get("allow_broad_subjects"))
    namespace = _binding_namespace(params, subjects)

    evidence = detect_openshift(client)
    result["openshift"] = bool(evidence)
    if not evidence and params.get("fallback") == "pod_security":
        return pin.write(client, pins, scc, _pod_security_fallback(client, params, check_mode, scc, namespace, result))
    try:
        scc_resource = find_resource(client, SCC_KIND, SCC_API)
    except K8sError as exc:
        raise KubeforgeError(
            f"this cluster has no SecurityContextConstraints API (not OpenShift): nothing to grant; set fallback=pod_security "
            f"to relax the namespace's Pod Security level instead ({exc})"
        ) from exc
    scc_obj = get_object(client, scc_resource, scc)
    if scc_obj is None and params["state"] == "present":
        raise KubeforgeError(f"SecurityContextConstraints {scc} does not exist")
    if scc_obj is None:
        # Taking back a grant of an SCC deleted meanwhile: its binding may still name the subjects.
        result["warnings"].append(f"SecurityContextConstraints {scc} does not exist: only its binding is cleaned up")
    if not evidence:
        result["warnings"].append(access.crd_only_warning("grant", params["state"]))

    roles = find_resource(client, "ClusterRole", access.RBAC_API_VERSION)
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    bindings = find_resource(client, kind, access.RBAC_API_VERSION)
    changed = False
    if params["state"] == "present" and get_object(client, roles, access.rbac_name(scc)) is None:
        create_object(client, roles, access.scc_cluster_role(scc))
        result["created_cluster_role"] = access.rbac_name(scc)
        changed = True
    # Read, change, write guarded by the resourceVersion; a conflict (someone wrote meanwhile, or a read served
    # from a cache that lags, as ansible-operator's proxy does) reads again.
    for attempt in range(BINDING_ATTEMPTS):
        before = get_object(client, bindings, access.binding_name(scc), namespace)
        binding, edited = before, False
        for subject in subjects:
            if params["state"] == "present":
                done, binding = access.add_subject(binding, subject, scc, namespace)
            else:
                done, binding = access.remove_subject(binding, subject, scc)
            edited = edited or done
            if binding is None:
                break
        if binding is before or binding == before:
            break
        try:
            _write_binding(client, bindings, before, binding, namespace)
            break
        except K8sError as exc:
            if exc.status not in (404, 409) or attempt == BINDING_ATTEMPTS - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    changed = changed or edited
    if params["state"] == "absent":
        result["removed_from_scc_lists"] = (
            _remove_legacy(client, scc_resource, scc_obj, subjects, params, result) if params.get("remove_from_scc_lists") and scc_obj else []
        )
        changed = changed or bool(result["removed_from_scc_lists"])

    result.update(
        changed=changed, binding=_summary(binding), diff=diff_view(before, binding, key="binding")
    )
    return pin.write(client, pins, scc, result)


def _write_binding(client, bindings, before, binding, namespace):
    name = access.binding_name_of(binding or before)
    if binding is None:
        # Only the version read: a subject added meanwhile makes the delete fail (409) and the loop read again.
        delete_object(client, bindings, name, namespace, resource_version=before["metadata"]["resourceVersion"])
    elif before is None:
        create_object(client, bindings, binding)
    else:
        # The resourceVersion makes the update fail instead of dropping a subject someone added meanwhile.
        patch = {"metadata": {"resourceVersion": before["metadata"]["resourceVersion"]}, "subjects": binding.get("subjects") or []}
        patch_object(client, bindings, name, patch, namespace)


def _remove_legacy(client, scc_resource, scc_obj, subjects, params, result):
    removed = []
    for subject in subjects:
        changed, json_patch = access.remove_from_scc_lists(scc_obj, subject)
        if changed:
            scc_obj = patch_object(client, scc_resource, params["scc"] or result["scc"], json_patch, patch_type="json").after or scc_obj
            removed.append(access.legacy_entry(subject)[1])
    return removed


def _pod_security_fallback(client, params, check_mode, scc, namespace, result):
    if not namespace:
        raise KubeforgeError("the Pod Security fallback needs a namespace: Pod Security levels are set per namespace")
    level = psa_level(scc)
    if params["state"] == "present":
        # the level is the namespace's, shared by every grant there: never tightened by a narrower SCC's grant
        current = ((get_object(client, find_resource(client, "Namespace", "v1"), namespace) or {}).get("metadata") or {}).get("labels") or {}
        have = current.get(ps.LABEL_PREFIX + "enforce")
        if have in ps.LEVELS and ps.LEVELS.index(have) < ps.LEVELS.index(level):
            level = have
    psa_params = {"namespace": namespace, "state": params["state"], "enforce": level, "enforce_version": "latest", "label_sync": None}
    for mode in ("audit", "warn", "audit_version", "warn_version"):
        psa_params[mode] = None
    outcome = pod_security.apply(client, psa_params, check_mode)
    result["warnings"].append(
        f"not OpenShift: instead of granting SCC {scc}, namespace {namespace} enforces Pod Security level {level}, which "
        "applies to every workload of the namespace, not only the named service accounts"
    )
    result.update(
        changed=outcome["changed"], fallback={"namespace": namespace, "enforce": level, "labels": outcome["labels"], "violations": outcome["violations"]}
    )
    if "diff" in outcome:
        result["diff"] = outcome["diff"]
    return result


def execute(module):
    """The module's entry point (``KubeforgeModule.run``)."""
    return apply(module.client, module.params, module.check_mode)
