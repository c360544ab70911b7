# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM objects for the olm_operator_info unit tests, shaped after what the testbed's OLM v0.46 wrote for kube-demo
(``kubectl get ... -o json``, trimmed): a Subscription with Manual approval and startingCSV kube-demo.v0.0.1, its
first InstallPlan approved and Complete, the upgrade plan to kube-demo.v0.0.2 waiting for approval, and the
Succeeded CSV. PackageManifests follow packageserver's ``newPackageManifest`` (operator-lifecycle-manager v0.46.0
pkg/package-server/provider/registry.go): entries in the order the registry streams bundles, not upgrade order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

NS = "oi-scratch"
SUB_UID = "f736a70f-0a27-4a05-81dd-96a5a6f4ad39"


def subscription(
    name="kube-demo",
    package="kube-demo",
    installed="kube-demo.v0.0.1",
    current="kube-demo.v0.0.2",
    conditions=None,
    channel="stable",
    uid=SUB_UID,
    state="UpgradePending",
    plan="install-pfk2t",
):
    status = {
        "conditions": conditions
        if conditions is not None
        else [
            {
                "lastTransitionTime": "2026-11-23T15:14:04Z",
                "message": "all available catalogsources are healthy",
                "reason": "AllCatalogSourcesHealthy",
                "status": "False",
                "type": "CatalogSourcesUnhealthy",
            },
            {"lastTransitionTime": "2026-11-23T15:14:38Z", "reason": "RequiresApproval", "status": "True", "type": "InstallPlanPending"},
        ],
        "currentCSV": current,
        "installPlanGeneration": 2,
        "installPlanRef": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "name": plan, "namespace": NS},
        "lastUpdated": "2026-11-23T15:14:38Z",
        "state": state,
    }
    if installed:
        status["installedCSV"] = installed
    spec = {"installPlanApproval": "Manual", "name": package, "source": "demo", "sourceNamespace": NS, "startingCSV": "kube-demo.v0.0.1"}
    if channel:
        spec["channel"] = channel
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"labels": {f"operators.coreos.com/{package}.{NS}": ""}, "name": name, "namespace": NS, "uid": uid},
        "spec": spec,
        "status": status,
    }


def install_plan(name, csvs, phase, approved, generation, owner="kube-demo", owner_uid=SUB_UID):
    status = {"catalogSources": ["demo"], "phase": phase}
    if phase == "Complete":
        status["conditions"] = [{"lastTransitionTime": "2026-11-23T15:14:33Z", "status": "True", "type": "Installed"}]
    refs = [{"apiVersion": "operators.coreos.com/v1alpha1", "blockOwnerDeletion": False, "controller": False, "kind": "Subscription", "name": owner}]
    if owner_uid:
        refs[0]["uid"] = owner_uid
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {"generateName": "install-", "name": name, "namespace": NS, "ownerReferences": refs},
        "spec": {"approval": "Manual", "approved": approved, "clusterServiceVersionNames": csvs, "generation": generation},
        "status": status,
    }


FIRST_PLAN = install_plan("install-hknj6", ["kube-demo.v0.0.1"], "Complete", True, 1)
UPGRADE_PLAN = install_plan("install-pfk2t", ["kube-demo.v0.0.2"], "RequiresApproval", False, 2)


def csv(
    name="kube-demo.v0.0.1",
    version="0.0.1",
    phase="Succeeded",
    reason="InstallSucceeded",
    message="install strategy completed with no errors",
    copied_from=None,
):
    labels = {"olm.managed": "true", f"operators.coreos.com/kube-demo.{NS}": ""}
    if copied_from:
        labels["olm.copiedFrom"] = copied_from
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"finalizers": ["operators.coreos.com/csv-cleanup"], "labels": labels, "name": name, "namespace": NS},
        "spec": {"displayName": "Kube Demo", "version": version, "provider": {"name": "kubeforge.operators"}},
        "status": {"phase": phase, "reason": reason, "message": message},
    }


def package_manifest(package="kube-demo", source="demo", source_namespace=NS, channels=None, default="stable"):
    if channels is None:
        # packageserver lists entries in the order the registry streams bundles, not in upgrade order
        channels = [
            {
                "name": "stable",
                "currentCSV": "kube-demo.v0.0.2",
                "currentCSVDesc": {"displayName": "Kube Demo", "version": "0.0.2", "provider": {"name": "kubeforge.operators"}},
                "entries": [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}, {"name": "kube-demo.v0.0.1", "version": "0.0.1"}],
            }
        ]
    return {
        "apiVersion": "packages.operators.coreos.com/v1",
        "kind": "PackageManifest",
        "metadata": {
            "name": package,
            "namespace": NS,
            "labels": {
                "catalog": source,
                "catalog-namespace": source_namespace,
                "provider": "kubeforge.operators",
                "provider-url": "",
                "operatorframework.io/arch.amd64": "supported",
                "operatorframework.io/os.linux": "supported",
            },
        },
        "spec": {},
        "status": {
            "catalogSource": source,
            "catalogSourceDisplayName": "kube-demo test catalog",
            "catalogSourcePublisher": "",
            "catalogSourceNamespace": source_namespace,
            "provider": {"name": "kubeforge.operators"},
            "packageName": package,
            "channels": channels,
            "defaultChannel": default,
        },
    }


def channel(name, entries, head=None):
    head = head or (entries[0] if entries else ("", ""))
    return {
        "name": name,
        "currentCSV": head[0],
        "currentCSVDesc": {"version": head[1]},
        "entries": [{"name": n, "version": v} for n, v in entries],
    }


# ------------------------------------------------------------------ a dynamic client for the glue's requests

OPERATORS = "operators.coreos.com/v1alpha1"
PACKAGES = "packages.operators.coreos.com/v1"


class FakeResource:
    def __init__(self, kind):
        self.kind = kind


class FakeDiscovery:
    """Resources ``served`` as ``(api_version, kind)``; the cache lists the group versions in ``cached``."""

    def __init__(self, served, cached):
        self.served = served
        self.cached = cached
        self.lookups = []
        self.invalidations = 0

    def parse_api_groups(self, request_resources=False):
        assert request_resources is False
        groups = {}
        for api_version in self.cached:
            group, version = api_version.split("/")
            groups.setdefault(group, {})[version] = object()
        return {"api": {"": {"v1": object()}}, "apis": groups}

    def get(self, api_version, kind):
        self.lookups.append(kind)
        if (api_version, kind) not in self.served or api_version not in self.cached:
            raise ResourceNotFoundError(f"No matches found for {{'api_version': '{api_version}', 'kind': '{kind}'}}")
        return FakeResource(kind)

    def invalidate_cache(self):
        self.invalidations += 1
        self.cached = {api_version for api_version, _kind in self.served}


def api_exception(status, message):
    exc = ApiException(status=status, reason="Forbidden" if status == 403 else "Error")
    exc.body = json.dumps({"kind": "Status", "message": message, "code": status})
    return exc


def _matches(obj, label_selector, field_selector):
    labels = obj["metadata"].get("labels") or {}
    for term in filter(None, (label_selector or "").split(",")):
        if term.startswith("!"):
            if term[1:] in labels:
                return False
        else:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
    if field_selector:
        assert field_selector.startswith("metadata.name=")
        return obj["metadata"]["name"] == field_selector.split("=", 1)[1]
    return True


class FakeClient:
    """Just what find_resource, get_object and list_objects use of a dynamic client; records every request."""

    def __init__(self, objects, served=None, errors=None, cached=None):
        self.objects = objects  # kind -> list of dicts
        if served is None:
            served = {(OPERATORS, "Subscription"), (OPERATORS, "ClusterServiceVersion"), (OPERATORS, "InstallPlan"), (PACKAGES, "PackageManifest")}
        self.resources = FakeDiscovery(served, {api_version for api_version, _kind in served} if cached is None else cached)
        self.errors = errors or {}  # kind (or "discovery") -> ApiException
        self.requests = []

    def request(self, method, path):
        """A discovery document: ``/apis/<group>/<version>``."""
        self.requests.append(("discovery", method, path, None))
        if "discovery" in self.errors:
            raise self.errors["discovery"]
        if path[len("/apis/") :] not in {api_version for api_version, _kind in self.resources.served}:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return {"kind": "APIResourceList"}

    def get(self, resource, name=None, namespace=None, label_selector=None, field_selector=None):
        assert namespace == NS or (namespace is None and resource.kind == "ClusterExtension")
        self.requests.append((resource.kind, "GET" if name else "LIST", name or label_selector or None, field_selector))
        if resource.kind in self.errors:
            raise self.errors[resource.kind]
        items = self.objects.get(resource.kind, [])
        if name:
            for obj in items:
                if obj["metadata"]["name"] == name:
                    return obj
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return {"kind": resource.kind + "List", "items": [obj for obj in items if _matches(obj, label_selector, field_selector)]}


def cluster(**kw):
    objects = {
        "Subscription": [
            subscription(),
            subscription(name="other-sub", package="kube-other", uid="u2", installed=None, current="kube-other.v1.0.0", plan="install-other"),
        ],
        "ClusterServiceVersion": [csv(), csv("kube-elsewhere.v2.0.0", "2.0.0", copied_from="operators")],
        "InstallPlan": [
            FIRST_PLAN,
            UPGRADE_PLAN,
            install_plan("install-other", ["kube-other.v1.0.0"], "RequiresApproval", False, 3, owner="other-sub", owner_uid="u2"),
        ],
        "PackageManifest": [package_manifest(), package_manifest(package="kube-other"), package_manifest(source="community", source_namespace="olm")],
    }
    return FakeClient(objects, **kw)
