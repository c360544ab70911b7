# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_cluster_catalog module: apply or delete an OLM v1 ClusterCatalog and wait for catalogd.

The pure rules (definition, verdict) are in ``olmv1/cluster_catalog.py``; the apply helper and its conflict handling
are shared with the CatalogSource glue.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import apply_owned, diff_view
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, KindNotFoundError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import delete_object, public
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import pruned_fields
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.cluster_catalog import (
    API_VERSION,
    KIND,
    VERDICT_FAILED,
    base_url,
    cluster_catalog_definition,
    cluster_catalog_verdict,
    resolved_ref,
    settled,
)


def olm_v1_resource(cluster, kind):
    """The discovered resource of an OLM v1 kind, or a clear error when this cluster does not serve the v1 API.

    Only a kind discovery does not list (KindNotFoundError) is blamed on OLM v1: a client that cannot be made (an
    invalid kubeconfig, an API server that does not answer) and a starting API server fail with their own error."""
    try:
        return cluster.resource(kind, API_VERSION)
    except KindNotFoundError as exc:
        raise K8sError(
            f"This cluster does not serve {kind} ({API_VERSION}): OLM v1 (catalogd and operator-controller) is not installed. "
            f"({exc.msg})",
            result=exc.result,
        ) from None


def _facts(obj):
    return {"cluster_catalog": public(obj), "resolved_ref": resolved_ref(obj), "base_url": base_url(obj)}


def present(module):
    """Apply the ClusterCatalog and, with ``wait``, watch it until catalogd serves it (or reports a terminal error)."""
    p = module.params
    definition = cluster_catalog_definition(
        p["name"],
        p["image"],
        poll_interval_minutes=p.get("poll_interval_minutes"),
        priority=p.get("priority"),
        availability_mode=p.get("availability_mode"),
        labels=p.get("labels"),
    )
    resource = olm_v1_resource(module.cluster, KIND)
    changed, before, after = apply_owned(module.client, resource, definition, bool(p.get("force_conflicts")), f"ClusterCatalog {p['name']}")
    dropped = pruned_fields(definition["spec"], (after or {}).get("spec"))
    if dropped:
        raise K8sError(
            f"The API server dropped {', '.join(dropped)} from ClusterCatalog {p['name']}: this cluster's ClusterCatalog CRD does not know them",
            result=dict(_facts(after), changed=changed),
        )
    result = dict(_facts(after), changed=changed)
    if module._diff:
        result["diff"] = diff_view(before, after)
    if module.check_mode or not p.get("wait"):
        return result

    timer = Deadline()
    try:
        obj = watch_until(module.client, API_VERSION, KIND, p["name"], None, settled, p["wait_timeout"], resource=resource)
    except ResourceTimeoutError as exc:
        last = exc.last_object
        raise K8sError(
            f"Timed out after {p['wait_timeout']}s waiting for catalogd to serve ClusterCatalog {p['name']}: {cluster_catalog_verdict(last)[1]}",
            result=dict(result, duration=exc.duration, **_facts(last)),
        ) from None
    verdict, message = cluster_catalog_verdict(obj)
    result.update(_facts(obj), duration=timer.elapsed())
    if verdict == VERDICT_FAILED:
        raise K8sError(f"catalogd cannot serve ClusterCatalog {p['name']}: {message}", result=result)
    return result


def remove(module):
    """Delete the ClusterCatalog if it exists and, with ``wait``, watch until catalogd has let it go."""
    p = module.params
    resource = olm_v1_resource(module.cluster, KIND)
    changed, before, after = delete_object(module.client, resource, p["name"])
    result = dict(_facts(after), changed=changed)
    if module._diff:
        result["diff"] = diff_view(before, None)
    if changed and p.get("wait") and not module.check_mode:
        timer = Deadline()
        try:
            watch_until(module.client, API_VERSION, KIND, p["name"], None, absent, p["wait_timeout"], resource=resource)
        except ResourceTimeoutError as exc:
            raise K8sError(
                f"Timed out after {p['wait_timeout']}s waiting for ClusterCatalog {p['name']} to be deleted (catalogd removes its finalizer)",
                result=dict(result, duration=exc.duration, **_facts(exc.last_object)),
            ) from None
        result.update(_facts(None), duration=timer.elapsed())
    return result


def execute(module):
    """Entry point of the olm_cluster_catalog module."""
    if module.params["state"] == "absent":
        return remove(module)
    return present(module)
