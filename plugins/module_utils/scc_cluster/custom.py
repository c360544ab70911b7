# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the scc module: create, update or delete a custom SCC rendered by ``scc/custom.py``.

Server-side apply as the collection's field manager (a server-side dry run in check mode, through the k8s adapter),
taking back the fields the spec sets from anyone who changed them; an SCC of the same name that this module did not
create is never adopted, changed or deleted, and the names of OpenShift's default SCCs are refused before any request.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import detect_openshift, diff_view
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import public
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import custom
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.access import crd_only_warning


def spec_from_params(params):
    """The compact spec the module options describe (options left unset are not part of it)."""
    return {key: params[key] for key in custom.SPEC_KEYS if params.get(key) is not None}


def plan(params):
    """``(spec, forced_by, recommendation)`` for the module options: the compact spec, or the one ``for_workload`` forces."""
    workload = params.get("for_workload")
    if workload is None:
        return custom.normalize_spec(spec_from_params(params)), None, None
    given = sorted(key for key in ("base",) + custom.RELAXATION_KEYS if params.get(key) is not None)
    if given:
        raise custom.CustomSCCError(
            "for_workload derives every relaxation from the workload on top of restricted-v2; do not combine it with %s" % ", ".join(given)
        )
    if not isinstance(workload, (dict, list)):
        raise custom.CustomSCCError("for_workload must be a workload (a mapping) or a list of workloads")
    derived = custom.spec_for_workload(workload, custom.validate_name(params.get("name")), params.get("description"))
    return derived.spec, derived.forced_by, derived.recommendation


def require_scc_api(cluster):
    """Look the SecurityContextConstraints resource up, or fail clearly on a cluster without the SCC API."""
    try:
        cluster.resource(custom.KIND, custom.API_VERSION)
    except K8sError as exc:
        raise custom.CustomSCCError(
            f"this cluster has no SecurityContextConstraints API ({custom.API_VERSION}): SCCs exist only on OpenShift, so there is "
            f"no custom SCC to create or remove ({exc})"
        ) from exc


def execute(module):
    """Entry point of the scc module: validate and render first (no request), then apply or delete."""
    params = module.params
    name = custom.validate_name(params.get("name"))
    result = {"changed": False, "name": name, "warnings": []}
    if params["state"] == "present":
        spec, forced_by, recommendation = plan(params)
        definition = custom.render(spec)
        result.update(spec=spec, definition=definition, relaxations=custom.relaxations(spec))
        if forced_by is not None:
            result.update(forced_by=forced_by, recommendation=recommendation)
            if not result["relaxations"]:
                result["warnings"].append("the workload fits restricted-v2, which every authenticated user may use: it needs no custom SCC")
    cluster = module.cluster
    require_scc_api(cluster)
    before = cluster.get(custom.KIND, name, None, custom.API_VERSION)
    if params["state"] == "present":
        custom.ensure_ours(before, name, "change")
        # Forced: the fields the spec sets are the module's; anyone else's edit of them is reverted.
        changed, before, after = cluster.apply(definition, force_conflicts=True)
    else:
        custom.ensure_ours(before, name, "delete")
        changed, before, after = cluster.delete(custom.KIND, name, None, custom.API_VERSION) if before is not None else (False, None, None)
    if not detect_openshift(cluster.client):
        result["warnings"].append(crd_only_warning("SCC", params["state"]))
    result.update(changed=changed, scc=public(after), diff=diff_view(before, after))
    return result
