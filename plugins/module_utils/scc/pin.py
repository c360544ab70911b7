# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pinning workloads to an SCC with the ``openshift.io/required-scc`` pod annotation (pure).

OpenShift 4.14+ tries only the SCC a pod names in ``openshift.io/required-scc`` (scc.md sections 1 and 4), so a
pinned workload cannot be admitted under a broader SCC its service account may also use (``anyuid`` with priority 10).
The annotation goes on the workload's pod template; changing the template rolls Deployments, DaemonSets and
StatefulSets (new pods), affects only new pods of ReplicaSets and CronJobs, and is refused by the API server for a
Job that has started (its template is immutable).

Pin: set the annotation to the SCC; a template pinned to another SCC is refused rather than re-pinned. Unpin: remove
the annotation only when it names this SCC. Patches carry the object's ``resourceVersion``, so a concurrent change
fails the request instead of being overwritten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt

REQUIRED_SCC_ANNOTATION = "openshift.io/required-scc"

# kind -> (apiVersion, path of the pod template in the object)
PIN_KINDS = {
    "Deployment": ("apps/v1", ("spec", "template")),
    "DaemonSet": ("apps/v1", ("spec", "template")),
    "StatefulSet": ("apps/v1", ("spec", "template")),
    "ReplicaSet": ("apps/v1", ("spec", "template")),
    "Job": ("batch/v1", ("spec", "template")),
    "CronJob": ("batch/v1", ("spec", "jobTemplate", "spec", "template")),
}
_MAX_PINS = 64

Pin = namedtuple("Pin", ["kind", "name", "namespace"])

# action: "pin", "unpin" or None (nothing to do); previous: the annotation before; patch: merge patch or None.
PinChange = namedtuple("PinChange", ["pin", "action", "previous", "patch"])


class PinError(KubeforgeError):
    """A pin request that is malformed or would override another SCC's pin."""


def describe(pin):
    return "%s %s/%s" % (pin.kind, pin.namespace, pin.name)


def parse_pins(items, default_namespace=None):
    """``[{kind, name, namespace}]`` -> ``[Pin]``; ``namespace`` defaults to ``default_namespace``."""
    if items in (None, []):
        return []
    if not isinstance(items, list) or len(items) > _MAX_PINS:
        raise PinError("pin_workloads must be a list of at most %d {kind, name, namespace} mappings" % _MAX_PINS)
    pins = []
    for item in items:
        if not isinstance(item, dict) or any(k not in ("kind", "name", "namespace") for k in item):
            raise PinError("pin_workloads entries are {kind, name, namespace} mappings, got %s" % excerpt(repr(item), 120))
        kind, name, namespace = item.get("kind"), item.get("name"), item.get("namespace") or default_namespace
        if kind not in PIN_KINDS:
            raise PinError("pin_workloads kind must be one of %s, got %s" % (", ".join(PIN_KINDS), excerpt(repr(kind), 80)))
        for what, value in (("name", name), ("namespace", namespace)):
            if not isinstance(value, str) or not value or value != value.strip() or "/" in value:
                raise PinError(
                    "pin_workloads %s of a %s must be a non-empty name (set it, or the module's namespace), got %s" % (what, kind, excerpt(repr(value), 80))
                )
        pin = Pin(kind, name, namespace)
        if pin not in pins:
            pins.append(pin)
    return pins


def _template(obj, kind):
    node = obj
    for key in PIN_KINDS[kind][1]:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        raise PinError("%s %s has no pod template" % (kind, ((obj or {}).get("metadata") or {}).get("name")))
    return node


def pinned_scc(obj, kind):
    """The SCC the workload's pod template is pinned to, or None."""
    return ((_template(obj, kind).get("metadata") or {}).get("annotations") or {}).get(REQUIRED_SCC_ANNOTATION) or None


def _patch(obj, kind, value):
    """A merge patch setting (``value``) or removing (None) the annotation, guarded by the resourceVersion."""
    inner = {"metadata": {"annotations": {REQUIRED_SCC_ANNOTATION: value}}}
    for key in reversed(PIN_KINDS[kind][1]):
        inner = {key: inner}
    inner["metadata"] = {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")}
    return inner


def change(pin, obj, scc, state):
    """What pinning (``state=present``) or unpinning (``absent``) ``pin`` to ``scc`` does to the object ``obj``."""
    previous = pinned_scc(obj, pin.kind)
    if state == "present":
        if previous == scc:
            return PinChange(pin, None, previous, None)
        if previous is not None:
            raise PinError(
                "%s is pinned to SCC %s, not %s: unpin it first (scc_access with scc=%s, state=absent and the same "
                "pin_workloads entry)" % (describe(pin), previous, scc, previous)
            )
        return PinChange(pin, "pin", previous, _patch(obj, pin.kind, scc))
    if previous != scc:
        return PinChange(pin, None, previous, None)  # not pinned, or pinned by someone else to another SCC: left alone
    return PinChange(pin, "unpin", previous, _patch(obj, pin.kind, None))


def service_account_of(obj, kind):
    """``namespace/name`` of the service account the workload's pods run as."""
    spec = _template(obj, kind).get("spec") or {}
    namespace = (obj.get("metadata") or {}).get("namespace")
    return "%s/%s" % (namespace, spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
