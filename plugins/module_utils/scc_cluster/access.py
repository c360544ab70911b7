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

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import (
    HTTP_CONFLICT,
    GuardFailed,
    detect_openshift,
    diff_view,
    retry_guarded,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pod_security as ps
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.recommend import namespace_context, recommend_scc
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import pin, pod_security

SCC_API = "security.openshift.io/v1"
SCC_KIND = "SecurityContextConstraints"

# Seconds (times the conflicts so far) before a binding is read again after a conflict: ansible-operator's proxy
# serves reads from a cache that may not show the write that conflicted yet.
BINDING_REFUSAL_PAUSE = 0.2


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


def _namespace_context(cluster, params, subjects):
    """The namespace's UID/group ranges and MCS level, so that values inside them count as admission counts them;
    nothing when the namespace is unknown, missing or unreadable (values are then treated as outside)."""
    name = _workload_namespace(params, subjects)
    if not name:
        return {}
    try:
        namespace = cluster.get("Namespace", name, None)
    except K8sError:
        return {}
    return namespace_context(((namespace or {}).get("metadata") or {}).get("annotations"))


def apply(cluster, params, check_mode):
    """Grant (``state=present``) or revoke (``absent``) ``use`` of the SCC; returns the module result. What it reads
    decides every write (``access.plan_grant``) before the first one; check mode sends the same writes as dry runs."""
    subjects = access.parse_subjects(params.get("service_accounts"), params.get("users"), params.get("groups"), params.get("namespace"))
    recommendation = None
    if params.get("for_workload"):
        recommendation = recommend_scc(params["for_workload"], **_namespace_context(cluster, params, subjects))
    scc, warnings = access.choose_scc(params.get("scc"), recommendation)
    result = {"changed": False, "warnings": warnings, "scc": scc}
    if recommendation is not None:
        result["recommendation"] = recommendation._asdict()
    pins, pin_warnings = pin.prepare(cluster, params, scc, subjects)  # reads only: fails before anything is granted
    result["warnings"].extend(pin_warnings)
    if not subjects:
        if recommendation is None and not pins:
            raise KubeforgeError("name at least one of service_accounts, users, groups or pin_workloads")
        return pin.write(cluster, pins, scc, result)  # a recommendation and/or pins only
    if params["state"] == "present":  # revoking a broad grant is always allowed
        access.check_broad_subjects(subjects, params.get("allow_broad_subjects"))
    namespace = access.binding_namespace(subjects, params.get("namespace"), params.get("cluster_wide"))

    evidence = detect_openshift(cluster.client)
    result["openshift"] = bool(evidence)
    if not evidence and params.get("fallback") == "pod_security":
        return pin.write(cluster, pins, scc, _pod_security_fallback(cluster, params, check_mode, scc, namespace, result))
    observed = _observe_grant(cluster, scc, evidence, params["state"])
    plan = access.plan_grant(scc, params["state"], namespace, subjects, observed, params.get("remove_from_scc_lists"))
    result["warnings"].extend(plan.warnings)
    return pin.write(cluster, pins, scc, _carry_out(cluster, plan, result))


def _observe_grant(cluster, scc, evidence, state):
    """What ``access.plan_grant`` decides from: the SCC API (refused without one), the SCC and, for a grant, its
    ClusterRole."""
    try:
        cluster.resource(SCC_KIND, SCC_API)
    except K8sError as exc:
        raise KubeforgeError(
            f"this cluster has no SecurityContextConstraints API (not OpenShift): nothing to grant; set fallback=pod_security "
            f"to relax the namespace's Pod Security level instead ({exc})"
        ) from exc
    scc_object = cluster.get(SCC_KIND, scc, None, SCC_API)
    cluster_role = None
    if state == "present" and scc_object is not None:
        cluster_role = cluster.get("ClusterRole", access.rbac_name(scc), None, access.RBAC_API_VERSION) is not None
    return access.GrantObserved(openshift=bool(evidence), scc_object=scc_object, cluster_role=cluster_role)


def _carry_out(cluster, plan, result):
    """The writes of ``plan``, in order: the ClusterRole, the binding, the SCC's legacy lists."""
    changed = False
    if plan.cluster_role is not None:
        cluster.create(plan.cluster_role)
        result["created_cluster_role"] = plan.cluster_role["metadata"]["name"]
        changed = True
    before, binding, edited = _edit_binding(cluster, plan.binding_kind, plan.scc, plan.namespace, plan.subjects, plan.state)
    if plan.state == "absent":
        if plan.legacy_patch:
            cluster.patch(SCC_KIND, plan.scc, plan.legacy_patch, None, SCC_API, patch_type="json")
        result["removed_from_scc_lists"] = plan.legacy_removed
    result.update(
        changed=changed or edited or bool(plan.legacy_removed), binding=_summary(binding), diff=diff_view(before, binding, key="binding")
    )
    return result


def _edit_binding(cluster, kind, scc, namespace, subjects, state):
    """Read the binding, decide (``access.edit_binding``), write guarded by the resourceVersion: ``(before, after,
    edited)``. A conflict - someone wrote meanwhile, or a read served from a cache that lags, as ansible-operator's
    proxy does - or the binding deleted meanwhile reads again."""
    name = access.binding_name(scc)

    def attempt():
        before = cluster.get(kind, name, namespace, access.RBAC_API_VERSION)
        after, edited = access.edit_binding(before, subjects, scc, namespace, state)
        verb, body = access.binding_write(before, after)
        try:
            if verb == "delete":
                cluster.delete(kind, name, namespace, access.RBAC_API_VERSION, resource_version=body)
            elif verb == "create":
                cluster.create(body)
            elif verb == "patch":
                cluster.patch(kind, name, body, namespace, access.RBAC_API_VERSION)
        except K8sError as exc:
            if exc.status == 404:  # deleted since it was read
                raise GuardFailed(f"{kind} {name} was deleted meanwhile") from None
            raise
        return before, after, edited

    where = f"{namespace}/" if namespace else ""
    # a merge patch or a delete with a precondition: 422 is an invalid binding, never a changed one
    return retry_guarded(attempt, f"{kind} {where}{name}", error=KubeforgeError, refusal_pause=BINDING_REFUSAL_PAUSE, guards=(HTTP_CONFLICT,))


def _pod_security_fallback(cluster, params, check_mode, scc, namespace, result):
    if not namespace:
        raise KubeforgeError("the Pod Security fallback needs a namespace: Pod Security levels are set per namespace")
    level = access.psa_level(scc)
    if params["state"] == "present":
        # the level is the namespace's, shared by every grant there: never tightened by a narrower SCC's grant
        current = ((cluster.get("Namespace", namespace, None) or {}).get("metadata") or {}).get("labels") or {}
        have = current.get(ps.LABEL_PREFIX + "enforce")
        if have in ps.LEVELS and ps.LEVELS.index(have) < ps.LEVELS.index(level):
            level = have
    psa_params = {"namespace": namespace, "state": params["state"], "enforce": level, "enforce_version": "latest", "label_sync": None}
    for mode in ("audit", "warn", "audit_version", "warn_version"):
        psa_params[mode] = None
    outcome = pod_security.apply(cluster, psa_params, check_mode)
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
    return apply(module.cluster, module.params, module.check_mode)
