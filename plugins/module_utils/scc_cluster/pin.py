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

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import HTTP_CONFLICT, retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pin as core

SCC_API = "security.openshift.io/v1"
SCC_KIND = "SecurityContextConstraints"


def prepare(cluster, params, scc, subjects=()):
    """``(changes, warnings)`` for ``params["pin_workloads"]``: one ``PinChange`` per workload, nothing written yet."""
    pins = core.parse_pins(params.get("pin_workloads"), params.get("namespace"))
    if pins and params["state"] == "present":
        _require_scc(cluster, scc)
    granted = {"%s/%s" % (s.get("namespace"), s.get("name")) for s in subjects if s.get("kind") == "ServiceAccount"}
    changes, warnings = [], []
    for pin in pins:
        obj = cluster.get(pin.kind, pin.name, pin.namespace, core.PIN_KINDS[pin.kind][0])
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


def _require_scc(cluster, scc):
    """Pods pinned to an SCC that does not exist are all rejected: refuse to pin to one (where the SCC API exists)."""
    try:
        cluster.resource(SCC_KIND, SCC_API)
    except K8sError:
        return  # no SCC API (the Pod Security fallback): the annotation is stored and means nothing here
    if cluster.get(SCC_KIND, scc, None, SCC_API) is None:
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


def _patch_pin(cluster, item, scc):
    """Send the pin's patch, guarded by the resourceVersion it was decided on; on a conflict (any change meanwhile,
    also the controller's status update of a workload just created) read the object again and decide again, so a
    concurrent change of the annotation itself is seen, and refused or respected, by ``core.change``. The
    annotation after."""
    pin, api_version = item.pin, core.PIN_KINDS[item.pin.kind][0]
    state = "present" if item.action == "pin" else "absent"
    decided = [item]  # the first attempt sends the patch decided before; later ones decide again

    def attempt():
        change = decided.pop() if decided else None
        if change is None:
            fresh = cluster.get(pin.kind, pin.name, pin.namespace, api_version)
            if fresh is None:
                raise K8sError(f"{core.describe(pin)} was deleted meanwhile", status=404)
            change = core.change(pin, fresh, scc, state)
            if change.action is None:
                return change.previous
        patched = cluster.patch(pin.kind, pin.name, change.patch, pin.namespace, api_version).after
        return core.pinned_scc(patched, pin.kind) if patched else None

    # a merge patch: 422 is an invalid change (a started Job's template), never a changed object
    return retry_guarded(attempt, core.describe(pin), guards=(HTTP_CONFLICT,))


def write(cluster, changes, scc, result):
    """Apply the pin changes; add ``pinned`` (one entry per workload) and the pins to ``result``'s diff."""
    if not changes:
        return result
    entries, before, after = [], {}, {}
    for item in changes:
        key = core.describe(item.pin)
        current = item.previous
        if item.action is not None:
            try:
                current = _patch_pin(cluster, item, scc)
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
