# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_catalog_source module: apply or delete a CatalogSource and wait for OLM's verdict.

The pure rules (definition, verdict) are in ``olm/catalog_source.py``; this file only talks to the API server
through the k8s adapter (server-side apply, server-side dry run in check mode, watch-based waiting).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import apply_object, delete_object, normalize
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import (
    API_VERSION,
    KIND,
    VERDICT_FAILED,
    VERDICT_READY,
    catalog_source_definition,
    catalog_source_verdict,
    connection_state,
    pruned_fields,
    settled,
)

# The field manager of every object this collection applies (server-side apply).
FIELD_MANAGER = "kubeforge"


def _project(template, obj):
    """The parts of ``obj`` at the keys of ``template`` (recursively where the template has mappings)."""
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, value in template.items():
        out[key] = _project(value, obj.get(key)) if isinstance(value, dict) else obj.get(key)
    return out


def _owned_template(fields):
    """The key tree of a ``fieldsV1`` entry (``f:name`` keys); list items and sets become leaves (None)."""
    out = {}
    for key, value in (fields or {}).items():
        if not key.startswith("f:"):
            continue
        children = {k: v for k, v in (value or {}).items() if k.startswith("f:")} if isinstance(value, dict) else {}
        only_fields = isinstance(value, dict) and value and all(k.startswith("f:") or k == "." for k in value)
        out[key[2:]] = _owned_template(children) if only_fields and children else None
    return out


def _merge(one, two):
    """Union of two key trees; a leaf on either side wins (the whole value is compared)."""
    if not isinstance(one, dict) or not isinstance(two, dict):
        return None
    out = dict(one)
    for key, value in two.items():
        out[key] = _merge(out[key], value) if key in out else value
    return out


def _semantic(value):
    """``value`` without empty members (None, {} and []), which Kubernetes treats as unset."""
    if isinstance(value, dict):
        cleaned = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def applied_change(definition, before, after, field_manager=FIELD_MANAGER):
    """Whether a server-side apply of ``definition`` changed the object (pure).

    ``before`` and ``after`` are compared where ``definition`` sets fields and where ``field_manager`` owned
    fields before (an apply that no longer sets a field removes it), ignoring empty values. Not a change of ours:
    a status or annotation a controller writes between the read and the apply, taking (back) ownership of fields
    that hold the applied values, and a controller's normalised copy of our values (OLM rewrites a CSV's spec with
    ``strategy: {}`` in each deployment).
    """
    if before is None:
        return after is not None
    template = definition
    for entry in ((before.get("metadata") or {}).get("managedFields")) or []:
        if isinstance(entry, dict) and entry.get("manager") == field_manager:
            template = _merge(template, _owned_template(entry.get("fieldsV1")))
    if not isinstance(template, dict):
        template = definition
    return _semantic(_project(template, before)) != _semantic(_project(template, after))


def apply(client, resource, definition):
    """Server-side apply ``definition`` as ``FIELD_MANAGER`` (conflicts forced): ``(changed, before, after)``.

    ``changed`` is ``applied_change``: unlike ``k8s.objects.apply_object``'s whole-object comparison it ignores
    what controllers write concurrently (OLM updates a CSV's status right after it is created).
    """
    result = apply_object(client, resource, definition, field_manager=FIELD_MANAGER, force_conflicts=True)
    return applied_change(definition, result.before, result.after), result.before, result.after


def public(obj):
    """The object as returned to the user: no ``managedFields`` (bookkeeping, often larger than the object)."""
    if not obj:
        return obj
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    out["metadata"] = metadata
    return out


def _diff(before, after):
    return {"before": normalize(before) or {}, "after": normalize(after) or {}}


def _ref(params):
    return f"{params['namespace']}/{params['name']}"


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
    )
    resource = module.resource(KIND, API_VERSION)
    changed, before, after = apply(module.client, resource, definition)
    dropped = pruned_fields(definition["spec"], (after or {}).get("spec"))
    if dropped:
        raise K8sError(
            f"The API server dropped {', '.join(dropped)} from CatalogSource {_ref(p)}: the CatalogSource CRD on this cluster does not know "
            "these fields (an older OLM, or a misspelled key)",
            result={"changed": changed, "catalog_source": public(after)},
        )
    result = {"changed": changed, "catalog_source": public(after), "state": connection_state(after)}
    if module._diff:
        result["diff"] = _diff(before, after)
    if module.check_mode or not p.get("wait"):
        return result

    started = time.monotonic()
    try:
        obj = watch_until(module.client, API_VERSION, KIND, p["name"], p["namespace"], settled, p["wait_timeout"], resource=resource)
    except ResourceTimeoutError as exc:
        last = exc.last_object
        verdict = catalog_source_verdict(last)[1]
        raise K8sError(
            f"Timed out after {p['wait_timeout']}s waiting for CatalogSource {_ref(p)} to become READY: {verdict}",
            result=dict(result, catalog_source=public(last), state=connection_state(last), duration=exc.duration),
        ) from None
    status, message = catalog_source_verdict(obj)
    result.update(catalog_source=public(obj), state=connection_state(obj), duration=round(time.monotonic() - started, 3))
    if status == VERDICT_FAILED:
        raise K8sError(f"CatalogSource {_ref(p)} is not healthy: {message}", result=result)
    if status != VERDICT_READY:  # settled() only returns on ready or failed
        raise K8sError(f"CatalogSource {_ref(p)}: unexpected state: {message}", result=result)
    return result


def remove(module):
    """Delete the CatalogSource if it exists and, with ``wait``, watch until it is gone."""
    p = module.params
    resource = module.resource(KIND, API_VERSION)
    changed, before, after = delete_object(module.client, resource, p["name"], p["namespace"])
    result = {"changed": changed, "catalog_source": public(after), "state": None}
    if module._diff:
        result["diff"] = _diff(before, None)
    if changed and p.get("wait") and not module.check_mode:
        started = time.monotonic()
        try:
            watch_until(module.client, API_VERSION, KIND, p["name"], p["namespace"], absent, p["wait_timeout"], resource=resource)
        except ResourceTimeoutError as exc:
            raise K8sError(
                f"Timed out after {p['wait_timeout']}s waiting for CatalogSource {_ref(p)} to be deleted",
                result=dict(result, catalog_source=public(exc.last_object), duration=exc.duration),
            ) from None
        result["catalog_source"] = None
        result["duration"] = round(time.monotonic() - started, 3)
    return result


def execute(module):
    """Entry point of the olm_catalog_source module."""
    if module.params["state"] == "absent":
        return remove(module)
    return present(module)
