# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the scc_info module: the SecurityContextConstraints and who may use each, from one LIST of SCCs
and one of each RBAC kind (``scc/access.py`` ``who_may_use`` decides)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import public
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access, custom
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster.access import SCC_API, SCC_KIND

RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def scc_record(scc, rbac):
    """What scc_info reports of one SCC, given ``rbac`` (``{kind: [objects]}``)."""
    meta = scc.get("metadata") or {}
    subjects = access.who_may_use(
        scc, rbac.get("Role", ()), rbac.get("ClusterRole", ()), rbac.get("RoleBinding", ()), rbac.get("ClusterRoleBinding", ())
    )
    return {
        "name": meta.get("name"),
        "priority": scc.get("priority"),
        "default": access.is_default_scc(meta.get("name")),
        "created_by_kubeforge": custom.is_ours(scc),
        "who_may_use": subjects,
        "broad": any(s["broad"] for s in subjects),
        "scc": public(scc),
    }


def execute(module):
    """Entry point of the scc_info module."""
    timer = Deadline()
    cluster, name = module.cluster, module.params.get("name")
    if name == "":
        raise KubeforgeError("name must not be empty (omit it to list every SCC)")
    try:
        cluster.resource(SCC_KIND, SCC_API)
    except K8sError as exc:
        raise KubeforgeError(f"this cluster has no SecurityContextConstraints API (not OpenShift): nothing to report ({exc})") from exc
    if name:
        found = cluster.get(SCC_KIND, name, None, SCC_API)
        sccs = [found] if found is not None else []
    else:
        sccs = cluster.list(SCC_KIND, None, SCC_API)
    rbac = {kind: cluster.list(kind, None, access.RBAC_API_VERSION) for kind in RBAC_KINDS} if sccs else {}
    result = {
        "changed": False,
        "sccs": [scc_record(scc, rbac) for scc in sorted(sccs, key=lambda s: (s.get("metadata") or {}).get("name") or "")],
        "duration": timer.elapsed(),
    }
    if name and not sccs:
        result["warnings"] = [f"SecurityContextConstraints {name} does not exist"]
    return result
