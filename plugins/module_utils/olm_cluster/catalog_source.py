# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_catalog_source module: apply or delete a CatalogSource and wait for OLM's verdict.

The pure rules (definition, verdict) are in ``olm/catalog_source.py``; this file only talks to the API server
through the k8s adapter (server-side apply, server-side dry run in check mode, watch-based waiting).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import diff_view
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import public
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import (
    API_VERSION,
    KIND,
    REGISTRY_POD_LABEL,
    VERDICT_FAILED,
    VERDICT_READY,
    catalog_source_definition,
    catalog_source_verdict,
    connection_state,
    pruned_fields,
    registry_pod_problem,
    registry_pod_unscheduled,
    settled,
)


def _ref(params):
    return f"{params['namespace']}/{params['name']}"


def _wait_settled(module, result, deadline):
    """Watch the CatalogSource until OLM's verdict settles; for an image catalog, watch OLM's registry pods beside it:
    one that will not serve by itself fails the wait at once, with the container's reason."""
    p = module.params
    cluster = module.cluster
    sources = [Source("catalog", API_VERSION, KIND, p["namespace"], name=p["name"])]
    if p.get("image"):
        # optional: a user who may not list pods still gets OLM's verdict on the CatalogSource
        sources.append(Source("pods", "v1", "Pod", p["namespace"], label_selector=f"{REGISTRY_POD_LABEL}={p['name']}", optional=True))

    def decide(snapshot):
        obj = snapshot["catalog"].get(p["name"])
        if obj is not None and settled(obj):
            return obj, None
        problem = registry_pod_problem(list((snapshot.get("pods") or {}).values()))
        return (obj, problem) if problem is not None else None

    def last_seen(snapshot):
        return {"catalog": snapshot["catalog"].get(p["name"]), "pods": list((snapshot.get("pods") or {}).values())}

    try:
        obj, problem = observe(
            cluster.client,
            sources,
            decide,
            deadline.remaining(),
            on_timeout=last_seen,
            resources={"catalog": cluster.resource(KIND, API_VERSION)},
        )
    except ResourceTimeoutError as exc:
        last, pods = exc.result["catalog"], exc.result["pods"]
        verdict = catalog_source_verdict(last)[1]
        unscheduled = registry_pod_unscheduled(pods)
        raise K8sError(
            f"Timed out after {p['wait_timeout']}s waiting for CatalogSource {_ref(p)} to become READY: {verdict}"
            + (f"; {unscheduled}" if unscheduled else ""),
            result=dict(result, catalog_source=public(last), state=connection_state(last), duration=deadline.elapsed()),
        ) from None
    if problem is not None:
        reason, message = problem
        raise K8sError(
            f"CatalogSource {_ref(p)}: OLM's registry pod cannot serve the catalog ({reason}): {message}",
            result=dict(result, catalog_source=public(obj), state=connection_state(obj), duration=deadline.elapsed()),
        )
    return obj


def present(module):
    """Apply the CatalogSource and, with ``wait``, watch it until OLM reports READY (or a failure)."""
    p = module.params
    definition = catalog_source_definition(
        p["name"],
        p["namespace"],
        address=p.get("address"),
        image=p.get("image"),
        display_name=p.get("display_name"),
        publisher=p.get("publisher"),
        update_interval=p.get("update_interval"),
        grpc_pod_config=p.get("grpc_pod_config"),
        priority=p.get("priority"),
        pull_secrets=p.get("pull_secrets"),
    )
    changed, before, after = module.cluster.apply(definition, bool(p.get("force_conflicts")), what=f"CatalogSource {_ref(p)}")
    dropped = pruned_fields(definition["spec"], (after or {}).get("spec"))
    if dropped:
        raise K8sError(
            f"The API server dropped {', '.join(dropped)} from CatalogSource {_ref(p)}: the CatalogSource CRD on this cluster does not know "
            "these fields (an older OLM, or a misspelled key)",
            result={"changed": changed, "catalog_source": public(after)},
        )
    result = {"changed": changed, "catalog_source": public(after), "state": connection_state(after)}
    if module._diff:
        result["diff"] = diff_view(before, after)
    if module.check_mode or not p.get("wait"):
        return result

    deadline = Deadline(p["wait_timeout"])
    obj = _wait_settled(module, result, deadline)
    status, message = catalog_source_verdict(obj)
    result.update(catalog_source=public(obj), state=connection_state(obj), duration=deadline.elapsed())
    if status == VERDICT_FAILED:
        raise K8sError(f"CatalogSource {_ref(p)} is not healthy: {message}", result=result)
    if status != VERDICT_READY:  # settled() only returns on ready or failed
        raise K8sError(f"CatalogSource {_ref(p)}: unexpected state: {message}", result=result)
    return result


def remove(module):
    """Delete the CatalogSource if it exists and, with ``wait``, watch until it is gone."""
    p = module.params
    cluster = module.cluster
    changed, before, after = cluster.delete(KIND, p["name"], p["namespace"], API_VERSION)
    result = {"changed": changed, "catalog_source": public(after), "state": None}
    if module._diff:
        result["diff"] = diff_view(before, None)
    if changed and p.get("wait") and not module.check_mode:
        timer = Deadline()
        try:
            resource = cluster.resource(KIND, API_VERSION)
            watch_until(cluster.client, API_VERSION, KIND, p["name"], p["namespace"], absent, p["wait_timeout"], resource=resource)
        except ResourceTimeoutError as exc:
            raise K8sError(
                f"Timed out after {p['wait_timeout']}s waiting for CatalogSource {_ref(p)} to be deleted",
                result=dict(result, catalog_source=public(exc.last_object), duration=exc.duration),
            ) from None
        result["catalog_source"] = None
        result["duration"] = timer.elapsed()
    return result


def execute(module):
    """Entry point of the olm_catalog_source module."""
    if module.params["state"] == "absent":
        return remove(module)
    return present(module)
