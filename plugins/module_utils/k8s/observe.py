# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watch several kinds at once and react to every change: the loop behind multi-object waits.

``observe(client, sources, on_change, timeout)`` lists and then watches each source (a kind in a namespace,
optionally one name or a label selector) in its own thread, keeps a snapshot ``{source key: {name: object}}``, and
calls ``on_change(snapshot)`` once every source has been listed (an optional source that may not be listed maps to
None) and again after each batch of events. The first value other than None that ``on_change`` returns ends the
wait and is returned. A 410 Gone or a closed stream re-lists that source (the standard list-then-watch pattern:
LIST for the state and its ``resourceVersion``, WATCH from there), and a monotonic deadline bounds everything
(``ResourceTimeoutError`` carrying ``on_timeout(snapshot)`` as partial results). Every wait of the collection runs
here; ``watch.watch_until`` is this loop for one named object.

An API server that restarts (connection refused, 5xx, 429) is waited for: the sources re-list until it answers
again, for up to ``TRANSIENT_SECONDS``. ``transient_error(exc)`` tells callers which errors of their own requests
(the patches ``on_change`` sends) are of that kind, so they can decide again on the next change instead of failing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import queue
import threading
import time
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import to_dict

try:
    from kubernetes import watch as _k8s_watch
except ImportError:
    # Handled in module setup (AnsibleK8SModule requires kubernetes)
    _k8s_watch = None

try:
    from urllib3.exceptions import HTTPError as _Urllib3Error
except ImportError:
    # urllib3 comes with kubernetes (handled in module setup)
    class _Urllib3Error(Exception):
        pass


# optional: a source the caller can do without: when listing it is forbidden (403), it stays empty and a note says so.
# reduce: a function of one object that returns the part of it the caller reads (it must keep metadata.name); applied
# in the watch thread as each object arrives, so the snapshot holds only that part: for many large objects (a
# thousand pods, most of each one managedFields and spec) it saves the memory, the garbage collector's walks over
# them, and freeing them when the module ends.
Source = namedtuple("Source", ["key", "api_version", "kind", "namespace", "name", "label_selector", "optional", "reduce"])
Source.__new__.__defaults__ = (None, None, None, False, None)

# Server-side length of one watch request; a source re-lists after it (and after 410 Gone).
WATCH_SECONDS = 300

_LISTED = "LISTED"
_FAILED = "FAILED"
_DROPPED = "DROPPED"

HTTP_FORBIDDEN = 403
HTTP_GONE = 410
HTTP_TOO_MANY_REQUESTS = 429
# Connection errors, 5xx and 429 re-list the source, with pauses from RETRY_PAUSE_FIRST doubling up to
# RETRY_PAUSE_MAX, as long as they have lasted less than TRANSIENT_SECONDS in a row: long enough for an API server
# restart (the kubelet restarting a static pod, a control-plane upgrade), short enough to report one that is gone.
TRANSIENT_SECONDS = 120
RETRY_PAUSE_FIRST = 0.5
RETRY_PAUSE_MAX = 5.0
# Watch streams in a row that the client cannot decode (seen through ansible-operator's caching proxy) before the
# source fails; each one re-lists, which decides from the current state.
MALFORMED_STREAMS = 3


class UndecodableEvent(K8sError):
    """A watch stream sent something that is not an event."""


def _transient(status):
    return status is None or status >= 500 or status == HTTP_TOO_MANY_REQUESTS


def transient_error(exc):
    """True for an error of a request that an API server restart or overload causes and that goes away: no HTTP
    answer at all (connection refused or reset, a timeout), a 5xx or a 429. A ``K8sError`` without a status is
    judged by the error it wraps (``raise ... from``)."""
    status = api_error_status(exc)
    if status is not None:
        return _transient(status)
    cause = exc
    while isinstance(cause, K8sError) and cause.__cause__ is not None:
        cause = cause.__cause__
    return isinstance(cause, (OSError, _Urllib3Error))


def retry_pause(failures):
    """Seconds to pause after the ``failures``-th failure in a row (1, 2, ...)."""
    return min(RETRY_PAUSE_MAX, RETRY_PAUSE_FIRST * 2 ** (max(1, failures) - 1))


def _name(obj):
    return ((obj or {}).get("metadata") or {}).get("name")


def _selectors(source):
    params = {}
    if source.name:
        params["field_selector"] = f"metadata.name={source.name}"
    if source.label_selector:
        params["label_selector"] = source.label_selector
    return params


def _list(resource, namespace, params):
    """One LIST as a plain dict: the raw JSON of the response, not a ResourceInstance of every item (the dynamic
    client builds one recursively: 0.7 s for a thousand pods), as for the watch events."""
    response = resource.get(namespace=namespace, serialize=False, **params)
    data = getattr(response, "data", None)
    return json.loads(data) if data is not None else to_dict(response)


def _follow(resource, source, events, stop):
    """Thread body: list, then watch, forever (until ``stop``), pushing ``(kind, key, payload)`` to ``events``."""
    params = _selectors(source)
    reduce = source.reduce or (lambda obj: obj)
    failures, failing_since, malformed = 0, None, 0
    while not stop.is_set():
        watcher = _k8s_watch.Watch()
        stream = None
        try:
            listing = _list(resource, source.namespace, params)
            items = {_name(item): reduce(item) for item in listing.get("items") or []}
            events.put((_LISTED, source.key, items))
            failures, failing_since = 0, None
            version = (listing.get("metadata") or {}).get("resourceVersion")
            # What resource.watch() sends, without its wrapping every event in a ResourceInstance (a tenth of a
            # millisecond per pod, in a thread that competes with the decisions): only the raw object is used.
            stream = watcher.stream(
                resource.get, namespace=source.namespace, resource_version=version, serialize=False, timeout_seconds=WATCH_SECONDS, **params
            )
            for event in stream:
                if stop.is_set():
                    return
                if not isinstance(event, dict):  # the kubernetes client yields None for a line that is not JSON
                    raise UndecodableEvent(f"an undecodable event in the watch of {source.kind}")
                kind = event.get("type")
                raw = event.get("raw_object")
                if raw is None:
                    raw = to_dict(event.get("object"))
                if kind == "ERROR":
                    if isinstance(raw, dict) and raw.get("code") == HTTP_GONE:
                        break
                    message = raw.get("message") if isinstance(raw, dict) else raw
                    raise K8sError(f"Watch error on {source.kind}: {message}")
                if kind in ("ADDED", "MODIFIED", "DELETED"):
                    events.put((kind, source.key, reduce(raw)))
            malformed = 0
        except (TypeError, KeyError, ValueError, UndecodableEvent) as exc:
            malformed += 1
            if malformed <= MALFORMED_STREAMS:
                continue
            if not stop.is_set():
                events.put((_FAILED, source.key, exc))
            return
        except Exception as exc:  # reported to the waiting thread, which raises it
            status = api_error_status(exc)
            if status == HTTP_GONE:
                continue
            if source.optional and status == HTTP_FORBIDDEN:
                events.put((_DROPPED, source.key, f"not watching {source.kind} in {source.namespace}: {api_error_message(exc)}"))
                return
            if _transient(status) and not isinstance(exc, K8sError):
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                if now - failing_since < TRANSIENT_SECONDS:
                    failures += 1
                    stop.wait(retry_pause(failures))
                    continue
            if not stop.is_set():
                events.put((_FAILED, source.key, exc))
            return
        finally:
            watcher.stop()
            close = getattr(stream, "close", None)
            if close is not None:
                close()


def _apply(snapshot, listed, item, notes):
    kind, key, payload = item
    if kind == _DROPPED:
        snapshot[key] = None  # unknown, as opposed to {} (listed, nothing there)
        listed.add(key)
        notes.append(payload)
        return
    if kind == _FAILED:
        exc = payload
        if isinstance(exc, K8sError):
            raise exc
        raise K8sError(f"Failed to watch {key}: {api_error_message(exc)}", status=api_error_status(exc)) from exc
    if kind == _LISTED:
        snapshot[key] = payload
        listed.add(key)
    elif kind == "DELETED":
        snapshot[key].pop(_name(payload), None)
    else:
        snapshot[key][_name(payload)] = payload


def observe(client, sources, on_change, timeout, on_timeout=None, tick=None, notes=None, clock=time.monotonic, throttle=None, resources=None):
    """Watch ``sources`` until ``on_change(snapshot)`` returns something other than None; return it.

    ``sources`` is a list of ``Source``; ``snapshot`` maps each ``Source.key`` to ``{name: object}``.
    ``on_change`` may act on the cluster (approve, patch); its own changes arrive as further events.
    With ``tick`` (seconds), ``on_change`` is also called when nothing happened for that long (for decisions that
    depend on time; no request is made). Messages about optional sources that could not be watched are appended
    to ``notes`` (a list). Connection errors, 5xx and 429 re-list the source until they have lasted
    ``TRANSIENT_SECONDS``; only then do they count.
    With ``throttle`` (a factor), a call of ``on_change`` that used ``t`` seconds of CPU (of its thread: waiting for
    the responses to its own requests does not count) is followed by the next one no sooner than ``t * throttle``
    seconds after it ended, and the events arriving meanwhile are applied together: for decisions that read many
    objects (a thousand pods), so that deciding uses at most about ``1 / (1 + throttle)`` of a CPU while events
    stream in, and a quiet watch is answered at once.
    ``resources`` maps source keys to resources already found (no discovery for those).
    ``on_change`` is called at least once, when every source has been listed, however short ``timeout`` is.
    Raises ``ResourceTimeoutError`` after ``timeout`` seconds, with ``on_timeout(snapshot)`` (a dict) as result.
    """
    resources = dict(resources or {})
    for source in sources:
        if resources.get(source.key) is None:
            resources[source.key] = find_resource(client, source.kind, source.api_version)
    events = queue.Queue()
    stop = threading.Event()
    snapshot = {source.key: {} for source in sources}
    listed = set()
    notes = notes if notes is not None else []
    start = clock()
    deadline = start + max(0, timeout)
    not_before = start  # throttle: no call of on_change before this time
    decided = False  # on_change was called at least once
    for source in sources:
        thread = threading.Thread(target=_follow, args=(resources[source.key], source, events, stop), name=f"observe-{source.key}")
        thread.daemon = True  # a watch blocked in a read must not keep the module process alive
        thread.start()
    try:
        while True:
            remaining = deadline - clock()
            if remaining <= 0 and decided:
                break
            try:
                if remaining <= 0:  # past the deadline: only the first listing is still awaited
                    item = events.get()
                else:
                    item = events.get(timeout=min(remaining, tick) if tick else remaining)
            except queue.Empty:
                item = None
            if item is not None:
                _apply(snapshot, listed, item, notes)
            while True:  # drain what arrived meanwhile: decide on the newest state only
                try:
                    if clock() < not_before:
                        item = events.get(timeout=max(0, min(not_before, deadline) - clock()))
                    else:
                        item = events.get_nowait()
                    _apply(snapshot, listed, item, notes)
                except queue.Empty:
                    break
            if len(listed) == len(sources):
                used = time.thread_time()
                decided = True
                outcome = on_change(snapshot)
                if outcome is not None:
                    return outcome
                if throttle:
                    not_before = clock() + (time.thread_time() - used) * throttle
    finally:
        stop.set()
    result = on_timeout(snapshot) if on_timeout else {}
    raise ResourceTimeoutError(
        f"Timed out after {timeout}s", last_object=None, duration=round(clock() - start, 3), result=result
    )
