# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watch-based waiting: ``watch_until`` returns as soon as one object satisfies a predicate.

Algorithm (the standard list-then-watch pattern):

1. LIST the object by ``metadata.name`` field selector; this gives its current state and the list's
   ``resourceVersion``. If the predicate already holds, return.
2. WATCH from that ``resourceVersion`` (server-side ``timeoutSeconds`` = time left), applying the predicate to
   every event (``DELETED`` means "absent", passed to the predicate as ``None``). BOOKMARK events only advance the
   resource version.
3. When the watch expires with 410 Gone (the resource version is too old), or the server ends the stream, go back
   to 1.
4. A monotonic deadline bounds the whole loop; on expiry ``ResourceTimeoutError`` carries the last seen object.

Predicates are pure functions ``predicate(obj) -> bool`` of a plain dict (or ``None`` when the object does not
exist), so they are unit-testable without a cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import (
    K8sError,
    ResourceTimeoutError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import object_ref, to_dict

try:
    from kubernetes import watch as _k8s_watch
except ImportError:
    # Handled in module setup (AnsibleK8SModule requires kubernetes)
    _k8s_watch = None

HTTP_GONE = 410


def exists(obj):
    """Predicate: the object exists."""
    return obj is not None


def absent(obj):
    """Predicate: the object does not exist."""
    return obj is None


def _default_watcher():
    return _k8s_watch.Watch()


# Undecodable watch streams in a row before waiting fails.
MALFORMED_STREAMS = 3


def watch_until(
    client,
    api_version,
    kind,
    name,
    namespace,
    predicate,
    timeout,
    resource=None,
    clock=time.monotonic,
    watcher_factory=None,
    min_watch_seconds=1,
):
    """Wait until the named object satisfies ``predicate``; return the object (dict, or None if ``absent``).

    ``client`` is a kubernetes.core ``K8SClient`` (or a dynamic client); ``resource`` may be passed to skip
    discovery. ``timeout`` is in seconds. Raises ``ResourceTimeoutError`` (with ``last_object``) on timeout and
    ``K8sError`` on API errors other than 410 Gone. ``clock`` and ``watcher_factory`` exist for tests.
    """
    if resource is None:
        resource = find_resource(client, kind, api_version)
    watcher_factory = watcher_factory or _default_watcher
    start = clock()
    deadline = start + max(0, timeout)
    field_selector = f"metadata.name={name}"
    last = None
    malformed = 0

    while True:
        # 1. list: current state + resourceVersion to watch from
        try:
            listing = to_dict(resource.get(namespace=namespace, field_selector=field_selector))
        except Exception as exc:
            raise _wait_error("list", kind, name, exc) from exc
        items = listing.get("items") or []
        last = items[0] if items else None
        if predicate(last):
            return last
        resource_version = (listing.get("metadata") or {}).get("resourceVersion")

        remaining = deadline - clock()
        if remaining <= 0:
            break

        # 2. watch from that version until the predicate holds, the stream ends or the deadline passes
        watcher = watcher_factory()
        matched = False
        events = None
        try:
            events = resource.watch(
                namespace=namespace,
                name=name,
                resource_version=resource_version,
                timeout=max(min_watch_seconds, int(math.ceil(remaining))),
                watcher=watcher,
            )
            for event in events:
                outcome = _apply_event(event)
                if outcome is _GONE:
                    break
                if outcome is not _SKIP:
                    last = outcome
                    if predicate(last):
                        matched = True
                        break
                if clock() >= deadline:
                    break
        except K8sError:
            raise
        except (TypeError, KeyError, ValueError) as exc:
            # A stream the client cannot decode (seen through ansible-operator's caching proxy): list again, which
            # decides from the current state, but not forever.
            malformed += 1
            if malformed > MALFORMED_STREAMS:
                raise _wait_error("watch", kind, name, exc) from exc
        except Exception as exc:
            if api_error_status(exc) != HTTP_GONE:
                raise _wait_error("watch", kind, name, exc) from exc
        finally:
            _stop(watcher)
            # closing the generator runs the kubernetes client's cleanup (closes the HTTP response)
            close = getattr(events, "close", None)
            if close is not None:
                close()
        if matched:
            return last
        if clock() >= deadline:
            break
        # 3. 410 Gone or the server closed the stream: re-list

    duration = round(clock() - start, 3)
    raise ResourceTimeoutError(
        f"Timed out after {timeout}s waiting for {kind} {object_ref(name, namespace)}",
        last_object=last,
        duration=duration,
    )


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_SKIP = _Marker("SKIP")
_GONE = _Marker("GONE")


def _apply_event(event):
    """Turn one watch event into the new object state, ``_SKIP`` (bookmark etc.) or ``_GONE`` (pure)."""
    event_type = event.get("type")
    raw = event.get("raw_object")
    if raw is None:
        raw = to_dict(event.get("object"))
    if event_type == "ERROR":
        code = raw.get("code") if isinstance(raw, dict) else None
        if code == HTTP_GONE:
            return _GONE
        message = raw.get("message") if isinstance(raw, dict) else raw
        raise K8sError(f"Watch error: {message}", status=code)
    if event_type == "DELETED":
        return None
    if event_type in ("ADDED", "MODIFIED"):
        return raw
    return _SKIP  # BOOKMARK and unknown types


def _stop(watcher):
    stop = getattr(watcher, "stop", None)
    if stop is not None:
        stop()


def _wait_error(action, kind, name, exc):
    return K8sError(
        f"Failed to {action} {kind} {name} while waiting: {api_error_message(exc)}",
        status=api_error_status(exc),
    )
