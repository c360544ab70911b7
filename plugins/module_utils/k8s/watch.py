# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for one object: ``watch_until`` returns as soon as the named object satisfies a predicate.

It is ``observe.observe`` with one source (the object's kind, namespace and name): the same list-then-watch loop,
re-list on 410 Gone or a closed stream, monotonic deadline, and an API server that restarts (connection refused,
5xx, 429) is waited for up to ``observe.TRANSIENT_SECONDS``. There is one watch engine in the collection.

Predicates are pure functions ``predicate(obj) -> bool`` of a plain dict (or ``None`` when the object does not
exist), so they are unit-testable without a cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import object_ref
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe


def exists(obj):
    """Predicate: the object exists."""
    return obj is not None


def absent(obj):
    """Predicate: the object does not exist."""
    return obj is None


def watch_until(client, api_version, kind, name, namespace, predicate, timeout, resource=None, tick=None):
    """Wait until the named object satisfies ``predicate``; return the object (dict, or None if ``absent``).

    ``client`` is a kubernetes.core ``K8SClient`` (or a dynamic client); ``resource`` may be passed to skip
    discovery. ``timeout`` is in seconds; the object is checked once even when it is 0. With ``tick`` (seconds) the
    predicate is also asked again when nothing changed for that long (for verdicts that depend on time). Raises
    ``ResourceTimeoutError`` (with ``last_object``) on timeout and ``K8sError`` on API errors.
    """
    seen = [None]
    key = f"{kind} {object_ref(name, namespace)}"  # the source's key names the object in observe's errors

    def on_change(snapshot):
        seen[0] = snapshot[key].get(name)
        return (seen[0],) if predicate(seen[0]) else None

    source = Source(key, api_version, kind, namespace, name)
    try:
        return observe(client, [source], on_change, timeout, tick=tick, resources={key: resource})[0]
    except ResourceTimeoutError as exc:
        raise ResourceTimeoutError(f"Timed out after {timeout}s waiting for {key}", last_object=seen[0], duration=exc.duration) from None
