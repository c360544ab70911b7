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

from lib.fakes import FakeDynamicClient

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
OLM_SERVED = frozenset(
    {(OPERATORS, "Subscription"), (OPERATORS, "ClusterServiceVersion"), (OPERATORS, "InstallPlan"), (PACKAGES, "PackageManifest")}
)


def olm_client(objects, served=None, **kwargs):
    """lib.fakes.FakeDynamicClient serving OLM v0's kinds and PackageManifests (or ``served``), asked only about
    ``NS`` (and cluster-scoped kinds) unless ``namespaces`` says otherwise."""
    kwargs.setdefault("namespaces", {NS})
    return FakeDynamicClient(objects, served=OLM_SERVED if served is None else served, **kwargs)


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
    return olm_client(objects, **kw)
