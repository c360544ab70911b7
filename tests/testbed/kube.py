"""Small helpers around the kubernetes Python client for the testbed and its tests."""

import time
from typing import Callable, Optional

from kubernetes import client, config, watch


def api_client(kubeconfig: str, pool: int = 4) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.connection_pool_maxsize = pool
    return client.ApiClient(configuration)


def wait_for(list_func: Callable, predicate: Callable[[object], bool], timeout: float, describe: str, **kwargs) -> object:
    """Watch `list_func` (a list_* API method) until an object satisfies predicate; return that object.

    Lists first (to see the current state and get a resourceVersion), then watches from there; a
    410 Gone or a dropped stream starts over with a fresh list. Raises TimeoutError naming `describe`
    and the last object seen.
    """
    deadline = time.monotonic() + timeout
    last: Optional[object] = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out after {timeout}s waiting for {describe}; last seen: {_brief(last)}")
        listing = list_func(**kwargs)
        for item in listing.items:
            last = item
            if predicate(item):
                return item
        stream = watch.Watch()
        try:
            for event in stream.stream(list_func, resource_version=listing.metadata.resource_version, timeout_seconds=max(1, int(remaining)), **kwargs):
                last = event["object"]
                if event["type"] in ("ADDED", "MODIFIED") and predicate(last):
                    return last
                if time.monotonic() >= deadline:
                    break
        except client.exceptions.ApiException as exc:
            if exc.status != 410:
                raise
        finally:
            stream.stop()


def _brief(obj: object) -> str:
    if obj is None:
        return "nothing"
    if isinstance(obj, dict):
        meta, status = obj.get("metadata", {}), obj.get("status")
        return "{}/{} status={}".format(meta.get("namespace"), meta.get("name"), status)
    meta = getattr(obj, "metadata", None)
    return "{}/{} status={}".format(getattr(meta, "namespace", None), getattr(meta, "name", None), getattr(obj, "status", None))


def wait_for_resource(resource, predicate: Callable[[dict], bool], timeout: float, describe: str, namespace: Optional[str] = None) -> dict:
    """Like wait_for, for a dynamic-client resource; objects are passed to predicate as plain dicts."""
    deadline = time.monotonic() + timeout
    last: Optional[dict] = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out after {timeout}s waiting for {describe}; last seen: {_brief(last)}")
        listing = resource.get(namespace=namespace)
        for item in listing.items:
            last = item.to_dict()
            if predicate(last):
                return last
        try:
            for event in resource.watch(namespace=namespace, resource_version=listing.metadata.resourceVersion, timeout=max(1, int(remaining))):
                last = event["raw_object"]
                if event["type"] in ("ADDED", "MODIFIED") and predicate(last):
                    return last
                if time.monotonic() >= deadline:
                    break
        except client.exceptions.ApiException as exc:
            if exc.status != 410:
                raise
