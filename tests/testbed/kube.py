"""Small helpers around the kubernetes Python client for the testbed and its tests."""

import time
from typing import Callable, Optional

from kubernetes import client, config, watch
from lib.polling import poll_until


def api_client(kubeconfig: str, pool: int = 4) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.connection_pool_maxsize = pool
    return client.ApiClient(configuration)


def wait_for(list_func: Callable, predicate: Callable[[object], bool], timeout: float, describe: str, **kwargs) -> object:
    """Watch `list_func` (a list_* API method) until an object satisfies predicate; return that object.

    Lists first (to see the current state and get a resourceVersion), then watches from there; a
    410 Gone or a dropped stream starts over with a fresh list (lib.polling.poll_until runs the rounds).
    Raises TimeoutError naming `describe` and the last object seen.
    """
    deadline = time.monotonic() + timeout
    seen = _Seen()

    def one_round() -> _Seen:
        seen.match = None
        listing = list_func(**kwargs)
        for item in listing.items:
            seen.last = item
            if predicate(item):
                seen.match = item
                return seen
        stream = watch.Watch()
        remaining = deadline - time.monotonic()
        try:
            for event in stream.stream(list_func, resource_version=listing.metadata.resource_version, timeout_seconds=max(1, int(remaining)), **kwargs):
                seen.last = event["object"]
                if event["type"] in ("ADDED", "MODIFIED") and predicate(seen.last):
                    seen.match = seen.last
                    return seen
                if time.monotonic() >= deadline:
                    break
        except client.exceptions.ApiException as exc:
            if exc.status != 410:
                raise
        finally:
            stream.stop()
        return seen

    return poll_until(one_round, timeout, interval=0, describe=describe, until=_Seen.matched, show=_Seen.brief).match


class _Seen:
    """What a list-then-watch round saw: the object that matched (or None) and the last object of any round."""

    def __init__(self) -> None:
        self.match: Optional[object] = None
        self.last: Optional[object] = None

    def matched(self) -> bool:
        return self.match is not None

    def brief(self) -> str:
        return _brief(self.last)


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
    seen = _Seen()

    def one_round() -> _Seen:
        seen.match = None
        listing = resource.get(namespace=namespace)
        for item in listing.items:
            seen.last = item.to_dict()
            if predicate(seen.last):
                seen.match = seen.last
                return seen
        remaining = deadline - time.monotonic()
        try:
            for event in resource.watch(namespace=namespace, resource_version=listing.metadata.resourceVersion, timeout=max(1, int(remaining))):
                seen.last = event["raw_object"]
                if event["type"] in ("ADDED", "MODIFIED") and predicate(seen.last):
                    seen.match = seen.last
                    return seen
                if time.monotonic() >= deadline:
                    break
        except client.exceptions.ApiException as exc:
            if exc.status != 410:
                raise
        return seen

    return poll_until(one_round, timeout, interval=0, describe=describe, until=_Seen.matched, show=_Seen.brief).match
