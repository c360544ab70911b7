"""olmv1/diagnose.py: one table of ClusterExtension snapshots, each with the causes it must name (and a healthy one
that names none). operator-controller's messages are those of v1.5.1 on the testbed (tests/integration/olmv1)."""

import pytest
from lib.samples import real_kubelet_crash_loop_pod

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as dg
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import diagnose as dv1

NS = "kf-v1demo"


def cond(kind, value, reason, message="", generation=1):
    return {"type": kind, "status": value, "reason": reason, "message": message, "observedGeneration": generation}


def extension(progressing=None, installed=None, service_account=None):
    conditions = [c for c in (progressing, installed) if c]
    spec = {"namespace": NS, "source": {"sourceType": "Catalog", "catalog": {"packageName": "kube-v1demo"}}}
    if service_account:
        spec["serviceAccount"] = {"name": service_account}
    return {"metadata": {"name": "kf-v1demo", "generation": 1}, "spec": spec, "status": {"conditions": conditions}}


def catalog(name="kubeforge", serving=True, progressing_message=""):
    obj = {
        "metadata": {"name": name, "generation": 1},
        "spec": {"source": {"type": "Image", "image": {"ref": f"registry.test/{name}:v1"}}},
        "status": {"conditions": [cond("Progressing", "True", "Succeeded" if serving else "Retrying", progressing_message)]},
    }
    if serving:
        obj["status"]["conditions"].append(cond("Serving", "True", "Available"))
        obj["status"]["resolvedSource"] = {"image": {"ref": f"registry.test/{name}@sha256:" + "a" * 64}}
        obj["status"]["urls"] = {"base": f"https://catalogd-service.olmv1-system.svc/catalogs/{name}"}
    return obj


def deployment(name, namespace=NS, available=True):
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1},
        "status": {
            "conditions": [cond("Available", "True" if available else "False", "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable")]
        },
    }


def replicaset(name, owner):
    return {"metadata": {"name": name, "namespace": NS, "ownerReferences": [{"kind": "Deployment", "name": owner}], "annotations": {}}}


HEALTHY = cond("Progressing", "True", "Succeeded", "desired state reached")
INSTALLED = cond("Installed", "True", "Succeeded", "Installed bundle registry.test/kube-v1demo-bundle:v0.1.0 successfully")


def retrying(message):
    return cond("Progressing", "True", "Retrying", message)


def snapshot(ext, **lists):
    snap = {"extension": ext, "namespace": NS, "serviceaccount": {"metadata": {"name": "installer"}}, "clustercatalogs": [catalog()]}
    snap["controllers"] = [deployment("operator-controller-controller-manager", "olmv1-system"), deployment("catalogd-controller-manager", "olmv1-system")]
    snap.update(lists)
    return snap


crash = real_kubelet_crash_loop_pod()
crash["metadata"].update(namespace=NS, ownerReferences=[{"kind": "ReplicaSet", "name": "kube-v1demo-controller-manager-abc"}])

CASES = [
    ("healthy", snapshot(extension(HEALTHY, INSTALLED)), []),
    (
        "no bundle in the catalogs",
        snapshot(extension(retrying('no bundles found for package "kube-v1demo" matching version "9.9.9"'))),
        ["ResolutionFailed"],
    ),
    (
        "an OwnNamespace-only bundle",
        snapshot(extension(retrying("supported install modes [OwnNamespace] do not support targeting all namespaces"))),
        ["InstallModeMismatch"],
    ),
    (
        "a CRD of OLM v0",
        snapshot(
            extension(
                retrying('CustomResourceDefinition "kubev1demos.demo.kubeforge.io" already exists in namespace "" and cannot be managed by operator-controller')
            )
        ),
        ["OwnershipConflict"],
    ),
    (
        "the installer ServiceAccount is gone",
        snapshot(extension(retrying('unable to get service account: missing ServiceAccount "installer"'), service_account="installer"), serviceaccount=None),
        ["ServiceAccountMissing"],
    ),
    (
        "the installer ServiceAccount is gone, before operator-controller says so",
        snapshot(extension(HEALTHY, INSTALLED, service_account="installer"), serviceaccount=None),
        ["ServiceAccountMissing"],
    ),
    (
        "missing permissions",
        snapshot(extension(retrying("pre-authorization failed: service account requires the following permissions to manage cluster extension: ..."))),
        ["InsufficientPermissions"],
    ),
    (
        "a bundle image that cannot be pulled",
        snapshot(extension(retrying("error pulling image registry.test/kube-v1demo-bundle:v9: manifest unknown"))),
        ["BundleUnpackFailed"],
    ),
    ("a terminal error", snapshot(extension(cond("Progressing", "False", "Blocked", "the bundle cannot be upgraded"))), ["ExtensionBlocked"]),
    (
        "a bundle OLM v1 does not install",
        snapshot(extension(retrying("unsupported bundle: bundle contains webhook definitions"))),
        ["BundleInvalid"],
    ),
    (
        "an invalid version range",
        snapshot(extension(retrying('desired version range ">=1.0 <<2" is invalid: improper constraint'))),
        ["InvalidRequest"],
    ),
    (
        "a catalog that is not served blocks every resolution",
        snapshot(
            extension(
                retrying('error walking catalogs: error getting package "kube-v1demo" from catalog "missing-tag": catalog "missing-tag" is not being served')
            ),
            clustercatalogs=[catalog(), catalog("missing-tag", serving=False, progressing_message="manifest unknown")],
        ),
        ["ResolutionBlocked", "CatalogNotServing"],
    ),
    ("another retried error", snapshot(extension(retrying("connection refused"))), ["Retrying"]),
    ("not reconciled yet", snapshot(extension()), ["NotReconciled"]),
    (
        "a catalog that is not serving",
        snapshot(
            extension(HEALTHY, INSTALLED),
            clustercatalogs=[
                catalog(),
                catalog("missing-tag", serving=False, progressing_message="reading manifest v9 in registry.test/missing-tag: manifest unknown"),
            ],
        ),
        ["CatalogNotServing"],
    ),
    ("no catalog at all", snapshot(extension(retrying('no bundles found for package "kube-v1demo"')), clustercatalogs=[]), ["ResolutionFailed", "NoCatalog"]),
    (
        "operator-controller is down",
        snapshot(extension(HEALTHY, INSTALLED), controllers=[deployment("operator-controller-controller-manager", "olmv1-system", available=False)]),
        ["OLMv1ControllerUnavailable"],
    ),
    (
        "operator-controller has not acted on the extension's last change (a controller outside a Deployment)",
        snapshot(dict(extension(HEALTHY, INSTALLED), metadata={"name": "kf-v1demo", "generation": 2}), controllers=[]),
        ["OLMv1ControllerUnavailable"],
    ),
    (
        "catalogd has not acted on a catalog's last change",
        snapshot(extension(HEALTHY, INSTALLED), clustercatalogs=[dict(catalog(), metadata={"name": "kubeforge", "generation": 3})]),
        ["OLMv1ControllerUnavailable"],
    ),
    (
        "the installed operator crash-loops",
        snapshot(
            extension(HEALTHY, INSTALLED),
            deployments=[deployment("kube-v1demo-controller-manager")],
            replicasets=[replicaset("kube-v1demo-controller-manager-abc", "kube-v1demo-controller-manager")],
            pods=[crash],
        ),
        ["CrashLoop"],
    ),
    (
        "a crash-looping pod the extension did not install",
        snapshot(extension(HEALTHY, INSTALLED), replicasets=[replicaset("kube-v1demo-controller-manager-abc", "someone-else")], pods=[crash]),
        [],
    ),
]


@pytest.mark.parametrize("snap, causes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_diagnose_names_each_cause(snap, causes):
    findings = dv1.diagnose(snap)
    assert [f.cause for f in findings] == causes, findings
    for finding in findings:
        assert finding.message and finding.fix and finding.objects, finding


def test_the_message_is_operator_controllers_and_the_summary_names_the_extension():
    message = 'no bundles found for package "kube-v1demo" matching version "9.9.9"'
    findings = dv1.diagnose(snapshot(extension(retrying(message))))
    assert findings[0].message == f"ClusterExtension kf-v1demo (Progressing=True/Retrying): {message}"
    lines = dg.summary(findings, None, subject="ClusterExtension kf-v1demo")
    assert lines[0] == "ClusterExtension kf-v1demo: 1 finding(s)" and lines[1].startswith("- ResolutionFailed: ClusterExtension kf-v1demo")
