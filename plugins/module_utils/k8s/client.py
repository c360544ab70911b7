# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dynamic client creation, server-side dry run and resource lookup, on top of kubernetes.core's client.

Auth resolution is kubernetes.core's own code (module params, then ``K8S_AUTH_*`` environment variables, then
in-cluster config, then the default kubeconfig), so behaviour matches kubernetes.core exactly.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as _core_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient, get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, KindNotFoundError

try:
    from kubernetes.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
except ImportError:
    # Handled in module setup (AnsibleK8SModule requires kubernetes)
    ResourceNotFoundError = ResourceNotUniqueError = LookupError

# Value of the ``dryRun`` query parameter for server-side dry run.
DRY_RUN_ALL = K8SClient.K8S_SERVER_DRY_RUN


def dry_run_params(dry_run, params=None):
    """Return a copy of ``params`` with ``dry_run=All`` added when ``dry_run`` is true (pure).

    Use it for calls made on the dynamic client directly; calls made through ``K8SClient`` methods
    (create/apply/patch/replace/delete) get it from kubernetes.core already.
    """
    params = dict(params or {})
    if dry_run:
        params["dry_run"] = DRY_RUN_ALL
    return params


def get_client(module=None, **auth):
    """Return kubernetes.core's ``K8SClient`` for ``module`` (a ``KubeforgeModule``) or explicit auth kwargs.

    In check mode (with kubernetes>=18.20.0) the client adds ``dry_run=All`` to every mutating call, so the API
    server validates and defaults objects without persisting them. Clients are pooled by kubernetes.core.
    """
    try:
        return get_api_client(module=module, **auth)
    except K8sError:
        raise
    except CoreException as exc:
        raise K8sError(str(exc)) from exc
    except Exception as exc:  # kubeconfig parse errors, missing files, API errors of the first discovery, ...
        status = api_error_status(exc)
        if status is not None:
            # str() of the client's API error carries the response headers, body and a traceback: keep the reason.
            raise K8sError(f"Could not create API client: the API server answered {status}: {api_error_message(exc)}", status=status) from exc
        raise K8sError(f"Could not create API client: {exc}") from exc


def build_configuration(module=None, **auth):
    """Resolve auth like kubernetes.core and return ``(kubernetes.client.Configuration, headers)``.

    Nothing is sent to the cluster; useful for tests and diagnostics. Impersonation becomes ``headers``.
    """
    auth_spec = _core_client._create_auth_spec(module, **auth)
    try:
        configuration = _core_client._create_configuration(auth_spec)
    except Exception as exc:
        raise K8sError(f"Could not create API client configuration: {exc}") from exc
    headers = _core_client._create_headers(module, **auth)
    return configuration, headers


def is_dry_run(client):
    """True when ``client`` (a ``K8SClient``) performs server-side dry runs."""
    return bool(getattr(client, "dry_run", False))


def dynamic_client(client):
    """The ``kubernetes.dynamic.DynamicClient`` behind a ``K8SClient`` (or ``client`` itself)."""
    return getattr(client, "client", client) if isinstance(client, K8SClient) else client


def invalidate_discovery_cache(client):
    """Drop and rebuild the API discovery cache (memory and kubernetes.core's on-disk cache file).

    Call it after installing CRDs or operators (CSVs), before using the new kinds: otherwise lookups may fail with
    "Failed to find exact match for ..." from a stale cache (kubernetes.core issue #351).
    """
    discoverer = dynamic_client(client).resources
    discoverer.invalidate_cache()


# A starting API server answers discovery before its CRDs' groups are in it (seen on the testbed: /apis without them
# for ~1.8 s after it listens, while /readyz fails): a kind missing then is a 503 that callers ride out like the
# restart itself, not an unknown kind.
HTTP_UNAVAILABLE = 503


def find_resource(client, kind, api_version, refresh_on_miss=True):
    """Return the dynamic ``Resource`` for ``kind``/``api_version``.

    On a miss, the discovery cache is invalidated and the lookup retried (a CRD may have been created after the
    cache was written); if the kind is still missing, once more after the API server's /readyz is ok (a starting
    server's discovery lacks its CRDs' groups for a moment). Raises ``K8sError`` if the kind is still unknown or
    ambiguous, with status 503 (a transient error) while /readyz fails.
    """
    lookup = client.resource if isinstance(client, K8SClient) else _lookup_on_dynamic(client)
    try:
        return lookup(kind, api_version)
    except (ResourceNotFoundError, ResourceNotUniqueError):
        if not refresh_on_miss:
            raise _not_found(kind, api_version) from None
    invalidate_discovery_cache(client)
    try:
        return lookup(kind, api_version)
    except (ResourceNotFoundError, ResourceNotUniqueError):
        pass
    # /readyz answers a starting server only once it is ready (or fails): then discovery is complete.
    if _api_server_starting(client):
        raise K8sError(
            f"{api_version}.{kind} is not in the API server's discovery yet: the API server is starting (its /readyz is not ok)", status=HTTP_UNAVAILABLE
        )
    invalidate_discovery_cache(client)
    try:
        return lookup(kind, api_version)
    except (ResourceNotFoundError, ResourceNotUniqueError):
        raise _not_found(kind, api_version) from None


def _api_server_starting(client):
    """True when the API server's /readyz fails (5xx) or does not answer; an answer it refuses (401/403) says nothing."""
    try:
        dynamic_client(client).request("GET", "/readyz", serialize=False)
    except Exception as exc:  # noqa: BLE001 - any failure to answer is judged by its status below
        status = api_error_status(exc)
        return status is None or status >= 500
    return False


def _lookup_on_dynamic(dyn):
    def lookup(kind, api_version):
        return dyn.resources.get(api_version=api_version, kind=kind)

    return lookup


def _not_found(kind, api_version):
    return KindNotFoundError(f"Failed to find exact match for {api_version}.{kind} by [kind, name, singularName, shortNames]")
