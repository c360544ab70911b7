# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A DaemonSet cluster for the canary glue's unit tests: API objects (a DaemonSet on four nodes, its pods and
ControllerRevisions, nodes, an OperatorCondition) in lib.fakes.FakeDynamicClient, which answers the reads and the
writes a canary rollout sends: JSON patches (applied, ``test`` operations checked like the API server does), deletes
and creates. With ``dry_run`` it answers writes without storing them, like kubernetes.core's client in check mode;
``failures[kind]`` lists exceptions the next writes of that kind raise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as uc
from lib.fakes import FakeDynamicClient
from lib.olm_info import NS

V1 = "example.invalid/agent:v1"
V2 = "example.invalid/agent:v2"
H1, H2 = "6d5f8b9c4", "7f9c6d8b5"
NODES = ("n1", "n2", "n3", "n4")
SERVED = {
    ("apps/v1", "DaemonSet"),
    ("v1", "Pod"),
    ("apps/v1", "ControllerRevision"),
    ("v1", "Event"),
    ("v1", "Node"),
    (uc.API_VERSION, uc.KIND),
}
OPERATOR_NAMESPACE = "operators"  # the OperatorCondition's
ORIGINAL = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}


def template(image, init=None):
    spec = {"containers": [{"name": "agent", "image": image}, {"name": "sidecar", "image": "example.invalid/sidecar:v1"}]}
    if init:
        spec["initContainers"] = [{"name": "setup", "image": init}]
    return {"metadata": {"labels": {"app": "agent"}}, "spec": spec}


def daemonset(image=V1, annotations=None, updated=4, strategy=None):
    meta = {"name": "agent", "namespace": NS, "uid": "ds-uid", "generation": 5, "resourceVersion": "100"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta,
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template(image), "updateStrategy": strategy or ORIGINAL},
        "status": {"observedGeneration": 5, "desiredNumberScheduled": 4, "updatedNumberScheduled": updated, "numberAvailable": 4},
    }


def pod(node, revision_hash):
    return {
        "metadata": {
            "name": f"agent-{revision_hash[:3]}-{node}",
            "namespace": NS,
            "labels": {"app": "agent", "controller-revision-hash": revision_hash},
            "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True}],
        },
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [{"name": "agent", "ready": True, "restartCount": 0}]},
    }


def revision(revision_hash, image, number):
    return {
        "metadata": {
            "name": f"agent-{revision_hash}",
            "namespace": NS,
            "labels": {"app": "agent", "controller-revision-hash": revision_hash},
            "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True}],
        },
        "revision": number,
        "data": {"spec": {"template": dict(template(image), **{"$patch": "replace"})}},
    }


def node(name, labels):
    return {"metadata": {"name": name, "labels": labels}}


def operator_condition(*conditions):
    return {
        "apiVersion": uc.API_VERSION,
        "kind": uc.KIND,
        "metadata": {"name": "op.v1", "namespace": OPERATOR_NAMESPACE, "resourceVersion": "7"},
        "spec": {"conditions": list(conditions)},
    }


OTHER_CONDITION = {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "fine", "lastTransitionTime": "2026-01-01T00:00:00Z"}


def cluster(ds=None, pods=None, revisions=None, nodes=(), conditions=None, dry_run=False):
    objects = {
        "DaemonSet": [ds or daemonset()],
        "Pod": [pod(n, H1) for n in NODES] if pods is None else pods,
        "ControllerRevision": [revision(H1, V1, 1)] if revisions is None else revisions,
        "Node": list(nodes),
    }
    if conditions is not None:
        objects[uc.KIND] = [operator_condition(*conditions)]
    return FakeDynamicClient(objects, served=SERVED, namespaces={NS, OPERATOR_NAMESPACE}, dry_run=dry_run)


def params(**kwargs):
    values = {
        "name": "agent",
        "namespace": NS,
        "template": None,
        "images": {"agent": V2},
        "batch": "50%",
        "canary_timeout": 300,
        "rollout_timeout": 1800,
        "crash_restarts": 3,
        "canary_ready_seconds": 5,
        "on_failure": "halt",
        "canary_nodes": None,
        "canary_node_selector": None,
        "pause_after_canary": False,
        "wait": False,
        "wait_timeout": 3600,
        "operator_condition": None,
        "operator_condition_namespace": None,
    }
    values.update(kwargs)
    return values
