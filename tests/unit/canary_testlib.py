# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A DaemonSet cluster for the canary glue's unit tests: API objects (a DaemonSet on four nodes, its pods and
ControllerRevisions, nodes, an OperatorCondition) and ``CanaryClient``, olm_info_testlib's FakeClient (discovery, GET
and LIST by label selector, every request recorded) with the writes a canary rollout sends: JSON patches (applied,
``test`` operations checked like the API server does), deletes and creates. With ``dry_run`` it answers writes
without storing them, like kubernetes.core's client in check mode; ``failures[kind]`` lists exceptions the next writes
of that kind raise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from kubernetes.dynamic.exceptions import NotFoundError
from olm_info_testlib import NS, FakeClient, api_exception

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as uc

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
        "metadata": {"name": "op.v1", "namespace": "operators", "resourceVersion": "7"},
        "spec": {"conditions": list(conditions)},
    }


OTHER_CONDITION = {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "fine", "lastTransitionTime": "2026-01-01T00:00:00Z"}


def apply_json_patch(obj, ops):
    """RFC 6902 add/replace/remove/test on objects; a failed ``test`` answers 422 like the API server."""
    obj = copy.deepcopy(obj)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = obj
        for part in parts[:-1]:
            parent = parent[part]
        last = parts[-1]
        if op["op"] == "test":
            if parent.get(last) != op["value"]:
                raise api_exception(422, f"the server rejected our request due to an error in our request: test failed at {op['path']}")
        elif op["op"] in ("add", "replace"):
            parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[last]
    return obj


class CanaryClient(FakeClient):
    """FakeClient plus the writes of a canary rollout, keyed by kind; ``failures[kind]`` lists exceptions the next
    writes of that kind raise, in order."""

    def __init__(self, objects, dry_run=False):
        super().__init__(objects, served=set(SERVED))  # a copy: tests take kinds away
        self.dry_run = dry_run
        self.failures = {}
        self.version = 1000

    def get(self, resource, name=None, namespace=None, label_selector=None, field_selector=None):
        if resource.kind == "Node":  # cluster-scoped: FakeClient.get only knows namespaced kinds
            assert namespace is None and name is None
            return super().get(resource, namespace=NS, label_selector=label_selector, field_selector=field_selector)
        if resource.kind == uc.KIND:
            self.requests.append((uc.KIND, "GET", name, None))
            for obj in self.objects.get(uc.KIND, []):
                if obj["metadata"]["name"] == name and obj["metadata"]["namespace"] == namespace:
                    return copy.deepcopy(obj)
            raise NotFoundError(api_exception(404, "not found"))
        return copy.deepcopy(super().get(resource, name=name, namespace=namespace, label_selector=label_selector, field_selector=field_selector))

    def _fail(self, kind):
        queue = self.failures.get(kind) or []
        if queue:
            raise queue.pop(0)

    def _find(self, kind, name):
        for index, obj in enumerate(self.objects.get(kind, [])):
            if obj["metadata"]["name"] == name:
                return index, obj
        raise NotFoundError(api_exception(404, "not found"))

    def patch(self, resource, body, name=None, namespace=None, content_type=None):
        assert content_type == "application/json-patch+json"
        self.requests.append((resource.kind, "PATCH", name, json.dumps(body)))
        self._fail(resource.kind)
        index, obj = self._find(resource.kind, name)
        after = apply_json_patch(obj, body)
        self.version += 1
        after["metadata"]["resourceVersion"] = str(self.version)
        if not self.dry_run:
            self.objects[resource.kind][index] = after
        return copy.deepcopy(after)

    def delete(self, resource, name=None, namespace=None):
        self.requests.append((resource.kind, "DELETE", name, None))
        self._fail(resource.kind)
        index, _obj = self._find(resource.kind, name)
        if not self.dry_run:
            del self.objects[resource.kind][index]
        return {"kind": "Status", "status": "Success"}

    def create(self, resource, body, namespace=None):
        self.requests.append((resource.kind, "CREATE", body["metadata"].get("generateName"), None))
        self._fail(resource.kind)
        if not self.dry_run:
            self.objects.setdefault(resource.kind, []).append(copy.deepcopy(body))
        return copy.deepcopy(body)

    def writes(self, kind=None):
        return [r for r in self.requests if r[1] in ("PATCH", "DELETE", "CREATE") and (kind is None or r[0] == kind)]

    def ds(self):
        return self.objects["DaemonSet"][0]


def cluster(ds=None, pods=None, revisions=None, nodes=(), conditions=None, dry_run=False):
    objects = {
        "DaemonSet": [ds or daemonset()],
        "Pod": [pod(n, H1) for n in NODES] if pods is None else pods,
        "ControllerRevision": [revision(H1, V1, 1)] if revisions is None else revisions,
        "Node": list(nodes),
    }
    if conditions is not None:
        objects[uc.KIND] = [operator_condition(*conditions)]
    return CanaryClient(objects, dry_run=dry_run)


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
        "on_failure": "halt",
        "canary_nodes": None,
        "canary_node_selector": None,
        "pause_after_canary": False,
        "wait": False,
        "wait_timeout": 60,
        "operator_condition": None,
        "operator_condition_namespace": None,
    }
    values.update(kwargs)
    return values
