# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plumbing every cluster layer shares: server-side apply as the collection's field manager, the ``Cluster``
facade (resources looked up once), the diff view of a result, and guarded writes retried when the object changed
meanwhile or the API server is restarting.

Domain packages (``olm_cluster``, ``scc_cluster``, ``canary_cluster``, ``reconcile_cluster``) import these from
here, never from one another.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import (
    apply_object,
    create_object,
    delete_object,
    get_object,
    normalize,
    patch_object,
    to_dict,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import TRANSIENT_SECONDS, retry_pause, transient_error

# The field manager of every object this collection applies (server-side apply).
FIELD_MANAGER = "kubeforge"

HTTP_CONFLICT = 409
# A guarded write refused because the object changed since it was read: 409 (its resourceVersion precondition)
# or 422 (a JSON patch "test" operation that no longer holds).
GUARD_FAILED = (HTTP_CONFLICT, 422)
# Refusals in a row before a guarded write gives up: each one means somebody else wrote the object meanwhile.
GUARD_RETRIES = 5


def apply(client, resource, definition, force_conflicts=False):
    """Server-side apply ``definition`` as ``FIELD_MANAGER``: ``(changed, before, after)``.

    Without ``force_conflicts`` a field another manager owns with a different value makes the API server refuse the
    request (``K8sError`` with status 409, its message naming the managers); with it our values win and the fields
    become ours.
    """
    result = apply_object(client, resource, definition, field_manager=FIELD_MANAGER, force_conflicts=force_conflicts)
    return result.changed, result.before, result.after


def apply_owned(client, resource, definition, force_conflicts, what):
    """``apply`` with the 409 (another field manager owns a field) turned into a message naming ``what`` (for
    example ``CatalogSource olm/x``) and the way out."""
    try:
        return apply(client, resource, definition, force_conflicts=force_conflicts)
    except K8sError as exc:
        if exc.status != HTTP_CONFLICT:
            raise
        raise K8sError(
            f"{exc.msg}. Another field manager owns these fields of {what}; leave them to it, or set force_conflicts=true to take them over",
            result=exc.result,
            status=exc.status,
        ) from None


def diff_view(before, after, key=None):
    """The ``diff`` of a result: both states without server-managed noise, ``{}`` for an object that is absent;
    with ``key`` each side is ``{key: state}`` (a result that shows one part, or one of several objects)."""
    if key is not None:
        return {"before": {key: normalize(before) or {}}, "after": {key: normalize(after) or {}}}
    return {"before": normalize(before) or {}, "after": normalize(after) or {}}


class GuardFailed(K8sError):
    """A guarded write found the object changed since it was read: read it again and decide again."""

    def __init__(self, message="the object changed since it was read"):
        super().__init__(message, status=HTTP_CONFLICT)


def retry_guarded(
    attempt,
    what,
    error=K8sError,
    retries=GUARD_RETRIES,
    ride_out_restarts=True,
    refusal_pause=0.0,
    guards=GUARD_FAILED,
    clock=time.monotonic,
    sleep=time.sleep,
):
    """Return ``attempt()`` (which reads the object, decides and writes it guarded), called again when its write is
    refused because the object changed meanwhile (a ``K8sError`` with a status in ``guards``, or ``GuardFailed``),
    and with ``ride_out_restarts`` while the API server is away (a restart: connection refused, 5xx, 429) for up to
    ``observe.TRANSIENT_SECONDS``. After ``retries`` refusals in a row raise ``error``: ``what`` kept changing.
    ``guards``: the statuses that mean the guard failed - ``GUARD_FAILED`` for JSON patches with a ``test``
    operation, ``(HTTP_CONFLICT,)`` where 422 can only mean an invalid object (a merge patch or a delete carrying the
    resourceVersion). ``refusal_pause``: seconds times the refusals so far to wait before reading again, for reads
    served from a cache that lags behind the write that was refused (ansible-operator's proxy)."""
    refusals, failing_since, failures = 0, None, 0
    while True:
        try:
            return attempt()
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is one of the two kinds above
            if isinstance(exc, GuardFailed) or api_error_status(exc) in guards:
                refusals += 1
                if refusals >= retries:
                    raise error(f"{what} kept changing while we tried to write it ({retries} attempts)") from None
                if refusal_pause:
                    sleep(refusal_pause * refusals)
                continue
            if not (ride_out_restarts and transient_error(exc)):
                raise
            now = clock()
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= TRANSIENT_SECONDS:
                raise
            failures += 1
            sleep(retry_pause(failures))


class Cluster:
    """The resources one run touches, looked up once (discovery is cached by kubernetes.core), and reads of them.
    ``default_api_version`` is the API version of the kinds the caller names without one."""

    default_api_version = "v1"

    def __init__(self, client, resources=None):
        self.client = client
        self._resources = dict(resources or {})  # {(kind, api_version): resource} already looked up

    def resource(self, kind, api_version=None):
        key = (kind, api_version or self.default_api_version)
        if key not in self._resources:
            self._resources[key] = find_resource(self.client, kind, key[1])
        return self._resources[key]

    def get(self, kind, name, namespace, api_version=None):
        return get_object(self.client, self.resource(kind, api_version), name, namespace)

    def list(self, kind, namespace, api_version=None, **selectors):
        listing = to_dict(self.resource(kind, api_version).get(namespace=namespace, **selectors)) or {}
        return listing.get("items") or []

    def create(self, definition, namespace=None):
        """``objects.create_object`` of ``definition`` (its ``kind`` and ``apiVersion`` name the resource)."""
        return create_object(self.client, self.resource(definition["kind"], definition.get("apiVersion")), definition, namespace)

    def apply(self, definition, force_conflicts=False, what=None):
        """Server-side apply as ``FIELD_MANAGER``: ``(changed, before, after)``; with ``what`` (for example
        ``CatalogSource olm/x``) a conflict with another field manager names it and the way out (``apply_owned``)."""
        resource = self.resource(definition["kind"], definition.get("apiVersion"))
        if what is not None:
            return apply_owned(self.client, resource, definition, force_conflicts, what)
        return apply(self.client, resource, definition, force_conflicts=force_conflicts)

    def patch(self, kind, name, patch, namespace, api_version=None, patch_type="merge"):
        """``objects.patch_object``: one request, ``K8sError`` with status 404 when the object does not exist."""
        return patch_object(self.client, self.resource(kind, api_version), name, patch, namespace, patch_type=patch_type)

    def delete(self, kind, name, namespace, api_version=None, resource_version=None):
        """``objects.delete_object``; with ``resource_version`` only that version is deleted (409 otherwise)."""
        return delete_object(self.client, self.resource(kind, api_version), name, namespace, resource_version=resource_version)


def ensure_namespace(cluster, namespace, labels=None):
    """Create the namespace (with ``labels``) when it is missing; returns True if created (or would be, in check mode)."""
    meta = {"name": namespace, "labels": dict(labels)} if labels else {"name": namespace}
    result = create_object(cluster.client, cluster.resource("Namespace", "v1"), {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    return result.changed


# OpenShift serves these from openshift-apiserver, an aggregated API.
OPENSHIFT_APISERVICES = ("v1.project.openshift.io", "v1.route.openshift.io")
APISERVICE_KIND = "APIService"
APISERVICE_API_VERSION = "apiregistration.k8s.io/v1"


def openshift_evidence(apiservices):
    """A sentence proving OpenShift from APIService objects (dicts), or None.

    OpenShift serves ``project.openshift.io`` and ``route.openshift.io`` from openshift-apiserver, an aggregated API:
    their APIServices have ``spec.service`` set. A CRD of the same group makes the API server register a *local*
    APIService (``spec.service`` null), which proves nothing.
    """
    for svc in apiservices or ():
        if not isinstance(svc, dict):
            continue
        name = (svc.get("metadata") or {}).get("name")
        service = (svc.get("spec") or {}).get("service")
        if name in OPENSHIFT_APISERVICES and isinstance(service, dict) and service.get("name"):
            return f"APIService {name} is served by Service {service.get('namespace')}/{service['name']} (OpenShift's openshift-apiserver)"
    return None


def detect_openshift(client, resource=None):
    """``openshift_evidence`` of the cluster's ``v1.project.openshift.io`` / ``v1.route.openshift.io`` APIServices."""
    if resource is None:
        resource = find_resource(client, APISERVICE_KIND, APISERVICE_API_VERSION)
    found = [get_object(client, resource, name) for name in OPENSHIFT_APISERVICES]
    return openshift_evidence([svc for svc in found if svc])
