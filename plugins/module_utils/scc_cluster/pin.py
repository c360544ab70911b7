# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of scc_access's ``pin_workloads``: read the workloads, then set or remove the
``openshift.io/required-scc`` annotation of their pod templates (rules in ``scc/pin.py``).

``prepare`` reads every workload and decides before anything is written (a missing workload or one pinned to another
SCC fails the task before the grant); ``write`` sends the guarded merge patches (server-side dry run in check mode,
through the client) and adds the results and the diff.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object, patch_object
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pin as core

SCC_API = "security.openshift.io/v1"
SCC_KIND = "SecurityContextConstraints"


def prepare(client, params, scc, subjects=()):
    """``(changes, warnings)`` for ``params["pin_workloads"]``: one ``PinChange`` per workload, nothing written yet."""
    pins = core.parse_pins(params.get("pin_workloads"), params.get("namespace"))
    if pins and params["state"] == "present":
        _require_scc(client, scc)
    granted = {"%s/%s" % (s.get("namespace"), s.get("name")) for s in subjects if s.get("kind") == "ServiceAccount"}
    changes, warnings = [], []
    for pin in pins:
        api_version = core.PIN_KINDS[pin.kind][0]
        obj = get_object(client, find_resource(client, pin.kind, api_version), pin.name, pin.namespace)
        if obj is None:
            if params["state"] == "present":
                raise core.PinError("cannot pin %s to SCC %s: it does not exist" % (core.describe(pin), scc))
            changes.append(core.PinChange(pin, None, None, None))
            continue
        changes.append(core.change(pin, obj, scc, params["state"]))
        account = core.service_account_of(obj, pin.kind)
        if params["state"] == "present" and subjects and account not in granted:
            warnings.append(
                f"the pods of {core.describe(pin)} run as service account {account}, which this task does not grant SCC {scc}: "
                "OpenShift rejects them unless that account may use it otherwise"
            )
    return changes, warnings


def _require_scc(client, scc):
    """Pods pinned to an SCC that does not exist are all rejected: refuse to pin to one (where the SCC API exists)."""
    try:
        resource = find_resource(client, SCC_KIND, SCC_API)
    except K8sError:
        return  # no SCC API (the Pod Security fallback): the annotation is stored and means nothing here
    if get_object(client, resource, scc) is None:
        raise core.PinError(f"cannot pin workloads to SCC {scc}: it does not exist, and OpenShift would reject every pod pinned to it")


def _brief(text, head=200, tail=100):
    """A long API message cut in the middle: validation errors quote the whole object and end with the reason."""
    if len(text) <= head + tail:
        return text
    return f"{text[:head]} … ({len(text) - head - tail} characters left out) … {text[-tail:]}"


def _entry(item, current):
    return {
        "kind": item.pin.kind,
        "name": item.pin.name,
        "namespace": item.pin.namespace,
        "previous": item.previous,
        "required_scc": current,
        "changed": item.action is not None,
    }


# A patch guarded by the resourceVersion conflicts with any change meanwhile, also the controller's status updates
# of a workload just created; it is decided again on the object as it is then, this many times at most.
CONFLICT_ATTEMPTS = 5


def _patch_pin(client, resource, item, scc):
    """Send the pin's patch; on a conflict read the object again and decide again (a concurrent change of the
    annotation itself is then seen, and refused or respected, by ``core.change``). The annotation after."""
    state = "present" if item.action == "pin" else "absent"
    for attempt in range(CONFLICT_ATTEMPTS):
        try:
            patched = patch_object(client, resource, item.pin.name, item.patch, item.pin.namespace).after
            return core.pinned_scc(patched, item.pin.kind) if patched else None
        except K8sError as exc:
            if exc.status != 409 or attempt == CONFLICT_ATTEMPTS - 1:
                raise
        fresh = get_object(client, resource, item.pin.name, item.pin.namespace)
        if fresh is None:
            raise K8sError(f"{core.describe(item.pin)} was deleted meanwhile", status=404)
        item = core.change(item.pin, fresh, scc, state)
        if item.action is None:
            return item.previous
    return None  # not reached: the last attempt returns or raises


def write(client, changes, scc, result):
    """Apply the pin changes; add ``pinned`` (one entry per workload) and the pins to ``result``'s diff."""
    if not changes:
        return result
    entries, before, after = [], {}, {}
    for item in changes:
        key = core.describe(item.pin)
        current = item.previous
        if item.action is not None:
            resource = find_resource(client, item.pin.kind, core.PIN_KINDS[item.pin.kind][0])
            try:
                current = _patch_pin(client, resource, item, scc)
            except K8sError as exc:
                hint = " (a Job's pod template cannot change once the Job has started: pin it in its manifest)" if item.pin.kind == "Job" else ""
                message = f"cannot {item.action} {key} (SCC {scc}){hint}: {_brief(str(exc))}"
                raise K8sError(message, status=exc.status, result=dict(result, pinned=entries)) from None
        entries.append(_entry(item, current))
        before[key], after[key] = item.previous, current
    result["pinned"] = entries
    result["changed"] = result.get("changed", False) or any(e["changed"] for e in entries)
    diff = result.setdefault("diff", {"before": {}, "after": {}})
    diff.setdefault("before", {})["pinned"] = before
    diff.setdefault("after", {})["pinned"] = after
    return result
