# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the pod_security module: patch a namespace's Pod Security labels and report the pods the API
server says the new ``enforce`` level would reject (its ``Warning`` headers)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import diff_view
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import patch_with_warnings
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pod_security as ps


class PodSecurityRefused(KubeforgeError):
    """The new enforce level would reject running pods and the user asked not to go on."""


def _psa_labels(obj):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {k: v for k, v in labels.items() if k in ps.managed_keys()}


def apply(cluster, params, check_mode):
    """Set (or, with ``state=absent``, restore) the namespace's Pod Security labels; returns the module result."""
    name = params["namespace"]
    before = cluster.get("Namespace", name, None)
    if before is None:
        raise KubeforgeError(f"namespace {name} does not exist")
    metadata = before.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    result = {"changed": False, "namespace": name, "labels": _psa_labels(before), "violations": {}, "messages": []}

    if params["state"] == "absent":
        patch = ps.restore_patch(annotations)
        if patch is None:
            return result
    else:
        if all(params.get(mode) is None and params.get(mode + "_version") is None for mode in ps.MODES) and params.get("label_sync") is None:
            raise KubeforgeError("state=present needs at least one of enforce, audit, warn, their _version options or label_sync")
        try:
            wanted = ps.wanted_labels(
                {mode: params.get(mode) for mode in ps.MODES},
                {mode: params.get(mode + "_version") for mode in ps.MODES},
                params.get("label_sync"),
            )
        except ps.PodSecurityError as exc:
            raise KubeforgeError(str(exc)) from exc
        changes = ps.label_changes(labels, wanted)
        if not changes:
            return result
        patch = {"metadata": {"labels": changes}}
        record = ps.record_previous(labels, annotations, ps.managed_keys())
        if record is not None:
            patch["metadata"]["annotations"] = {ps.PREVIOUS_ANNOTATION: record}
    # check mode predicts the refusal too: its dry run is the one fail_on_violations makes
    # the Warning headers admission sends are not part of the object: one request that returns them
    client, resource = cluster.client, cluster.resource("Namespace")
    after, warnings = patch_with_warnings(client, resource, name, patch, dry_run=check_mode or bool(params.get("fail_on_violations")))
    messages, pods = ps.violations(ps.warning_texts(warnings))
    if params.get("fail_on_violations"):  # (refused with state=absent)
        if pods:
            raise PodSecurityRefused(
                f"the new Pod Security levels of namespace {name} would reject {len(pods)} running pod(s) "
                f"({', '.join(sorted(pods))}); labels not changed (fail_on_violations=true)",
                result={"violations": pods, "messages": messages, "labels": _psa_labels(after)},
            )
        if not check_mode:
            after, warnings = patch_with_warnings(client, resource, name, patch)
    result.update(changed=True, labels=_psa_labels(after), violations=pods, messages=messages)
    result["diff"] = diff_view(_psa_labels(before), _psa_labels(after), key="labels")
    return result


def execute(module):
    """The module's entry point (``KubeforgeModule.run``)."""
    return apply(module.cluster, module.params, module.check_mode)
