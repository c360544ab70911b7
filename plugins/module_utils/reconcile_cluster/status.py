# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a custom resource's status: read it, plan with ``reconcile.conditions``, merge-patch the status
subresource guarded by the resourceVersion (``k8s.cluster.retry_guarded``: again on conflict, and across an API
server restart), record an Event per condition transition."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import dry_run_params, dynamic_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import diff_view, retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.events import event_body
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import object_ref, to_dict
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time
from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile import conditions as planner
from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile.conditions import StatusError


def target(resource):
    """``(api_version, kind, name, namespace, generation)`` of the ``resource`` option (a whole object or its keys)."""
    meta = resource.get("metadata") or {}
    api_version = resource.get("apiVersion") or resource.get("api_version")
    kind = resource.get("kind")
    name = meta.get("name") or resource.get("name")
    namespace = meta.get("namespace") or resource.get("namespace") or None
    generation = meta.get("generation") if meta else resource.get("generation")
    missing = [key for key, value in (("apiVersion", api_version), ("kind", kind), ("name", name)) if not value]
    if missing:
        raise StatusError(f"resource needs {', '.join(missing)} (a whole object, or api_version, kind, name, namespace)")
    if generation is not None:
        try:
            generation = int(generation)
        except (TypeError, ValueError):
            raise StatusError(f"resource generation {generation!r} is not an integer") from None
    return str(api_version), str(kind), str(name), str(namespace) if namespace else None, generation


def write(cluster, params, check_mode):
    api_version, kind, name, namespace, generation = target(params["resource"])
    if params.get("observed_generation") is not None:
        generation = params["observed_generation"]
    ref = object_ref(name, namespace)

    def attempt():
        # discovery too is retried: a reconcile may start while the API server restarts
        resource = cluster.resource(kind, api_version)
        if "status" not in (resource.subresources or {}):
            raise StatusError(f"{kind} ({api_version}) has no status subresource: its CRD must enable subresources.status")
        current = cluster.get(kind, name, namespace, api_version)
        if current is None:
            raise K8sError(f"{kind} {ref} not found", status=404)
        before = current.get("status") or {}
        after = planner.plan(before, params.get("conditions"), params.get("status"), generation, format_time(time.time()))
        patch = planner.status_patch(before, after)
        if not patch:
            return _result(False, before, after, [])
        body = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "status": patch}
        try:
            written = to_dict(
                dynamic_client(cluster.client).patch(
                    resource.subresources["status"],
                    body,
                    **dry_run_params(check_mode, {"name": name, "namespace": namespace, "content_type": "application/merge-patch+json"}),
                )
            )
        except Exception as exc:  # the dynamic client raises ApiException subclasses
            message = f"Failed to patch the status of {kind} {ref}: {api_error_message(exc)}"
            raise K8sError(message, status=api_error_status(exc)) from exc
        after = written.get("status") or after
        events = [] if check_mode or not params.get("events", True) else _record(cluster, current, planner.transitions(before, after))
        return _result(True, before, after, events)

    # a conflict (the resource changed since it was read) reads and plans again; an API server restart is waited out
    return retry_guarded(attempt, f"the status of {kind} {ref}", error=StatusError)


def _record(cluster, obj, changed):
    """One Event per condition transition, on the resource; a failure to record is a warning, not a failure."""
    events, warnings = [], []
    for condition in changed:
        message = f"{condition['type']}={condition['status']}: {condition.get('message') or condition['reason']}"
        body = event_body(obj, planner.event_type(condition), condition["reason"], message, time.time())
        try:
            cluster.create(body, body["metadata"]["namespace"])
        except K8sError as exc:
            warnings.append(f"could not record the Event {condition['reason']}: {exc}")
            continue
        events.append({key: body[key] for key in ("type", "reason", "message")})
    return events, warnings


def _result(changed, before, after, recorded):
    events, warnings = recorded if recorded else ([], [])
    result = {
        "changed": changed,
        "status": after,
        "transitions": [c["type"] for c in planner.transitions(before, after)] if changed else [],
        "events": events,
        "diff": diff_view(before, after, key="status"),
    }
    if warnings:
        result["warnings"] = warnings
    return result


def execute(module):
    """The module's entry point (``KubeforgeModule.run``)."""
    return write(module.cluster, module.params, module.check_mode)
