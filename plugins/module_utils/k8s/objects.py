# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Object helpers: read, create, server-side apply, patch and delete, each returning ``(changed, before, after)``.

``before`` / ``after`` are plain dicts (``None`` when the object does not exist) suitable for Ansible's ``diff``.
All mutating calls go through kubernetes.core's ``K8SClient``, which adds ``dry_run=All`` in check mode, so
``after`` is what the API server *would* store. API errors become ``K8sError``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import DRY_RUN_ALL, dynamic_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import (
    K8sError,
)

try:
    from kubernetes.dynamic.exceptions import NotFoundError
except ImportError:
    # Handled in module setup (AnsibleK8SModule requires kubernetes)
    class NotFoundError(Exception):
        pass


Result = namedtuple("Result", ["changed", "before", "after"])

# Fields that change on every write or are bookkeeping; ignored when deciding ``changed``.
VOLATILE_METADATA = ("resourceVersion", "generation", "managedFields", "creationTimestamp", "uid", "selfLink")


def to_dict(obj):
    """``ResourceInstance`` / model / dict / None -> plain dict or None."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise InvalidInputError(f"cannot convert {type(obj)!r} to a dict")


def normalize(obj):
    """Copy of ``obj`` without volatile metadata (pure); None stays None."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    metadata = out.get("metadata")
    if isinstance(metadata, dict):
        for key in VOLATILE_METADATA:
            metadata.pop(key, None)
    return out


def public(obj):
    """The object as returned to the user: no ``managedFields`` (bookkeeping, often larger than the object)."""
    if not obj:
        return obj
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    out["metadata"] = metadata
    return out


def objects_differ(before, after):
    """True if the two objects differ in anything but volatile metadata (pure)."""
    return normalize(before) != normalize(after)


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


def applied_change(definition, before, after, field_manager):
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


def get_object(client, resource, name, namespace=None):
    """Return the object as a dict, or None if it does not exist."""
    try:
        return to_dict(client.get(resource, name=name, namespace=namespace))
    except NotFoundError:
        return None
    except Exception as exc:
        raise _api_error("get", resource, name, exc) from exc


def create_object(client, resource, definition, namespace=None):
    """Create ``definition`` unless an object of that name exists (then unchanged: the existing object is read and
    returned). One request when it is created: the refusal (409 AlreadyExists), not a GET first, tells it exists.
    Any refusal is followed by a read, so an existing object is left as it is whatever a create would have met
    (a user who may read but not create it, admission that would reject the definition)."""
    name, namespace = _name_namespace(definition, namespace)
    try:
        after = to_dict(client.create(resource, definition, namespace=namespace))
    except Exception as exc:
        before = None
        if name and api_error_status(exc) is not None:  # an answer of the API server, not a connection error
            try:
                before = get_object(client, resource, name, namespace)
            except K8sError:
                before = None  # unreadable: the create's own error says more
        if before is None:  # the object does not exist (any more): the refusal is reported as it came
            raise _api_error("create", resource, name, exc) from exc
        return Result(False, before, before)
    return Result(True, None, after)


def apply_object(client, resource, definition, field_manager, force_conflicts=False, namespace=None):
    """Server-side apply ``definition`` with ``field_manager``; ``changed`` is ``applied_change`` (our fields only)."""
    name, namespace = _name_namespace(definition, namespace)
    before = get_object(client, resource, name, namespace)
    try:
        after = to_dict(
            client.apply(
                resource,
                definition,
                namespace,
                server_side=True,
                field_manager=field_manager,
                force_conflicts=force_conflicts,
                # kubernetes.core's k8s_apply forwards ``serialize`` as given, and the dynamic client returns the
                # raw HTTP response for anything falsy (None included): ask for a ResourceInstance explicitly.
                serialize=True,
            )
        )
    except Exception as exc:
        raise _api_error("apply", resource, name, exc) from exc
    return Result(applied_change(definition, before, after, field_manager), before, after)


def patch_object(client, resource, name, patch, namespace=None, patch_type="merge"):
    """Patch an existing object; ``patch_type`` is ``merge``, ``strategic-merge`` or ``json``. One request: the
    object is not read first, so ``before`` is None and a patch counts as a change (callers decide what to patch
    from what they read).

    Raises ``K8sError`` (status 404) if the object does not exist.
    """
    content_type = f"application/{patch_type}-patch+json"
    try:
        after = to_dict(client.patch(resource, patch, name=name, namespace=namespace, content_type=content_type))
    except NotFoundError:
        raise K8sError(f"{_kind(resource)} {object_ref(name, namespace)} not found", status=404) from None
    except Exception as exc:
        raise _api_error("patch", resource, name, exc) from exc
    return Result(True, None, after)


def patch_with_warnings(client, resource, name, patch, namespace=None, dry_run=False, patch_type="merge"):
    """Patch an object and return ``(after, warning headers)``: the HTTP ``Warning`` headers the API server sent.

    Admission plugins answer with warnings that the object alone does not show, e.g. Pod Security admission lists
    the existing pods a namespace's new ``enforce`` level would reject. ``dry_run`` sends ``dryRun=All``.
    """
    dyn = dynamic_client(client)
    params = {"name": name, "namespace": namespace, "content_type": f"application/{patch_type}-patch+json", "serialize": False}
    if dry_run:
        params["dry_run"] = DRY_RUN_ALL
    try:
        response = dyn.patch(resource, patch, **params)
    except Exception as exc:
        raise _api_error("patch", resource, name, exc) from exc
    headers = getattr(response, "headers", None)
    warnings = list(headers.get_all("Warning") or []) if hasattr(headers, "get_all") else []
    return json.loads(response.data.decode("utf-8")), warnings


def delete_object(client, resource, name, namespace=None, propagation_policy=None, resource_version=None):
    """Delete an object if it exists. ``after`` is None (or the object, if it is only being finalized).

    With ``resource_version`` the API server deletes only that version of the object (409 otherwise): the caller
    decided on what it read, which a concurrent writer may have changed since."""
    before = get_object(client, resource, name, namespace)
    if before is None:
        return Result(False, None, None)
    params = {"name": name, "namespace": namespace}
    options = {}
    if propagation_policy:
        options["propagationPolicy"] = propagation_policy
    if resource_version:
        options["preconditions"] = {"resourceVersion": resource_version}
    if options:
        params["body"] = dict(options, apiVersion="v1", kind="DeleteOptions")
    try:
        response = to_dict(client.delete(resource, **params))
    except NotFoundError:
        return Result(False, before, None)
    except Exception as exc:
        raise _api_error("delete", resource, name, exc) from exc
    # A delete returns either a Status or the object itself (when finalizers keep it around).
    after = response if response and response.get("kind") == before.get("kind") and response.get("metadata", {}).get("deletionTimestamp") else None
    return Result(True, before, after)


def _name_namespace(definition, namespace):
    metadata = definition.get("metadata") or {}
    return metadata.get("name"), namespace or metadata.get("namespace")


def _kind(resource):
    return getattr(resource, "kind", None) or str(resource)


def object_ref(name, namespace):
    """``namespace/name`` of an object (its name alone when cluster-scoped), for messages."""
    return f"{namespace}/{name}" if namespace else str(name)


def _api_error(action, resource, name, exc):
    return K8sError(
        f"Failed to {action} {_kind(resource)} {name}: {api_error_message(exc)}",
        status=api_error_status(exc),
    )
